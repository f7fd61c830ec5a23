"""The local Processing API: Create/Describe/List/StopProcessingJob on one machine.

Each job runs in a detached runner process (``_processing_runner``), so a job outlives the
process that created it, and any process reading the same store describes it.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..._exceptions import LocalJobInputError, field_error_message
from ..store._job_store import PROCESSING_RUNNER_MODULE, JobStore, list_summaries, pid_alive, validate_job_name
from ..store._processing_store import (
    PROCESSING_TERMINAL,
    ProcessingPaths,
    ProcessingStore,
    describe_processing,
    processing_job_arn,
    processing_summary,
)

__all__ = ["LocalProcessingClient", "check_processing_request"]

_LOCAL_PREFIX = "/opt/ml/processing/"


def _check_local_path(field: str, value: Any, seen: dict[str, str]) -> None:
    if not isinstance(value, str) or not value.startswith(_LOCAL_PREFIX) or ".." in Path(value).parts:
        msg = field_error_message(field, f"a path under {_LOCAL_PREFIX} without '..'", value)
        raise LocalJobInputError(msg)
    if value.rstrip("/") in seen:
        msg = field_error_message(
            field, f"a LocalPath no other input or output uses ({seen[value.rstrip('/')]})", value
        )
        raise LocalJobInputError(msg)
    seen[value.rstrip("/")] = field


def check_processing_request(request: Mapping[str, Any]) -> None:
    """Reject, before anything runs, what the service rejects and what this machine cannot run.

    Raises:
        LocalJobInputError: naming the field, the value and what is allowed.
    """
    validate_job_name(request.get("ProcessingJobName"))
    app = request.get("AppSpecification") or {}
    if not app.get("ContainerEntrypoint"):
        msg = field_error_message(
            "AppSpecification.ContainerEntrypoint", "set: the local emulator runs a command, not an image", None
        )
        raise LocalJobInputError(msg)
    seen: dict[str, str] = {}
    for index, item in enumerate(request.get("ProcessingInputs") or []):
        field = f"ProcessingInputs[{index}]"
        s3 = item.get("S3Input")
        if s3 is None:
            msg = field_error_message(f"{field}.S3Input", "set (DatasetDefinition inputs are not emulated)", None)
            raise LocalJobInputError(msg)
        if s3.get("S3DataType", "S3Prefix") != "S3Prefix":
            msg = field_error_message(f"{field}.S3Input.S3DataType", "'S3Prefix' in local mode", s3.get("S3DataType"))
            raise LocalJobInputError(msg)
        _check_local_path(f"{field}.S3Input.LocalPath", s3.get("LocalPath"), seen)
    for index, item in enumerate((request.get("ProcessingOutputConfig") or {}).get("Outputs") or []):
        field = f"ProcessingOutputConfig.Outputs[{index}]"
        s3 = item.get("S3Output")
        if s3 is None:
            msg = field_error_message(f"{field}.S3Output", "set (FeatureStoreOutput is not emulated)", None)
            raise LocalJobInputError(msg)
        _check_local_path(f"{field}.S3Output.LocalPath", s3.get("LocalPath"), seen)


class LocalProcessingClient:
    """SageMaker's Processing API, served by local processes and a store on disk.

    Args:
        store: the training job store whose root also holds the processing jobs.
        region: region used in ARNs and given to the job's processes.
        environ: environment of the runners (default: this process's).

    .. versionadded:: 0.2.0
    """

    def __init__(
        self, store: JobStore | None = None, *, region: str = "us-east-1", environ: Mapping[str, str] | None = None
    ) -> None:
        self.store = ProcessingStore(store or JobStore.from_environ())
        self.region = region
        self._environ = environ
        self._children: list[subprocess.Popen[bytes]] = []

    def create_processing_job(self, **request: Any) -> dict[str, Any]:
        """Start a processing job; returns at once (``{"ProcessingJobArn": ...}``).

        Raises:
            LocalJobInputError: bad input, found before anything starts.
            JobAlreadyExistsError: the name is taken.
        """
        check_processing_request(request)
        name = str(request["ProcessingJobName"])
        paths = self.store.create(name, request, region=self.region)
        env = dict(os.environ if self._environ is None else self._environ)
        with open(paths.log, "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", PROCESSING_RUNNER_MODULE, str(paths.root), self.region],
                env=env,
                cwd=str(paths.root),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._children.append(proc)
        paths.runner_pid.write_text(str(proc.pid))
        return {"ProcessingJobArn": processing_job_arn(self.region, name)}

    def _state(self, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
        self._children = [p for p in self._children if p.poll() is None]
        request, state = self.store.read(name)
        if state.get("ProcessingJobStatus") in PROCESSING_TERMINAL:
            return request, state
        paths = self.store.paths(name)
        try:
            pid = int(paths.runner_pid.read_text())
        except (OSError, ValueError):
            return request, state
        if pid_alive(pid):
            if paths.stop_request.exists():  # only the runner writes the state: no lost final status
                state["ProcessingJobStatus"] = "Stopping"
            return request, state
        request, state = self.store.read(name)  # it may have finished just now
        if state.get("ProcessingJobStatus") not in PROCESSING_TERMINAL:
            reason = f"InternalServerError: the local runner (pid {pid}) exited unexpectedly; see {paths.log}"
            with contextlib.suppress(OSError):
                state = self.store.update_state(
                    name, ProcessingJobStatus="Failed", FailureReason=reason, ProcessingEndTime=time.time()
                )
        return request, state

    def describe_processing_job(self, ProcessingJobName: str) -> dict[str, Any]:
        """DescribeProcessingJob.

        Raises:
            JobNotFoundError: no such job (the service's "Could not find requested job with name ...").
        """
        request, state = self._state(ProcessingJobName)
        return describe_processing(request, state, region=self.region)

    def list_processing_jobs(
        self,
        *,
        NameContains: str | None = None,
        StatusEquals: str | None = None,
        MaxResults: int = 100,
        **_ignored: Any,
    ) -> dict[str, Any]:
        """ListProcessingJobs over the local store, newest first."""
        out = list_summaries(
            self.store.names(),
            lambda name: processing_summary(self.describe_processing_job(name)),
            status_key="ProcessingJobStatus",
            name_contains=NameContains,
            status_equals=StatusEquals,
            max_results=MaxResults,
        )
        return {"ProcessingJobSummaries": out}

    def stop_processing_job(self, ProcessingJobName: str) -> dict[str, Any]:
        """Ask a running job to stop (SIGTERM to its command, SIGKILL after a grace period).

        Raises:
            JobNotFoundError: no such job.
            LocalJobInputError: the job has ended already (the service's message).
        """
        _, state = self._state(ProcessingJobName)
        status = state.get("ProcessingJobStatus")
        if status in PROCESSING_TERMINAL:
            msg = f"The request was rejected because the processing job is in status {status}."
            raise LocalJobInputError(msg)
        self.store.paths(ProcessingJobName).stop_request.write_text(str(time.time()))
        return {}

    def wait(self, name: str, *, timeout_s: float = 120.0, poll_s: float = 0.05) -> dict[str, Any]:
        """Block until the job ends; returns its description."""
        deadline = time.monotonic() + timeout_s
        while True:
            described = self.describe_processing_job(name)
            if described["ProcessingJobStatus"] in PROCESSING_TERMINAL:
                return described
            if time.monotonic() > deadline:
                msg = f"local processing job {name!r} did not finish within {timeout_s} s"
                raise TimeoutError(msg)
            time.sleep(poll_s)

    def paths(self, name: str) -> ProcessingPaths:
        """Folder of an existing job (its log, its emulated container)."""
        return self.store.require(name)
