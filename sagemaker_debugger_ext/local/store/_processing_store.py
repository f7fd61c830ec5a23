"""The on-disk store of local Processing jobs, and their Describe/List responses.

Layout of ``<root>/processing-jobs/<job>/``::

    request.json          the CreateProcessingJob request, as received
    state.json            status, times, failure reason, exit message (atomic rewrites)
    stop-request          present once StopProcessingJob was called
    runner.pid            pid of the detached runner process
    container/opt/ml/     the emulated container tree (inputs, outputs)
    job.log               the command's output, then the runner's own lines

The store lives next to the training jobs' (``JobStore.root``), so any process reading the
same ``SAGEMAKER_DEBUGGER_EXT_HOME`` sees the same processing jobs.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from ..._exceptions import JobAlreadyExistsError, JobNotFoundError
from ._job_store import JobFolder, JobStore, atomic_write_json, read_json, validate_job_name

__all__ = [
    "PROCESSING_TERMINAL",
    "ProcessingPaths",
    "ProcessingStore",
    "describe_processing",
    "processing_job_arn",
    "processing_summary",
]

PROCESSING_TERMINAL = frozenset({"Completed", "Failed", "Stopped"})
_REQUEST_KEYS = (
    "ProcessingInputs",
    "ProcessingOutputConfig",
    "ProcessingResources",
    "StoppingCondition",
    "AppSpecification",
    "Environment",
    "NetworkConfig",
    "RoleArn",
    "ExperimentConfig",
)
_STATE_KEYS = ("ExitMessage", "FailureReason")
_TIME_KEYS = ("ProcessingEndTime", "ProcessingStartTime", "LastModifiedTime", "CreationTime")


def processing_job_arn(region: str, name: str) -> str:
    """ARN of a local processing job (account 000000000000, the name lower-cased as the service does)."""
    return f"arn:aws:sagemaker:{region}:000000000000:processing-job/{name.lower()}"


@attrs.frozen
class ProcessingPaths(JobFolder):
    """Paths inside one processing job's folder."""

    @property
    def runner_pid(self) -> Path:
        """Pid file of the runner."""
        return self.root / "runner.pid"

    @property
    def container_root(self) -> Path:
        """Where the container's ``/`` is emulated: ``/opt/ml/...`` maps to ``<this>/opt/ml/...``."""
        return self.root / "container"

    @property
    def log(self) -> Path:
        """The job's log."""
        return self.root / "job.log"

    def container_path(self, path: str) -> Path:
        """The local folder emulating the absolute container path ``path`` (under ``/opt/ml``)."""
        return self.container_root / path.lstrip("/")


@attrs.frozen
class ProcessingStore:
    """Processing jobs next to the training jobs of a :class:`JobStore`.

    .. versionadded:: 0.2.0
    """

    jobs: JobStore

    @property
    def root(self) -> Path:
        """``<store root>/processing-jobs``."""
        return self.jobs.root / "processing-jobs"

    def paths(self, name: str) -> ProcessingPaths:
        """Paths of job ``name`` (validated, so it never leaves the store)."""
        return ProcessingPaths(self.root / validate_job_name(name))

    def create(self, name: str, request: Mapping[str, Any], *, region: str) -> ProcessingPaths:
        """Create the folder of a new job, store its request and an ``InProgress`` state.

        Raises:
            JobAlreadyExistsError: a processing job with that name exists already.
        """
        paths = self.paths(name)
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            paths.root.mkdir()
        except FileExistsError:
            arn = processing_job_arn(region, name)
            msg = (
                "Processing job names must be unique within an AWS account and region, "
                f"and a processing job with this name already exists ({arn})"
            )
            raise JobAlreadyExistsError(msg, job_name=name) from None
        atomic_write_json(paths.request, dict(request))
        now = time.time()
        atomic_write_json(
            paths.state, {"ProcessingJobStatus": "InProgress", "CreationTime": now, "LastModifiedTime": now}
        )
        return paths

    def require(self, name: str) -> ProcessingPaths:
        """Paths of an existing job, else :class:`JobNotFoundError` with the service's message."""
        msg = f"Could not find requested job with name {name}"
        try:
            paths = self.paths(name)
        except ValueError:
            raise JobNotFoundError(msg, job_name=str(name)) from None
        if not paths.request.exists():
            raise JobNotFoundError(msg, job_name=name)
        return paths

    def read(self, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(request, state)`` of an existing job (retrying briefly over a concurrent rename)."""
        paths = self.require(name)
        request = dict(read_json(paths.request) or {})
        for _ in range(50):
            state = read_json(paths.state)
            if state is not None:
                return request, dict(state)
            time.sleep(0.01)
        msg = f"state of local processing job {name!r} is unreadable at {paths.state}"
        raise JobNotFoundError(msg, job_name=name)

    def update_state(self, name: str, **changes: Any) -> dict[str, Any]:
        """Merge ``changes`` into the job's state (``LastModifiedTime`` set to now); returns it."""
        paths = self.require(name)
        _, state = self.read(name)
        state.update(changes)
        state["LastModifiedTime"] = time.time()
        atomic_write_json(paths.state, state)
        return state

    def names(self) -> Iterator[str]:
        """Names of every processing job, newest first."""
        if not self.root.is_dir():
            return iter(())
        entries = [p for p in self.root.iterdir() if (p / "request.json").exists()]
        entries.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        return iter(p.name for p in entries)


def _ts(value: Any) -> _dt.datetime | None:
    return None if value is None else _dt.datetime.fromtimestamp(float(value), tz=_dt.UTC)


def describe_processing(request: Mapping[str, Any], state: Mapping[str, Any], *, region: str) -> dict[str, Any]:
    """DescribeProcessingJob's response from the stored request and state."""
    name = str(request["ProcessingJobName"])
    out: dict[str, Any] = {k: request[k] for k in _REQUEST_KEYS if k in request}
    out["ProcessingJobName"] = name
    out["ProcessingJobArn"] = processing_job_arn(region, name)
    out["ProcessingJobStatus"] = str(state.get("ProcessingJobStatus") or "InProgress")
    out.update({k: str(state[k]) for k in _STATE_KEYS if state.get(k)})
    out.update({k: _ts(state[k]) for k in _TIME_KEYS if state.get(k) is not None})
    return out


def processing_summary(description: Mapping[str, Any]) -> dict[str, Any]:
    """One ``ProcessingJobSummaries`` entry of ListProcessingJobs."""
    keys = (
        "ProcessingJobName",
        "ProcessingJobArn",
        "CreationTime",
        "ProcessingEndTime",
        "LastModifiedTime",
        "ProcessingJobStatus",
        "FailureReason",
        "ExitMessage",
    )
    return {k: description[k] for k in keys if k in description}
