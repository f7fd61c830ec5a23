"""``bench_format``'s runs of the smdebug baseline: a run that smdebug's own reader fails with
``InvalidWorker`` is run again; any other failure, or one that keeps failing, is raised."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks import bench_format

_BASELINE = """
import pathlib, sys
count = pathlib.Path(sys.argv[1])
tries = int(count.read_text()) + 1 if count.exists() else 1
count.write_text(str(tries))
if tries <= int(sys.argv[2]):
    sys.exit("smdebug.exceptions." + sys.argv[3] + ": worker_0")
print('{"create_trial_s": 0.5, "read_s": 1.5, "read_cpu_s": 1.25}')
"""


@pytest.fixture
def baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for smdebug's baseline script that fails its first runs (the real smdebug
    fails at random, about one run in ten)."""
    script = tmp_path / "baseline.py"
    script.write_text(_BASELINE)
    monkeypatch.setattr(bench_format, "SMDEBUG_PY", Path(sys.executable))
    monkeypatch.setattr(bench_format, "BASELINE", script)
    return tmp_path / "tries"


def test_an_invalid_worker_failure_is_run_again(baseline: Path) -> None:
    assert bench_format._smdebug(str(baseline), "2", "InvalidWorker") == {
        "create_trial_s": 0.5, "read_s": 1.5, "read_cpu_s": 1.25,
    }  # fmt: skip
    assert baseline.read_text() == "3"


def test_other_failures_and_repeated_ones_are_raised(baseline: Path) -> None:
    with pytest.raises(RuntimeError, match=r"try 1\).*TensorUnavailable"):
        bench_format._smdebug(str(baseline), "1", "TensorUnavailable")
    baseline.unlink()
    with pytest.raises(RuntimeError, match=r"try 3\).*InvalidWorker"):
        bench_format._smdebug(str(baseline), "5", "InvalidWorker")
    assert baseline.read_text() == "3"
