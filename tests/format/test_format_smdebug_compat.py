"""Byte compatibility with real smdebug 1.0.34 (run in .venv-smdebug as an oracle)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext.format import StepWriter
from sagemaker_debugger_ext.modes import ModeKeys

ORACLE = Path(__file__).resolve().parents[1] / "oracle_scripts" / "smdebug_oracle.py"
WALL_TIME = 1700000000.25
# dtypes smdebug 1.0.34 can write; all are compared byte for byte.
WRITABLE = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
            "uint32", "uint64", "bool", "complex64", "complex128"]  # fmt: skip
# dtypes smdebug 1.0.34 reads back correctly (reference §2.5).
READABLE = {"float16", "float32", "float64", "int32", "int64", "uint8", "bool", "complex128"}


def _spec() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    arrays: dict[str, np.ndarray] = {}
    for dt in WRITABLE:
        v = (rng.normal(size=(2, 3)) * 40).astype(dt)
        arrays[f"t_{dt}"] = v + 1j * v if dt.startswith("complex") else v
    arrays["layer|weight:0"] = rng.normal(size=(4,)).astype(np.float32)
    arrays["zero_d"] = np.array(3.5, np.float32)
    arrays["empty"] = np.zeros((0, 3), np.float32)
    arrays["strings"] = np.array(["alpha", "béta", ""])
    arrays["big"] = rng.normal(size=(300,)).astype(np.float64)
    arrays['naïve "quoted" name'] = np.arange(3, dtype=np.int64)  # JSON escaping in the index
    return arrays


def _readable() -> dict[str, np.ndarray]:
    arrays = {k: v for k, v in _spec().items() if k.split("_", 1)[-1] in READABLE or not k.startswith("t_")}
    arrays.pop("empty")  # smdebug cannot read an empty float tensor (it raises on no float_val)
    return arrays


@pytest.fixture(scope="module")
def oracle(smdebug_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One smdebug subprocess: it writes the spec tensors, and dumps a trial our writer wrote."""
    from sagemaker_debugger_ext.format import write_collections_file, write_training_end

    work = tmp_path_factory.mktemp("oracle")
    np.savez(work / "spec.npz", **_spec())
    trial = work / "ours_trial"
    for step, (mode, mode_step) in enumerate([(ModeKeys.TRAIN, 0), (ModeKeys.TRAIN, 1), (ModeKeys.EVAL, 0)]):
        with StepWriter(trial, global_step=step, worker="worker_0", mode=mode, mode_step=mode_step) as w:
            for name, value in _readable().items():
                w.write_tensor(name.replace("|", "/"), value)
    write_collections_file(trial, "worker_0", {}, 1)
    write_training_end(trial)
    cmds = [["write", str(work / "theirs"), str(work / "spec.npz"), "12", "EVAL", "4", str(WALL_TIME)],
            ["dump", str(trial), str(work / "dump")]]  # fmt: skip
    (work / "cmds.json").write_text(json.dumps(cmds))
    proc = subprocess.run([str(smdebug_python), str(ORACLE), "batch", str(work / "cmds.json")],
                          capture_output=True, text=True, timeout=180, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return work


def test_writer_bytes_identical_to_smdebug(oracle: Path, tmp_path: Path) -> None:
    """For every dtype, 0-d, empty and string tensors, our event and index files equal smdebug's."""
    with StepWriter(tmp_path / "ours", global_step=12, worker="worker_0", mode=ModeKeys.EVAL, mode_step=4,
                    clock=lambda: WALL_TIME) as w:  # fmt: skip
        for name, value in _spec().items():
            w.write_tensor(name.replace("|", "/"), value)
    for rel in ("events/000000000012/000000000012_worker_0.tfevents", "index/000000000/000000000012_worker_0.json"):
        assert (tmp_path / "ours" / rel).read_bytes() == (oracle / "theirs" / rel).read_bytes(), rel


def test_smdebug_reads_what_we_write(oracle: Path) -> None:
    """smdebug's create_trial returns our values (every dtype it can read), steps and modes."""
    arrays = _readable()
    info = json.loads((oracle / "dump.json").read_text())
    vals = np.load(oracle / "dump.npz")
    assert info["steps"] == [0, 1, 2]
    assert info["steps_by_mode"] == {"TRAIN": [0, 1], "EVAL": [0]}
    assert sorted(info["tensor_names"]) == sorted(n.replace("|", "/") for n in arrays)
    for name, value in arrays.items():
        got = vals[f"{name.replace('|', '/')}|2"]
        expected = value.reshape(-1) if name == "zero_d" else value  # smdebug: 0-d comes back as shape ()
        np.testing.assert_array_equal(got.reshape(expected.shape), expected)
        assert got.dtype == value.dtype or value.dtype.kind == "U"
