"""A full disk ends the job as Failed, says so, and leaves everything readable (issue 16 item 6).

The job store (with the hook's LocalPath inside it) or the output folder sits on a 3 MB
tmpfs where the machine allows mounting one; otherwise the storage layer's test-only
ENOSPC injection (``SAGEMAKER_DEBUGGER_EXT_TEST_DISK_LIMIT``) stands in, so these tests
always run. Before: ``fit()`` raised a raw ``OSError [Errno 28]``, the supervisor died
without a final state, every describe raised ``OSError`` trying to persist ``Failed``, and
empty ``.state.json.*.tmp`` files were left behind.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sagemaker_debugger_ext.trials import create_trial

SIZE = 3 << 20


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Path]]:
    """``make(name)``: a folder on a 3 MB file system (tmpfs, or an injected limit)."""
    mounted: list[Path] = []

    def make(name: str) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(folder)],
                              capture_output=True, check=False)  # fmt: skip
        if done.returncode == 0:
            mounted.append(folder)
        else:
            monkeypatch.setenv("SAGEMAKER_DEBUGGER_EXT_TEST_DISK_LIMIT", f"{folder}:{SIZE}")
        return folder

    yield make
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def _client(home: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    from sagemaker_debugger_ext.local import LocalTrainingClient

    monkeypatch.setenv("SAGEMAKER_DEBUGGER_EXT_HOME", str(home))
    return LocalTrainingClient(
        settings={"DebugRuleModule": "standin_rules", "StartMonitor": False, "SyncIntervalSeconds": 0.2},
        region="us-west-2",
    )


def _assert_readable_prefix(folder: Path) -> list[int]:
    """The steps written before the disk filled read back with their values."""
    trial = create_trial(folder, poll_interval_s=0.01, wait_timeout_s=2)
    steps = trial.tensor("big").steps()
    assert steps == list(range(len(steps))) and steps
    for step in (steps[0], steps[-1]):
        np.testing.assert_array_equal(trial.tensor("big").value(step), np.full(64 * 256, step, dtype=np.float32))
    return steps


def test_job_store_disk_fills_mid_training(small_disk, make_request, standin_path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The hook's LocalPath (inside the job store) fills: Failed, the reason says where, describe works."""
    home = small_disk("home")
    client = _client(home, monkeypatch)
    client.create_training_job(**make_request("full-store", hps={"steps": "400", "tensor-kb": "64"}))
    desc = client.wait("full-store", timeout_s=120)
    assert desc["TrainingJobStatus"] == "Failed", desc.get("FailureReason")
    reason = desc["FailureReason"]
    assert reason.startswith("ClientError: the disk is full") and str(home) in reason, reason
    for _ in range(3):  # reading never needs writing
        assert client.describe_training_job(TrainingJobName="full-store")["TrainingJobStatus"] == "Failed"
    assert [j["TrainingJobName"] for j in client.list_training_jobs()["TrainingJobSummaries"]] == ["full-store"]
    assert not [p for p in home.rglob("*") if p.name.endswith(".tmp")]
    job = client.store.paths("full-store")
    assert not (job.root / ".disk-reserve").exists()
    steps = _assert_readable_prefix(job.debug_dir)
    assert 0 < len(steps) < 400


def test_output_folder_fills(small_disk, make_request, standin_path, tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The output folder (file://) fills while artifacts are copied: Failed, naming the folder."""
    out = small_disk("out")
    client = _client(tmp_path / "home", monkeypatch)
    client.create_training_job(**make_request("full-out", hps={"steps": "80", "tensor-kb": "64"}, output=out.as_uri()))
    desc = client.wait("full-out", timeout_s=120)
    assert desc["TrainingJobStatus"] == "Failed", desc.get("FailureReason")
    assert "the disk is full" in desc["FailureReason"] and str(out) in desc["FailureReason"]
    assert not [p for p in out.rglob("*") if p.name.endswith((".tmp", ".part"))]
    job = client.store.paths("full-out")
    assert _assert_readable_prefix(job.debug_dir) == list(range(80))  # the local copy is whole
    _assert_readable_prefix(out / "full-out" / "debug-output")  # what reached the output reads back


def _fill(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Leave no room in ``folder`` (on the tmpfs; with the injected limit, in this process too)."""
    from sagemaker_debugger_ext.format import _files

    if "SAGEMAKER_DEBUGGER_EXT_TEST_DISK_LIMIT" in os.environ:
        monkeypatch.setattr(_files, "_LIMIT", (str(folder), 0))
        return
    with open(folder / "filler", "wb") as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"\0" * 65536)
            fh.flush()


def test_describe_of_a_dead_supervisor_on_a_full_disk(
    small_disk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job whose supervisor vanished reads as Failed although its state cannot be saved."""
    from sagemaker_debugger_ext._exceptions import DiskFullError
    from sagemaker_debugger_ext.local._job_store import atomic_write_json

    home = small_disk("home")
    client = _client(home, monkeypatch)
    job = client.store.create("ghost", {"TrainingJobName": "ghost"})
    job.supervisor_pid.write_text("999999999")
    atomic_write_json(job.state, {"TrainingJobStatus": "InProgress", "SecondaryStatus": "Training"})
    _fill(home, monkeypatch)
    with pytest.raises(DiskFullError, match=rf"the disk is full: no space left on device writing {home}"):
        atomic_write_json(job.state, {"x": 1})
    for _ in range(2):
        desc = client.describe_training_job(TrainingJobName="ghost")
        assert desc["TrainingJobStatus"] == "Failed" and "exited unexpectedly" in desc["FailureReason"]
    assert not [p for p in home.rglob("*") if p.name.endswith(".tmp")]


def test_injected_limit_stands_in_for_a_small_disk(tmp_path: Path) -> None:
    """The fallback used where tmpfs cannot be mounted: same DiskFullError, nothing left behind."""
    import sys

    script = (
        "import sys\n"
        "from sagemaker_debugger_ext.format._files import atomic_write\n"
        "for i in range(100):\n"
        "    atomic_write(sys.argv[1] + f'/f{i}.bin', b'x' * 4096)\n"
    )
    env = {**os.environ, "SAGEMAKER_DEBUGGER_EXT_TEST_DISK_LIMIT": f"{tmp_path}:40000"}
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=env, capture_output=True, text=True,
                          check=False, timeout=120)  # fmt: skip
    assert done.returncode == 1
    assert f"DiskFullError: the disk is full: no space left on device writing {tmp_path}/f9.bin" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"f{i}.bin" for i in range(9))
