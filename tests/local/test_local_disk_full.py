"""A full disk ends the job as Failed, says so, and leaves everything readable (issue 16 item 6).

The job store (with the hook's LocalPath inside it) or the output folder sits on a 3 MB
tmpfs where the machine allows mounting one; otherwise the storage layer's test-only
write guard (``format._files.set_write_guard``, installed in every process of the job by a
``sitecustomize`` on ``PYTHONPATH``) refuses writes past the size instead, so these tests always run. Before: ``fit()`` raised a raw ``OSError [Errno 28]``, the supervisor died
without a final state, every describe raised ``OSError`` trying to persist ``Failed``, and
empty ``.state.json.*.tmp`` files were left behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sagemaker_debugger_ext.trials import create_trial

SIZE = 3 << 20

# Installed in each process of a job (sitecustomize on PYTHONPATH) where no tmpfs can be mounted.
_GUARD = """
import contextlib, errno, os
from sagemaker_debugger_ext.format import _files


def _disk_limit(target, nbytes, folder={folder!r}, limit={limit!r}):
    if not os.path.abspath(target).startswith(os.path.abspath(folder) + os.sep):
        return
    used = 0
    for dirpath, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                used += os.lstat(os.path.join(dirpath, name)).st_size
    if used + nbytes > limit:
        raise OSError(errno.ENOSPC, "No space left on device (injected for a test)", target)


_files.set_write_guard(_disk_limit)
"""


def _limit_every_process(site: Path, folder: Path, limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every Python process started from here refuse writes under ``folder`` past ``limit`` bytes."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(_GUARD.format(folder=str(folder), limit=limit))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p))


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Path]]:
    """``make(name)``: a folder on a 3 MB file system (tmpfs, or an injected limit)."""
    mounted: list[Path] = []
    limited: list[Path] = []

    def make(name: str) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(folder)],
                              capture_output=True, check=False)  # fmt: skip
        if done.returncode == 0:
            mounted.append(folder)
        else:
            _limit_every_process(tmp_path / f"site-{name}", folder, SIZE, monkeypatch)
            limited.append(folder)
        return folder

    make.limited = limited  # type: ignore[attr-defined]
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


@contextlib.contextmanager
def _full(folder: Path, limited: bool) -> Iterator[None]:
    """Leave no room in ``folder`` (on the tmpfs; with the write guard, in this process too)."""
    from sagemaker_debugger_ext.format import _files

    if limited:

        def refuse(target: str, nbytes: int) -> None:
            if os.path.abspath(target).startswith(str(folder) + os.sep):
                raise OSError(errno.ENOSPC, "No space left on device (injected for a test)", target)

        previous = _files.set_write_guard(refuse)
        try:
            yield
        finally:
            _files.set_write_guard(previous)
        return
    with open(folder / "filler", "wb") as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"\0" * 65536)
            fh.flush()
    yield


def test_describe_of_a_dead_supervisor_on_a_full_disk(
    small_disk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job whose supervisor vanished reads as Failed although its state cannot be saved."""
    from sagemaker_debugger_ext._exceptions import DiskFullError
    from sagemaker_debugger_ext.local.store._job_store import atomic_write_json

    home = small_disk("home")
    client = _client(home, monkeypatch)
    job = client.store.create("ghost", {"TrainingJobName": "ghost"})
    job.supervisor_pid.write_text("999999999")
    atomic_write_json(job.state, {"TrainingJobStatus": "InProgress", "SecondaryStatus": "Training"})
    with _full(home, home in small_disk.limited):
        with pytest.raises(DiskFullError, match=rf"the disk is full: no space left on device writing {home}"):
            atomic_write_json(job.state, {"x": 1})
        for _ in range(2):
            desc = client.describe_training_job(TrainingJobName="ghost")
            assert desc["TrainingJobStatus"] == "Failed" and "exited unexpectedly" in desc["FailureReason"]
    assert not [p for p in home.rglob("*") if p.name.endswith(".tmp")]


def test_write_guard_stands_in_for_a_small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback used where tmpfs cannot be mounted: same DiskFullError, nothing left behind."""
    import sys

    data = tmp_path / "data"
    data.mkdir()
    _limit_every_process(tmp_path / "site", data, 40000, monkeypatch)
    script = (
        "import sys\n"
        "from sagemaker_debugger_ext.format._files import atomic_write\n"
        "for i in range(100):\n"
        "    atomic_write(sys.argv[1] + f'/f{i}.bin', b'x' * 4096)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(data)], capture_output=True, text=True,
                          check=False, timeout=120)  # fmt: skip
    assert done.returncode == 1
    assert f"DiskFullError: the disk is full: no space left on device writing {data}/f9.bin" in done.stderr
    assert sorted(p.name for p in data.iterdir()) == sorted(f"f{i}.bin" for i in range(9))


_LOG_LOST = """
import os
if os.environ.get("SM_USER_ENTRY_POINT"):  # the training process: its log writes fail, as on the full disk
    _full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(_full, 1)
    os.dup2(_full, 2)
"""


def test_full_disk_named_when_the_training_log_is_lost(make_request, standin_path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The training's log cannot be written (its traceback is lost) and the disk has room again
    by the time the job ends: FailureReason still names the full disk, the file and the bytes
    free (the hook leaves them in the job's failure file). Before: 'AlgorithmError:
    ExecuteUserScriptError: algo-1 ExitCode 1 ErrorMessage "" Command ...'."""
    home = tmp_path / "home"
    home.mkdir()
    _limit_every_process(tmp_path / "site", home, SIZE, monkeypatch)
    with open(tmp_path / "site" / "sitecustomize.py", "a") as fh:
        fh.write(_LOG_LOST)
    client = _client(home, monkeypatch)
    request = make_request("lost-log", hps={"steps": "400", "tensor-kb": "64"})
    request["HyperParameters"]["sagemaker_program"] = '"train_hook_steps.py"'  # saves through a real hook
    client.create_training_job(**request)
    desc = client.wait("lost-log", timeout_s=120)
    assert desc["TrainingJobStatus"] == "Failed", desc.get("FailureReason")
    reason = desc["FailureReason"]
    assert reason.startswith("ClientError: the disk is full"), reason
    assert "no space left on device writing " + str(home) in reason and "bytes free" in reason, reason
    job = client.store.paths("lost-log")
    assert 0 < len(_assert_readable_prefix(job.debug_dir)) < 400
