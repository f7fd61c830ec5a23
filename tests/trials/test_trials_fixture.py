"""The reader against the real smdebug-written runs in tests/fixtures."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext.exceptions import (
    NoMoreData,
    StepUnavailable,
    TensorUnavailable,
    TensorUnavailableForStep,
)
from sagemaker_debugger_ext.trials import StepState, create_trial, modes

ORACLE = Path(__file__).resolve().parents[1] / "oracle_scripts" / "smdebug_oracle.py"


@pytest.fixture(scope="module")
def sample_trial(smdebug_runs: Path):  # type: ignore[no-untyped-def]
    """The PyTorch-hook sample run (8 steps, TRAIN/EVAL, reductions)."""
    return create_trial(str(smdebug_runs / "sample_run"), poll_interval_s=0.01, wait_timeout_s=1)


def test_steps_modes_workers(sample_trial) -> None:  # type: ignore[no-untyped-def]
    """Steps per mode and the global/mode step mapping match reference §3."""
    t = sample_trial
    assert t.steps() == list(range(8))
    assert t.steps(mode=modes.TRAIN) == [0, 1, 2, 3, 4, 5]
    assert t.steps(mode=modes.EVAL) == [0, 1]
    assert set(t.modes()) == {modes.TRAIN, modes.EVAL}
    assert t.workers() == ["worker_0"]
    assert [(t.mode(g), t.mode_step(g)) for g in (4, 5, 6)] == [(modes.EVAL, 0), (modes.EVAL, 1), (modes.TRAIN, 4)]
    assert t.global_step(modes.TRAIN, 5) == 7 and t.loaded_all_steps


def test_tensor_names_filters(sample_trial) -> None:  # type: ignore[no-untyped-def]
    """collection=, mode=, step= and regex= filters give smdebug's answers."""
    t = sample_trial
    assert t.tensor_names(collection="losses") == ["CrossEntropyLoss_output_0"]
    assert len(t.tensor_names(mode=modes.EVAL)) == 4
    assert t.tensor_names(step=1) == ["CrossEntropyLoss_output_0", "scalar/lr"]
    assert t.tensor_names(regex="^gradient") == [f"gradient/Net_fc{i}.{p}" for i in (1, 2) for p in ("bias", "weight")]
    assert "relu_output_0" in t.tensor_names() and "my_custom" in t.tensor_names()
    assert set(t.collections()) == {"all", "biases", "default", "gradients", "losses", "relu_output", "weights"}


def test_values_and_reductions(sample_trial) -> None:  # type: ignore[no-untyped-def]
    """Raw values have the layer shapes; reductions-only steps raise with a hint."""
    t = sample_trial
    w = t.tensor("Net_fc1.weight")
    assert w.steps() == [0, 2, 4, 6] and w.value(2).shape == (3, 4) and w.value(2).dtype == np.float32
    assert w.steps(mode=modes.TRAIN) == [0, 2, 4]
    np.testing.assert_array_equal(w.value(0, mode=modes.EVAL), w.value(4))
    relu = t.tensor("relu_output_0")
    assert relu.steps() == [0, 2, 3, 4, 6]
    with pytest.raises(TensorUnavailableForStep, match="reductions were saved") as info:
        relu.value(3)
    assert info.value.has_reductions
    assert relu.has_reductions(3) is True
    red = relu.reduction_values(3)
    assert set(red) == {("mean", False), ("max", False), ("l2", False), ("mean", True)}
    assert relu.reduction_value(3, "max") == red[("max", False)]
    fro = float(np.sqrt((w.value(2).astype(np.float64) ** 2).sum()))
    assert float(w.reduction_value(2, "l2")) == pytest.approx(fro, rel=1e-6)  # flattened (Frobenius) norm
    assert t.tensor("scalar/lr").value(1).shape == (1,)


def test_step_states_and_errors(sample_trial) -> None:  # type: ignore[no-untyped-def]
    """Skipped steps, steps beyond the end and unknown tensors raise smdebug's exceptions."""
    t = sample_trial
    assert t.has_passed_step(3) == StepState.AVAILABLE
    assert t.has_passed_step(99) == StepState.UNAVAILABLE
    w = t.tensor("Net_fc1.weight")
    with pytest.raises(TensorUnavailableForStep):
        w.value(1)
    with pytest.raises(StepUnavailable):  # smdebug: beyond the end of a finished job
        w.value(50)
    with pytest.raises(TensorUnavailable):
        t.tensor("nope")
    with pytest.raises(NoMoreData, match="last step available is 1"):
        t.wait_for_steps([2], mode=modes.EVAL)
    with pytest.raises(NoMoreData, match="last step available is 7"):
        t.wait_for_steps([100])
    t.wait_for_steps([0, 7])
    assert w.prev_steps(5) == [0, 2, 4] and w.prev_steps(6, n=2) == [4, 6]


def test_min_run_value(smdebug_runs: Path) -> None:
    """The one-tensor run of reference §2.4 reads back t=[1,2,3] at TRAIN step 3."""
    t = create_trial(smdebug_runs / "sample_run_min", poll_interval_s=0.01, wait_timeout_s=1)
    assert t.steps() == [7] and t.steps(mode=modes.TRAIN) == [3]
    assert t.tensor("t").value(3, mode=modes.TRAIN).tolist() == [1.0, 2.0, 3.0]


RUNS = ["sample_run", "sample_run_min"]


@pytest.fixture(scope="module")
def smdebug_dumps(smdebug_python: Path, smdebug_runs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """smdebug's view of every fixture run, dumped by real smdebug in one subprocess."""
    out = tmp_path_factory.mktemp("smdebug-dumps")
    cmds = out / "cmds.json"
    cmds.write_text(json.dumps([["dump", str(smdebug_runs / run), str(out / run)] for run in RUNS]))
    proc = subprocess.run([str(smdebug_python), str(ORACLE), "batch", str(cmds)],
                          capture_output=True, text=True, timeout=180, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.mark.parametrize("run", RUNS)
def test_matches_smdebug_exactly(smdebug_dumps: Path, smdebug_runs: Path, run: str) -> None:
    """Names, steps per mode, workers, every value and every stored reduction equal smdebug's."""
    info = json.loads((smdebug_dumps / f"{run}.json").read_text())
    ref = np.load(smdebug_dumps / f"{run}.npz")
    t = create_trial(smdebug_runs / run, poll_interval_s=0.01, wait_timeout_s=1)
    assert t.steps() == info["steps"]
    assert {m.name: t.steps(mode=m) for m in t.modes()} == info["steps_by_mode"]
    assert t.workers() == info["workers"]
    assert t.tensor_names() == info["tensor_names"]
    assert sorted(t.collections()) == info["collections"]
    compared = 0
    for name, entry in info["tensors"].items():
        tensor = t.tensor(name)
        assert tensor.steps() == entry["steps"], name
        assert {m: tensor.steps(mode=modes.ModeKeys[m]) for m in entry["by_mode"]} == entry["by_mode"], name
        for step, ok in entry["values"].items():
            s = int(step)
            assert tensor.workers(s) == entry[f"workers_{step}"]
            if ok is True:
                got, exp = tensor.value(s), ref[f"{name}|{step}"]
                assert got.dtype == exp.dtype and got.shape == exp.shape
                np.testing.assert_array_equal(got, exp)
                compared += 1
            else:
                with pytest.raises(TensorUnavailableForStep):
                    tensor.value(s)
            reds = {k: v for k, v in ref.items() if k.startswith(f"{name}|{step}|red|")}
            ours = tensor.reduction_values(s)
            assert len(ours) == len(reds)
            for key, exp in reds.items():
                op, absval = key.split("|")[3], bool(int(key.split("|")[4]))
                np.testing.assert_array_equal(ours[(op, absval)], exp)
                compared += 1
    assert compared >= (40 if run == "sample_run" else 1)
