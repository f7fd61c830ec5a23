"""Process groups of a local job's children: stragglers die with their leader; no signal after reaping."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from sagemaker_debugger_ext.local.store._job_store import pid_alive
from sagemaker_debugger_ext.local.supervisor._child_process import ChildProcess, terminate_all

_LEADER = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
open(sys.argv[1], "w").write(str(child.pid))
"""


def test_leader_exit_kills_its_stragglers_before_reaping(tmp_path: Path, poll: Any) -> None:
    """When the leader exits, poll() kills what it left in its group, then reaps it."""
    pid_file = tmp_path / "straggler.pid"
    child = ChildProcess(
        "leader", [sys.executable, "-c", _LEADER, str(pid_file)], env=dict(os.environ), cwd=tmp_path,
        log_path=tmp_path / "leader.log",
    )  # fmt: skip
    assert poll(lambda: child.poll() is not None, timeout_s=30, what="the leader to exit")
    assert child.returncode == 0
    straggler = int(pid_file.read_text())
    poll(lambda: not pid_alive(straggler), timeout_s=10, what="the straggler to die")


def test_no_group_signal_once_the_leader_is_reaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reaped leader's pid may name another group already: terminate/kill signal nothing."""
    child = ChildProcess(
        "quick", [sys.executable, "-c", "pass"], env=dict(os.environ), cwd=tmp_path, log_path=tmp_path / "q.log"
    )
    assert child.wait() == 0
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "killpg", lambda pid, sig: sent.append((pid, sig)))
    child.terminate()
    child.kill_if_overdue(0.0)
    terminate_all([child], grace_s=0.1)
    assert sent == []
