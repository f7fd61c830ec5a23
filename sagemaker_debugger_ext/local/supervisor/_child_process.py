"""Child processes of a local job, each in its own process group, and their outcome."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["ChildProcess", "failure_reason", "free_port", "terminate_all"]

_TRACEBACK = "Traceback (most recent call last):"
_MAX_REASON = 1024


class ChildProcess:
    """One child process started in a new session (so it leads its own process group).

    Output (stdout and stderr) goes to ``log_path``, appended.

    The group is signalled only while its leader is unreaped: a reaped leader's pid (which
    is also the group id) can be reused by an unrelated process group at once on a busy
    machine (``pid_max`` is often 32768), so :meth:`poll` notices the leader's exit without
    reaping it (``waitid(WNOWAIT)``), SIGKILLs the stragglers left in its group while the
    zombie still pins the id, and only then reaps it; after that the group is never
    signalled again.
    """

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        log_path: Path,
    ) -> None:
        self.name = name
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path = log_path
        with open(log_path, "ab") as log:
            self._proc = subprocess.Popen(
                list(argv),
                env=dict(env),
                cwd=str(cwd),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.started_at = time.time()
        self._signalled_at: float | None = None

    @property
    def pid(self) -> int:
        """Process id (also the process group id)."""
        return self._proc.pid

    def poll(self) -> int | None:
        """Exit code, or ``None`` while it runs (kills the group's stragglers when it ended)."""
        if self._proc.returncode is not None:
            return self._proc.returncode
        try:
            exited = os.waitid(os.P_PID, self._proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # reaped elsewhere: nothing left to do safely
            return self._proc.poll()
        if exited is None:
            return None
        self.signal_group(signal.SIGKILL)  # the unreaped leader pins the group id
        return self._proc.wait()

    def wait(self) -> int:
        """Block until the leader exits; reap it (after killing its group's stragglers)."""
        if self._proc.returncode is None:
            try:
                os.waitid(os.P_PID, self._proc.pid, os.WEXITED | os.WNOWAIT)
            except ChildProcessError:
                pass
        code = self.poll()
        return self._proc.wait() if code is None else code

    @property
    def returncode(self) -> int | None:
        """Exit code once it has ended."""
        return self._proc.returncode

    def signal_group(self, sig: int) -> None:
        """Send ``sig`` to the whole process group (ignored once the leader was reaped)."""
        if self._proc.returncode is not None:
            return  # reaped: the id may already name another process group
        try:
            os.killpg(self._proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def terminate(self) -> None:
        """SIGTERM the process group (once)."""
        if self._signalled_at is None:
            self._signalled_at = time.time()
            self.signal_group(signal.SIGTERM)

    def kill_if_overdue(self, grace_s: float) -> None:
        """SIGKILL the group when SIGTERM was sent more than ``grace_s`` ago."""
        if self._signalled_at is not None and time.time() - self._signalled_at > grace_s:
            self.signal_group(signal.SIGKILL)


def terminate_all(children: Sequence[ChildProcess], *, grace_s: float, poll_s: float = 0.02) -> None:
    """SIGTERM every child's group, SIGKILL those still alive after ``grace_s``; wait for all."""
    for child in children:
        if child.poll() is None:
            child.terminate()
    deadline = time.time() + grace_s
    while any(c.poll() is None for c in children) and time.time() < deadline:
        time.sleep(poll_s)
    for child in children:
        if child.poll() is None:
            child.signal_group(signal.SIGKILL)
    for child in children:
        child.wait()


def _tail(path: Path, limit: int = 64 * 1024) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _error_message(log_text: str) -> str:
    """The end of the last traceback in a log: its final exception line(s)."""
    idx = log_text.rfind(_TRACEBACK)
    if idx < 0:
        lines = [ln for ln in log_text.strip().splitlines() if ln.strip()]
        return "\n".join(lines[-3:])
    lines = log_text[idx:].splitlines()
    out: list[str] = []
    # The exception lines are the first non-indented lines after the frames.
    for line in lines[1:]:
        if line and not line.startswith((" ", "\t")) and not re.match(r"^\^+$", line.strip()):
            out.append(line)
        elif out:
            break
    return "\n".join(out) or lines[-1]


def failure_reason(*, host: str, exit_code: int, log_path: Path, failure_file: Path, argv: Sequence[str]) -> str:
    """SageMaker-style FailureReason for a training process that exited non-zero.

    The script's own ``/opt/ml/output/failure`` wins; otherwise the end of the last traceback
    in its log.
    """
    try:
        written = failure_file.read_text(errors="replace").strip()
    except OSError:
        written = ""
    message = written or _error_message(_tail(log_path))
    if exit_code < 0:
        try:
            name = signal.Signals(-exit_code).name
        except ValueError:
            name = str(-exit_code)
        head = f"AlgorithmError: ExecuteUserScriptError: {host} killed by {name}"
    else:
        head = f"AlgorithmError: ExecuteUserScriptError: {host} ExitCode {exit_code}"
    reason = f'{head}\nErrorMessage "{message}"\nCommand "{" ".join(argv[1:2])}"'
    if len(reason) > _MAX_REASON:
        reason = reason[: _MAX_REASON - 3] + "..."
    return reason


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (for the hosts' rendezvous)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
