"""The on-disk job store: one folder per local training job.

Layout of ``<root>/jobs/<job>/``::

    request.json          the CreateTrainingJob request, as received
    state.json            status, times, transitions, rule statuses, pids (atomic rewrites)
    stop-request          present once StopTrainingJob was called
    supervisor.pid        pid of the detached supervisor process
    logs/                 algo-<n>.log per training process, rules/<Rule>.log, supervisor.log
    hosts/algo-<n>/       the /opt/ml tree of each emulated host (ContainerPaths root)
    artifacts/            debug-output, tensorboard-output, profiler-output (LocalPaths)
    rules/<Rule>/         parameters.json, status.json, output/ of each rule process
    rules/stop.json       written by a rule whose StopTraining action fired

Any process can open the store (the root comes from ``SAGEMAKER_DEBUGGER_EXT_HOME`` or
``~/.sagemaker-debugger-ext``), so ``describe_training_job`` works from anywhere.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from ..._container_env import LOCAL_HOME_ENV
from ..._exceptions import (
    JobAlreadyExistsError,
    JobNotFoundError,
    LocalJobInputError,
    field_error_message,
)
from ...format._files import atomic_write

__all__ = [
    "HOME_ENV",
    "LAUNCH_FILE",
    "PROCESSING_RUNNER_MODULE",
    "SUPERVISOR_MODULE",
    "UPDATES_FILE",
    "JobFolder",
    "JobPaths",
    "JobStore",
    "atomic_write_json",
    "list_summaries",
    "pid_alive",
    "read_json",
    "validate_job_name",
    "validate_rule_name",
]

HOME_ENV = LOCAL_HOME_ENV
LAUNCH_FILE = "launch.json"
UPDATES_FILE = "updates.json"
#: The detached processes that run a job, started by module name with the job folder (``python -m NAME DIR``):
#: the API starts them, never imports them; the job store is all they share with it.
SUPERVISOR_MODULE = "sagemaker_debugger_ext.local.supervisor._supervisor"
PROCESSING_RUNNER_MODULE = "sagemaker_debugger_ext.local.supervisor._processing_runner"
_JOB_NAME_RE = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
_RULE_NAME_RE = re.compile(r"^[A-Za-z0-9._\-]{1,256}$")


def validate_job_name(name: object) -> str:
    """Return ``name`` if it is a valid SageMaker training job name, else raise."""
    if not isinstance(name, str) or not _JOB_NAME_RE.match(name):
        msg = field_error_message(
            "TrainingJobName", "1-63 letters, digits or hyphens, starting with a letter or digit", name
        )
        raise LocalJobInputError(msg)
    return name


def validate_rule_name(name: object) -> str:
    """Return ``name`` if it can name a rule's folder (letters, digits, '.', '-', '_'), else raise."""
    if not isinstance(name, str) or not _RULE_NAME_RE.match(name) or name in (".", ".."):
        msg = field_error_message("RuleConfigurationName", "1-256 letters, digits, '.', '-' or '_' in local mode", name)
        raise LocalJobInputError(msg)
    return name


def atomic_write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` through a temporary file and a rename."""
    atomic_write(path, json.dumps(data, sort_keys=True, indent=1, default=str))


def list_summaries(
    names: Iterable[str],
    summary_of: Callable[[str], dict[str, Any]],
    *,
    status_key: str,
    name_contains: str | None,
    status_equals: str | None,
    max_results: int,
) -> list[dict[str, Any]]:
    """The List*Jobs loop of both local clients: the summaries of ``names`` (in the order given,
    newest first) whose name contains ``name_contains`` and whose ``status_key`` equals
    ``status_equals`` (either filter off when None), at most ``max_results``."""
    out: list[dict[str, Any]] = []
    for name in names:
        if name_contains and name_contains not in name:
            continue
        summary = summary_of(name)
        if status_equals and summary.get(status_key) != status_equals:
            continue
        out.append(summary)
        if len(out) >= max_results:
            break
    return out


def read_json(path: Path) -> Any:
    """Read a JSON file; ``None`` when it is missing or half-written."""
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


@attrs.frozen
class JobFolder:
    """The files every local job's folder has (training and processing jobs alike)."""

    root: Path

    @property
    def request(self) -> Path:
        """``request.json``."""
        return self.root / "request.json"

    @property
    def state(self) -> Path:
        """``state.json``."""
        return self.root / "state.json"

    @property
    def stop_request(self) -> Path:
        """Marker written by Stop*Job."""
        return self.root / "stop-request"


@attrs.frozen
class JobPaths(JobFolder):
    """Paths inside one training job's folder."""

    @property
    def supervisor_pid(self) -> Path:
        """Pid file of the supervisor."""
        return self.root / "supervisor.pid"

    @property
    def logs_dir(self) -> Path:
        """``logs/``."""
        return self.root / "logs"

    def host_log(self, host: str) -> Path:
        """Log of one training process."""
        return self.logs_dir / f"{host}.log"

    def rule_log(self, rule: str) -> Path:
        """Log of one rule process."""
        return self.logs_dir / "rules" / f"{rule}.log"

    @property
    def supervisor_log(self) -> Path:
        """Log of the supervisor itself."""
        return self.logs_dir / "supervisor.log"

    def host_root(self, host: str) -> Path:
        """Root of the emulated ``/opt/ml`` tree of one host."""
        return self.root / "hosts" / host

    @property
    def artifacts_dir(self) -> Path:
        """Folder holding the shared LocalPaths."""
        return self.root / "artifacts"

    @property
    def debug_dir(self) -> Path:
        """DebugHookConfig LocalPath (shared by every host: worker names differ)."""
        return self.artifacts_dir / "debug-output"

    @property
    def tensorboard_dir(self) -> Path:
        """TensorBoardOutputConfig LocalPath."""
        return self.artifacts_dir / "tensorboard-output"

    @property
    def profiler_dir(self) -> Path:
        """Profiler LocalPath (``system/`` and ``framework/`` below it)."""
        return self.artifacts_dir / "profiler-output"

    def rule_dir(self, rule: str) -> Path:
        """Folder of one rule process."""
        return self.root / "rules" / validate_rule_name(rule)

    @property
    def stop_file(self) -> Path:
        """Where a rule's StopTraining action asks the runner to stop."""
        return self.root / "rules" / "stop.json"


@attrs.frozen
class JobStore:
    """The folder holding every local job.

    .. versionadded:: 0.1.0
    """

    root: Path = attrs.field(converter=Path)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> JobStore:
        """Store at ``$SAGEMAKER_DEBUGGER_EXT_HOME`` or ``~/.sagemaker-debugger-ext``."""
        env = os.environ if environ is None else environ
        home = env.get(HOME_ENV) or str(Path.home() / ".sagemaker-debugger-ext")
        return cls(Path(home).expanduser().resolve())

    def paths(self, name: str) -> JobPaths:
        """Paths of job ``name`` (validated, so it never leaves the store)."""
        return JobPaths(self.root / "jobs" / validate_job_name(name))

    def create(self, name: str, request: Mapping[str, Any]) -> JobPaths:
        """Create the folder of a new job and store its request.

        Raises:
            JobAlreadyExistsError: a job with that name exists already.
        """
        paths = self.paths(name)
        paths.root.parent.mkdir(parents=True, exist_ok=True)
        try:
            paths.root.mkdir()
        except FileExistsError:
            msg = f"a local training job named {name!r} already exists in {self.root}; choose another job name"
            raise JobAlreadyExistsError(msg, job_name=name) from None
        atomic_write_json(paths.request, dict(request))
        now = time.time()
        atomic_write_json(
            paths.state,
            {
                "TrainingJobStatus": "InProgress",
                "SecondaryStatus": "Starting",
                "CreationTime": now,
                "LastModifiedTime": now,
                "SecondaryStatusTransitions": [
                    {"Status": "Starting", "StartTime": now, "StatusMessage": "Launching local job processes"}
                ],
                "Rules": {},
                "Pids": {},
            },
        )
        return paths

    def exists(self, name: str) -> bool:
        """Whether job ``name`` exists."""
        return self.paths(name).request.exists()

    def require(self, name: str) -> JobPaths:
        """Paths of an existing job, else :class:`JobNotFoundError`."""
        try:
            paths = self.paths(name)
        except LocalJobInputError as exc:
            raise JobNotFoundError(str(exc), job_name=str(name)) from None
        if not paths.request.exists():
            msg = f"no local training job named {name!r} in {self.root}"
            raise JobNotFoundError(msg, job_name=name)
        return paths

    def read_request(self, name: str) -> dict[str, Any]:
        """The stored CreateTrainingJob request."""
        data = read_json(self.require(name).request)
        return dict(data or {})

    def read_state(self, name: str) -> dict[str, Any]:
        """The latest state (retrying briefly over a concurrent rename)."""
        paths = self.require(name)
        for _ in range(50):
            data = read_json(paths.state)
            if data is not None:
                return dict(data)
            time.sleep(0.01)
        msg = f"state of local job {name!r} is unreadable at {paths.state}"
        raise JobNotFoundError(msg, job_name=name)

    def names(self) -> Iterator[str]:
        """Names of every job in the store, newest first."""
        jobs = self.root / "jobs"
        if not jobs.is_dir():
            return iter(())
        entries = [p for p in jobs.iterdir() if (p / "request.json").exists()]
        entries.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        return iter(p.name for p in entries)


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a live (non-zombie) process."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"
