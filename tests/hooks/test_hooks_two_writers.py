"""Two writers on one trial folder, with real processes (issue 16 item 7).

Before: both processes used one ``<file>.tmp`` name (one died with StorageError when the
other renamed it away), otherwise the last writer silently won each step. Now temporary
names are unique per process, and a second writer of one worker in one folder is refused
at its first write with an error naming the folder and the holder; the first run is intact.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
from polling import wait_until

from sagemaker_debugger_ext.trials import create_trial

WRITER = textwrap.dedent("""
    import os, sys, threading
    from pathlib import Path
    import numpy as np
    from sagemaker_debugger_ext.hooks import Hook, SaveConfig, TrainingContext
    out, tag, ready, go = sys.argv[1], float(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
    hook = Hook(out_dir=out, context=TrainingContext(), save_config=SaveConfig(save_interval=1),
                include_collections=["weights"])
    for step in range(5):
        hook.advance_step()
        hook.record_tensor_value("w.weight", np.full((3,), tag + step, dtype=np.float32))
        if step == 1:
            ready.write_text(str(os.getpid()))
            event = threading.Event()
            while not go.exists():
                event.wait(0.02)
    hook.close()
""")

ATOMIC = textwrap.dedent("""
    import sys
    from sagemaker_debugger_ext.format._files import atomic_write
    target, byte = sys.argv[1], sys.argv[2].encode()
    for i in range(300):
        atomic_write(target, byte * (4096 + i))
""")


def _start(script: str, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def test_second_writer_of_a_worker_is_refused_and_the_first_run_is_intact(tmp_path: Path) -> None:
    out, go = tmp_path / "run", tmp_path / "go"
    first = _start(WRITER, out, 0, tmp_path / "a_ready", go)
    try:
        pid = int(wait_until(lambda: (tmp_path / "a_ready").exists() and (tmp_path / "a_ready").read_text(),
                             timeout_s=60, what="the first writer's first steps"))  # fmt: skip
        second = _start(WRITER, out, 100, tmp_path / "b_ready", go)
        _, err = second.communicate(timeout=60)
        assert second.returncode != 0
        assert f"another writer is already saving worker 'worker_0' to {out} (pid {pid} on host" in err
        assert not (tmp_path / "b_ready").exists()
    finally:
        go.write_text("")
        first.communicate(timeout=60)
    assert first.returncode == 0
    trial = create_trial(out, poll_interval_s=0.01, wait_timeout_s=5)
    assert trial.steps() == [0, 1, 2, 3, 4]
    for step in range(5):
        np.testing.assert_array_equal(trial.tensor("w.weight").value(step), np.full((3,), step, dtype=np.float32))
    assert not list(out.rglob("*.tmp")) and not list(out.glob(".claim*"))


def test_a_killed_writer_leaves_no_claim_behind(tmp_path: Path) -> None:
    """The claim is a lock owned by the process: SIGKILL releases it, the next run may write."""
    out, go = tmp_path / "run", tmp_path / "go"
    first = _start(WRITER, out, 0, tmp_path / "a_ready", go)
    wait_until(lambda: (tmp_path / "a_ready").exists(), timeout_s=60, what="the first writer")
    os.kill(first.pid, signal.SIGKILL)
    first.communicate(timeout=60)
    go.write_text("")
    second = _start(WRITER, out, 100, tmp_path / "b_ready", go)
    _, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    assert create_trial(out, poll_interval_s=0.01, wait_timeout_s=5).tensor("w.weight").value(4)[0] == 104


def test_concurrent_atomic_writes_never_collide_or_tear(tmp_path: Path) -> None:
    target = tmp_path / "f.bin"
    writers = [_start(ATOMIC, target, c) for c in "AB"]
    for proc in writers:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    data = target.read_bytes()
    assert data in (b"A" * (4096 + 299), b"B" * (4096 + 299))
    assert os.listdir(tmp_path) == ["f.bin"]
