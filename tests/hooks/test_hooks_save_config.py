"""Save schedules, reductions and JSON parsing with smdebug 1.0.34's semantics (reference §1.3-1.4)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext._reductions import compute_reduction
from sagemaker_debugger_ext.hooks import (
    HookConfigError,
    ModeKeys,
    ReductionConfig,
    SaveConfig,
    SaveConfigMode,
    load_hook_settings,
    parse_hook_config,
)
from sagemaker_debugger_ext.hooks._reduction_config import reduction_tensor_name

SCHEDULES = [
    # (save params, steps looked at, expected saved steps)
    ({"save_interval": "10", "start_step": "5", "end_step": "50", "save_steps": "1,2"}, 25, {1, 2, 10, 20}),
    ({"save_interval": "10", "start_step": "5", "end_step": "50", "save_steps": "1,2"}, 60, {1, 2, 10, 20, 30, 40}),
    ({}, 1001, {0, 500, 1000}),
    ({"save_interval": 4, "start_step": 3}, 13, {4, 8, 12}),
    ({"save_interval": "1", "end_step": "3"}, 10, {0, 1, 2}),
    ({"save_interval": "100", "end_step": "5", "save_steps": "7"}, 10, {0, 7}),
    ({"save_interval": "2", "save_steps": "0,3"}, 7, {0, 2, 3, 4, 6}),
]


@pytest.mark.parametrize(
    ("params", "n", "expected"),
    SCHEDULES,
    ids=[
        "verified-example",
        "verified-example-long",
        "default-500",
        "aligned-to-zero",
        "end-exclusive",
        "save-steps-outside-range",
        "union-sample-run",
    ],
)
def test_schedule_table(params: dict, n: int, expected: set[int]) -> None:
    """A mode step is saved per interval within [start, end) or when listed in save_steps."""
    cfg = parse_hook_config({"HookParameters": params}).save_config
    for mode in ModeKeys:
        assert {s for s in range(n) if cfg.should_save_step(mode, s)} == expected


@pytest.mark.parametrize(("params", "n", "expected"), SCHEDULES)
def test_next_save_step_is_the_next_step_the_schedule_saves(params: dict, n: int, expected: set[int]) -> None:
    """``next_save_step(after)`` (the hook's quiet steps rest on it) is the least saved step
    after ``after``, for every ``after`` before and around the schedule's saved steps."""
    schedule = parse_hook_config({"HookParameters": params}).save_config.get_save_config(ModeKeys.TRAIN)
    horizon = n + 2 * schedule.save_interval
    saved = [s for s in range(horizon) if schedule.should_save_step(s)]
    for after in range(-1, n):
        later = [s for s in saved if s > after]
        assert schedule.next_save_step(after) == (later[0] if later else None), after


def test_next_due_covers_every_schedule_and_skips_train_only_collections_in_eval() -> None:
    """Several schedules: the next due step is the earliest of theirs; gradients (train only)
    never make an EVAL step due."""
    import math

    from sagemaker_debugger_ext.hooks._collections import Collection
    from sagemaker_debugger_ext.hooks._due import DueCollections

    every3 = Collection("losses", save_config=SaveConfig(save_interval=3))
    grads = Collection("gradients", save_config=SaveConfig(save_interval=2, end_step=7))
    default = SaveConfig(save_interval=100)
    for coll in (every3, grads):
        coll.complete(default, ReductionConfig())
    due = DueCollections([every3, grads])
    for mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
        for after in range(-1, 20):
            brute = [s for s in range(after + 1, 40) if due.at(mode, s)]
            assert due.next_due(mode, after) == brute[0], (mode, after)
    assert due.next_due(ModeKeys.TRAIN, 5) == 6  # gradients at 6
    assert due.next_due(ModeKeys.EVAL, 5) == 6  # losses at 6 (3's multiple)
    assert due.next_due(ModeKeys.EVAL, 6) == 9
    ended = Collection("weights", save_config=SaveConfig(save_interval=2, end_step=4))
    ended.complete(default, ReductionConfig())
    assert DueCollections([ended]).next_due(ModeKeys.TRAIN, 3) == math.inf


def test_per_mode_merge_order_verified_example() -> None:
    """Hook per-mode values are overridden key by key by the collection's (reference §1.4)."""
    settings = parse_hook_config(
        {
            "HookParameters": {"save_interval": "10", "eval.save_interval": "3", "start_step": "5", "end_step": "50"},
            "CollectionConfigurations": [
                {"CollectionName": "weights", "CollectionParameters": {"train.save_interval": "7", "save_steps": "1,2"}}
            ],
        }
    )
    weights = settings.collections[0].save_config
    assert weights.get_save_config(ModeKeys.TRAIN) == SaveConfigMode(7, 5, 50, [1, 2])
    assert weights.get_save_config(ModeKeys.EVAL) == SaveConfigMode(3, 5, 50, [1, 2])
    assert weights.get_save_config(ModeKeys.PREDICT) == SaveConfigMode(10, 5, 50, [1, 2])
    assert settings.save_config.get_save_config(ModeKeys.EVAL) == SaveConfigMode(3, 5, 50, [])
    assert settings.save_config.get_save_config(ModeKeys.TRAIN) == SaveConfigMode(10, 5, 50, [])
    assert settings.include_collections == ("weights",)


def test_mode_prefix_overrides_plain_key_within_one_dict() -> None:
    """``global.save_interval`` beats ``save_interval`` for GLOBAL only."""
    cfg = parse_hook_config({"HookParameters": {"save_interval": "4", "global.save_interval": "6"}}).save_config
    assert cfg.get_save_config(ModeKeys.GLOBAL).save_interval == 6
    assert cfg.get_save_config(ModeKeys.TRAIN).save_interval == 4


def test_sample_run_config_matches_smdebug_collections_file(smdebug_runs: Path) -> None:
    """The sample config parses to the save configs smdebug exported for the same JSON."""
    config = json.loads((smdebug_runs / "sample_debughookconfig.json").read_text())
    settings = parse_hook_config(config)
    written = json.loads((smdebug_runs / "sample_run/collections/000000000/worker_0_collections.json").read_text())
    for cs in settings.collections:
        assert cs.save_config.to_json_dict() == written["collections"][cs.name]["save_config"], cs.name
    relu = next(c for c in settings.collections if c.name == "relu_output")
    assert relu.reduction_config is not None
    assert relu.reduction_config.to_json_dict() == written["collections"]["relu_output"]["reduction_config"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"save_interval": "ten"}, "HookParameters['save_interval']"),
        ({"train.save_interval": "0"}, "HookParameters['train.save_interval']"),
        ({"start_step": "-1"}, "HookParameters['start_step']"),
        ({"save_steps": "1,x"}, "HookParameters['save_steps']"),
        ({"reductions": "mean,median"}, "HookParameters['reductions']"),
        ({"reductions": "mean", "save_raw_tensor": "maybe"}, "HookParameters['save_raw_tensor']"),
        ({"save_all": "perhaps"}, "HookParameters['save_all']"),
        ({"include_workers": "some"}, "HookParameters['include_workers']"),
    ],
    ids=[
        "non-int",
        "zero-interval",
        "negative-start",
        "bad-steps",
        "unknown-reduction",
        "bad-bool",
        "bad-save-all",
        "bad-include-workers",
    ],
)
def test_bad_hook_parameter_names_the_key(params: dict, field: str) -> None:
    """A bad hook parameter raises HookConfigError naming the key and the value."""
    with pytest.raises(HookConfigError) as info:
        parse_hook_config({"HookParameters": params})
    assert field in str(info.value)
    assert isinstance(info.value, ValueError)


def test_bad_collection_parameter_names_the_collection() -> None:
    """A bad collection parameter names the collection and the key."""
    with pytest.raises(HookConfigError, match=r"CollectionConfigurations\['weights'\].*save_interval"):
        parse_hook_config(
            {
                "CollectionConfigurations": [
                    {"CollectionName": "weights", "CollectionParameters": {"save_interval": "x"}}
                ]
            }
        )


@pytest.mark.parametrize("value", [True, "true", "True", "1", 1], ids=["bool", "true", "True", "one-str", "one-int"])
def test_save_raw_tensor_accepts_sagemaker_strings(value: object) -> None:
    """save_raw_tensor / save_shape accept the strings SageMaker sends (smdebug rejected them)."""
    cfg = ReductionConfig.from_dict({"reductions": "abs_l2_norm", "save_raw_tensor": value, "save_shape": value})
    assert cfg.save_raw_tensor is True
    assert cfg.save_shape is True
    assert cfg.abs_norms == ("l2",)


def test_reduction_tokens_parse_like_smdebug() -> None:
    """Tokens split into reductions, norms and their abs_ variants, and serialise back."""
    cfg = ReductionConfig.from_dict({"reductions": "mean,max,abs_mean,l2_norm,abs_l1_norm"})
    assert (cfg.reductions, cfg.norms, cfg.abs_reductions, cfg.abs_norms) == (
        ("mean", "max"),
        ("l2",),
        ("mean",),
        ("l1",),
    )
    assert cfg.to_json_dict() == {
        "save_raw_tensor": False,
        "reductions": "mean,max,l2_norm,abs_mean,abs_l1_norm",
        "save_shape": False,
    }
    with pytest.raises(HookConfigError, match="reductions"):
        ReductionConfig(reductions=["median"])


def test_reductions_use_the_flattened_tensor() -> None:
    """Norms are vector norms of the flattened tensor (not matrix norms); abs applies first."""
    x = np.array([[1.0, -2.0], [-3.0, 4.0]], dtype=np.float32)
    assert compute_reduction("l2", x, is_abs=False) == pytest.approx(np.sqrt(30.0))
    assert compute_reduction("l1", x, is_abs=False) == pytest.approx(10.0)
    assert compute_reduction("mean", x, is_abs=True) == pytest.approx(2.5)
    assert compute_reduction("min", x, is_abs=False) == pytest.approx(-3.0)
    assert compute_reduction("variance", x, is_abs=False).dtype == np.float32
    assert reduction_tensor_name("relu_output_0", "l2", False) == "smdebug/reductions/l2/relu_output_0"
    assert reduction_tensor_name("a:0", "mean", True) == "smdebug/reductions/abs_mean/a"
    assert (
        reduction_tensor_name("d/kernel:0", "mean", False, keep_colon_index=True)
        == "smdebug/reductions/mean/d/kernel:0"
    )


def test_save_config_python_api() -> None:
    """SaveConfig(mode_save_configs=...) leaves other modes to the default, as smdebug."""
    cfg = SaveConfig(mode_save_configs={ModeKeys.TRAIN: SaveConfigMode(save_interval=3)})
    merged = cfg.merged_with(SaveConfig(save_interval=5))
    assert merged.get_save_config(ModeKeys.TRAIN).save_interval == 3
    assert merged.get_save_config(ModeKeys.EVAL).save_interval == 5
    with pytest.raises(HookConfigError, match="save_interval"):
        SaveConfigMode(save_interval="often")


def _write(path: Path, obj: object) -> Path:
    path.write_text(json.dumps(obj))
    return path


def test_json_file_resolution_and_tensorboard_outside_sagemaker(tmp_path: Path) -> None:
    """The env var names the file; outside SageMaker export_tensorboard without a dir uses <out>/tensorboard."""
    cfg = _write(
        tmp_path / "hook.json", {"LocalPath": str(tmp_path / "out"), "HookParameters": {"export_tensorboard": "true"}}
    )
    settings = load_hook_settings(None, {"SMDEBUG_CONFIG_FILE_PATH": str(cfg)})
    assert settings.out_dir == str(tmp_path / "out")
    assert settings.export_tensorboard is True
    assert settings.tensorboard_dir is None
    assert settings.sagemaker_job is False
    assert settings.include_collections is None


def test_sagemaker_job_takes_tensorboard_only_from_its_json(tmp_path: Path) -> None:
    """With TRAINING_JOB_NAME, TB is on iff tensorboardoutputconfig.json exists; hook params are ignored."""
    cfg = _write(tmp_path / "hook.json", {"HookParameters": {"export_tensorboard": "true", "tensorboard_dir": "/x"}})
    env = {
        "SMDEBUG_CONFIG_FILE_PATH": str(cfg),
        "TRAINING_JOB_NAME": "job",
        "TENSORBOARD_CONFIG_FILE_PATH": str(tmp_path / "missing.json"),
    }
    off = load_hook_settings(None, env)
    assert (off.export_tensorboard, off.tensorboard_dir, off.sagemaker_job) == (False, None, True)
    assert off.out_dir == "/opt/ml/output/tensors"
    tb = _write(tmp_path / "tb.json", {"LocalPath": str(tmp_path / "tb"), "S3OutputPath": "s3://b/p"})
    on = load_hook_settings(None, {**env, "TENSORBOARD_CONFIG_FILE_PATH": str(tb)})
    assert (on.export_tensorboard, on.tensorboard_dir) == (True, str(tmp_path / "tb"))


def test_missing_or_broken_json_file(tmp_path: Path) -> None:
    """A missing file raises FileNotFoundError (as smdebug); invalid JSON a HookConfigError."""
    with pytest.raises(FileNotFoundError, match="nope.json"):
        load_hook_settings(tmp_path / "nope.json", {})
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(HookConfigError, match="valid JSON"):
        load_hook_settings(bad, {})
