"""The generic hook in a plain Python loop: steps, modes, collections, outputs."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext.hooks import (
    Hook,
    HookConfigError,
    InvalidCollectionConfiguration,
    ModeKeys,
    ReductionConfig,
    SaveConfig,
    SaveConfigMode,
    TrainingContext,
)


def _hook(tmp_path: Path, **kw: object) -> Hook:
    kw.setdefault("context", TrainingContext())
    return Hook(out_dir=tmp_path / "run", **kw)  # type: ignore[arg-type]


def test_steps_and_modes_follow_schedule(tmp_path: Path, read_run) -> None:
    """Global steps count across modes; each mode has its own step count and schedule."""
    hook = _hook(
        tmp_path,
        save_config=SaveConfig(
            mode_save_configs={
                ModeKeys.TRAIN: SaveConfigMode(save_interval=2),
                ModeKeys.EVAL: SaveConfigMode(save_interval=1),
            }
        ),
        include_collections=["weights"],
    )
    hook.set_mode(ModeKeys.TRAIN)
    for i in range(4):
        hook.advance_step()
        hook.record_tensor_value("fc.weight", np.full((2, 2), i, dtype=np.float32))
    hook.set_mode(ModeKeys.EVAL)
    for i in range(2):
        hook.advance_step()
        hook.record_tensor_value("fc.weight", np.full((2, 2), 10 + i, dtype=np.float32))
    hook.close()
    run = read_run(tmp_path / "run")
    index = run.index()
    assert sorted(index) == [0, 2, 4, 5]
    assert [(index[g]["meta"]["mode"], index[g]["meta"]["mode_step"]) for g in (0, 2, 4, 5)] == [
        ("TRAIN", 0),
        ("TRAIN", 2),
        ("EVAL", 0),
        ("EVAL", 1),
    ]
    np.testing.assert_array_equal(run.value(2, "fc.weight"), np.full((2, 2), 2, dtype=np.float32))
    t = run.tensors()[(5, "fc.weight")]
    assert (t.mode, t.mode_step, float(t.value[0, 0])) == (ModeKeys.EVAL, 1, 11.0)
    assert (tmp_path / "run" / "training_job_end.ts").exists()


def test_gradients_never_saved_in_eval(tmp_path: Path, read_run) -> None:
    """The gradients collection is skipped in EVAL and PREDICT even when its schedule is due."""
    hook = _hook(tmp_path, save_config=SaveConfig(save_interval=1), include_collections=["gradients", "weights"])
    for mode in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
        hook.set_mode(mode)
        hook.advance_step()
        hook.record_tensor_value("gradient/w", np.ones(3))
        hook.record_tensor_value("w.weight", np.ones(3))
    hook.close()
    run = read_run(tmp_path / "run")
    assert run.names_at(0) == ["gradient/w", "w.weight"]
    assert run.names_at(1) == ["w.weight"]
    assert run.names_at(2) == ["w.weight"]


def test_collections_json_written_early_and_refreshed(tmp_path: Path, read_run) -> None:
    """The collections file appears after the first saved step and lists late tensors after close."""
    hook = _hook(tmp_path, save_config=SaveConfig(save_interval=1), include_collections=["weights"])
    hook.advance_step()
    hook.record_tensor_value("a.weight", np.ones(2))
    hook.advance_step()  # closes step 0
    coll_file = tmp_path / "run/collections/000000000/worker_0_collections.json"
    early = json.loads(coll_file.read_text())
    assert early["collections"]["weights"]["tensor_names"] == ["a.weight"]
    assert early["_meta"] == {"num_workers": 1}
    hook.record_tensor_value("b.weight", np.ones(2))
    hook.save_tensor("late", np.arange(3), "brand_new")
    hook.close()
    late = read_run(tmp_path / "run").collections()["collections"]
    assert late["weights"]["tensor_names"] == ["a.weight", "b.weight"]
    assert late["brand_new"]["tensor_names"] == ["late"]
    assert late["brand_new"]["save_config"]["TRAIN"]["save_interval"] == 1


def test_save_tensor_waits_for_a_due_step(tmp_path: Path, read_run) -> None:
    """save_tensor values go into the first due step of their collection (new names allowed)."""
    hook = _hook(tmp_path, save_config=SaveConfig(save_interval=2), include_collections=["weights"])
    hook.advance_step()  # 0
    hook.advance_step()  # 1 (not due)
    hook.save_tensor("my_custom", np.arange(6.0).reshape(2, 3), "default")
    hook.save_tensor("other", np.ones(1), ["new_coll"])
    hook.advance_step()  # 2 (due)
    hook.close()
    run = read_run(tmp_path / "run")
    assert sorted(run.names_at(2)) == ["my_custom", "other"]
    np.testing.assert_array_equal(run.value(2, "my_custom"), np.arange(6.0).reshape(2, 3))


def test_save_scalar_written_every_step(tmp_path: Path, read_run) -> None:
    """save_scalar writes scalar/<name> into the current step even when nothing else is due."""
    hook = _hook(tmp_path, save_config=SaveConfig(save_interval=100))
    for i in range(3):
        hook.advance_step()
        hook.save_scalar("lr", 0.1 * i)
    hook.close()
    run = read_run(tmp_path / "run")
    assert [run.names_at(g) for g in (0, 1, 2)] == [["scalar/lr"]] * 3
    assert run.value(2, "scalar/lr").tolist() == [pytest.approx(0.2)]
    assert "scalar/lr" in run.collections()["collections"]["scalars"]["tensor_names"]
    with pytest.raises(HookConfigError, match="scalar"):
        hook.save_scalar("bad", [1, 2])


def test_reductions_replace_raw_unless_asked(tmp_path: Path, read_run) -> None:
    """With reductions only reductions are written; save_raw_tensor and save_shape add raw and shape."""
    hook = _hook(
        tmp_path,
        save_config=SaveConfig(save_interval=1),
        include_collections=["weights", "biases"],
        reduction_config=ReductionConfig(reductions=["mean"], abs_norms=["l2"]),
    )
    hook.get_collection("biases").reduction_config = ReductionConfig(
        norms=["l1"], save_raw_tensor=True, save_shape=True
    )
    x = np.array([[1.0, -2.0], [-3.0, 4.0]], dtype=np.float32)
    hook.advance_step()
    hook.record_tensor_value("fc.weight", x)
    hook.record_tensor_value("fc.bias", x)
    hook.close()
    run = read_run(tmp_path / "run")
    names = run.names_at(0)
    assert names == [
        "smdebug/reductions/mean/fc.weight",
        "smdebug/reductions/abs_l2/fc.weight",
        "smdebug/reductions/l1/fc.bias",
        "fc.bias",
    ]
    assert float(run.value(0, "smdebug/reductions/abs_l2/fc.weight")) == pytest.approx(np.sqrt(30))
    assert run.index()[0]["shape_payload"] == [{"tensorname": "fc.bias", "originalname": "fc.bias", "shape": [2, 2]}]


def test_unknown_collection_without_regex_fails_at_first_step(tmp_path: Path) -> None:
    """A configured collection with nothing to match raises InvalidCollectionConfiguration at step 0."""
    hook = _hook(tmp_path, include_collections=["mystery"])
    hook.get_collection("mystery")
    with pytest.raises(InvalidCollectionConfiguration, match="mystery"):
        hook.advance_step()


def test_unconfigured_collection_is_not_checked_by_a_bare_close(tmp_path: Path) -> None:
    """smdebug's docs/api.md snippet: a collection with nothing to match, closed before any step, is fine."""
    hook = _hook(tmp_path, include_collections=["metrics_like"])
    hook.add_collection(hook.get_collection("mine"))
    hook.close()
    assert (tmp_path / "run" / "collections" / "000000000" / "worker_0_collections.json").exists()


def test_include_regex_and_save_all(tmp_path: Path, read_run) -> None:
    """include_regex feeds the default collection (re.search); save_all saves everything."""
    hook = _hook(tmp_path / "a", save_config=SaveConfig(save_interval=1), include_regex=["relu"])
    hook.advance_step()
    hook.record_tensor_value("block_relu_output_0", np.ones(2))
    hook.record_tensor_value("fc_output_0", np.ones(2))
    hook.close()
    assert read_run(tmp_path / "a" / "run").names_at(0) == ["block_relu_output_0"]
    hook = _hook(tmp_path / "b", save_config=SaveConfig(save_interval=1), save_all=True)
    hook.advance_step()
    hook.record_tensor_value("anything", np.ones(2))
    hook.close()
    assert read_run(tmp_path / "b" / "run").names_at(0) == ["anything"]


def test_include_workers_one_silences_other_ranks(tmp_path: Path) -> None:
    """With include_workers='one' only worker_0 writes; with 'all' every rank writes its files."""
    quiet = Hook(
        out_dir=tmp_path / "one",
        save_config=SaveConfig(save_interval=1),
        save_all=True,
        context=TrainingContext(rank=1, world_size=2),
    )
    quiet.advance_step()
    quiet.record_tensor_value("x", np.ones(1))
    quiet.close()
    assert not (tmp_path / "one").exists()
    loud = Hook(
        out_dir=tmp_path / "all",
        save_config=SaveConfig(save_interval=1),
        save_all=True,
        include_workers="all",
        context=TrainingContext(rank=1, world_size=2),
    )
    loud.advance_step()
    loud.record_tensor_value("x", np.ones(1))
    loud.close()
    assert (tmp_path / "all/events/000000000000/000000000000_worker_1.tfevents").exists()
    meta = json.loads((tmp_path / "all/collections/000000000/worker_1_collections.json").read_text())["_meta"]
    assert meta == {"num_workers": 2}
    assert not (tmp_path / "all/training_job_end.ts").exists()


def test_sagemaker_job_leaves_end_marker_to_platform(tmp_path: Path) -> None:
    """In a SageMaker-style job (TRAINING_JOB_NAME) the hook does not write training_job_end.ts."""
    hook = Hook(out_dir=tmp_path / "run", save_all=True, context=TrainingContext(sagemaker_job=True))
    hook.advance_step()
    hook.record_tensor_value("x", np.ones(1))
    hook.close()
    assert (tmp_path / "run/events").exists()
    assert not (tmp_path / "run/training_job_end.ts").exists()


def test_finished_out_dir_is_refused(tmp_path: Path) -> None:
    """An out_dir holding training_job_end.ts from a finished run is refused, naming out_dir."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run/training_job_end.ts").write_text("")
    with pytest.raises(HookConfigError, match="'out_dir'"):
        _hook(tmp_path)
    with pytest.raises(HookConfigError, match="local folder"):
        Hook(out_dir="s3://bucket/run", context=TrainingContext())


def test_bad_mode_and_workers_values(tmp_path: Path) -> None:
    """Bad include_workers and set_mode values raise HookConfigError naming the field."""
    with pytest.raises(HookConfigError, match="include_workers"):
        _hook(tmp_path, include_workers="few")
    with pytest.raises(HookConfigError, match="'mode'"):
        _hook(tmp_path).set_mode(7)  # type: ignore[arg-type]


def test_never_crash_guard_logs_and_stops(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """With never_crash a failure inside the hook is logged at warning and saving stops."""
    hook = _hook(tmp_path, include_collections=["mystery"], never_crash=True)
    hook.get_collection("mystery")
    with caplog.at_level(logging.WARNING, logger="sagemaker_debugger_ext.hooks"):
        hook.advance_step()  # would raise InvalidCollectionConfiguration
        hook.advance_step()
    assert "stops saving" in caplog.text
    assert hook.step == -1


def test_tensorboard_export_read_by_event_accumulator(tmp_path: Path) -> None:
    """Scalars and histograms land in TensorBoard files that TensorBoard's reader loads."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    hook = _hook(
        tmp_path,
        save_config=SaveConfig(save_interval=1),
        include_collections=["weights", "losses"],
        tensorboard_dir=tmp_path / "tb",
    )
    hook.set_mode(ModeKeys.TRAIN)
    for i in range(3):
        hook.advance_step()
        hook.record_tensor_value("fc.weight", np.linspace(-1, 1, 50) * (i + 1))
        hook.record_tensor_value("CrossEntropyLoss_output_0", np.float32(1.0 / (i + 1)))
        hook.save_scalar("lr", 0.5)
    hook.close()
    acc = EventAccumulator(str(tmp_path / "tb" / "TRAIN"), size_guidance={"histograms": 0, "scalars": 0})
    acc.Reload()
    tags = acc.Tags()
    assert "weights/fc.weight" in tags["histograms"]
    assert {"CrossEntropyLoss_output_0", "scalar/lr"} <= set(tags["scalars"])
    losses = acc.Scalars("CrossEntropyLoss_output_0")
    assert [e.step for e in losses] == [0, 1, 2]
    assert losses[2].value == pytest.approx(1 / 3)
    hist = acc.Histograms("weights/fc.weight")
    assert hist[1].histogram_value.max == pytest.approx(2.0)


def test_mode_switch_before_next_step_keeps_step_mode(tmp_path: Path, read_run) -> None:
    """A value saved after set_mode(EVAL) but before the next step belongs to the TRAIN step."""
    hook = _hook(tmp_path, save_config=SaveConfig(save_interval=1))
    hook.set_mode(ModeKeys.TRAIN)
    hook.advance_step()
    hook.set_mode(ModeKeys.EVAL)
    hook.save_scalar("acc", 0.5)
    hook.advance_step()
    hook.close()
    index = read_run(tmp_path / "run").index()
    assert (index[0]["meta"]["mode"], index[0]["meta"]["mode_step"]) == ("TRAIN", 0)
    assert [p["tensorname"] for p in index[0]["tensor_payload"]] == ["scalar/acc"]


def test_collection_save_config_accepts_mode_dict(tmp_path: Path, read_run) -> None:
    """coll.save_config = {TRAIN: SaveConfigMode(...)} works as in smdebug; other modes keep the hook's."""
    hook = _hook(tmp_path, save_config=SaveConfig(save_interval=1), include_collections=["weights"])
    hook.get_collection("weights").save_config = {ModeKeys.TRAIN: SaveConfigMode(save_interval=2)}
    for mode in (ModeKeys.TRAIN, ModeKeys.TRAIN, ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.EVAL):
        hook.set_mode(mode)
        hook.advance_step()
        hook.record_tensor_value("a.weight", np.ones(1))
    hook.close()
    assert sorted(read_run(tmp_path / "run").index()) == [0, 2, 3, 4]


def test_failed_background_write_surfaces_at_close_and_is_contained_with_never_crash(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A step whose files cannot be written (here ``events`` is a file, not a folder) fails
    on the writer thread: the error is raised as StorageError from the training thread (at
    the next hand-over or at close); with never_crash it is logged and training goes on."""
    from sagemaker_debugger_ext._exceptions import StorageError

    def run(root: Path, **kw: object) -> Hook:
        (root / "run").mkdir(parents=True)
        (root / "run" / "events").write_text("not a folder")
        hook = _hook(root, save_config=SaveConfig(save_interval=1), include_collections=["weights"], **kw)
        for i in range(3):
            hook.advance_step()
            hook.record_tensor_value("fc.weight", np.full(4, i, np.float32))
        return hook

    with pytest.raises(StorageError, match="background write failed"):  # in the loop or at close
        run(tmp_path / "strict").close()
    with caplog.at_level(logging.WARNING, logger="sagemaker_debugger_ext.hooks"):
        run(tmp_path / "lenient", never_crash=True).close()
    assert "stops saving" in caplog.text
