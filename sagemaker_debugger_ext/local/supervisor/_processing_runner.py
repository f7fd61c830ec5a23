"""Run one local Processing job: inputs in, the command, outputs out, a final status.

``python -m sagemaker_debugger_ext.local.supervisor._processing_runner <job folder> <region>`` is
started detached by :class:`~sagemaker_debugger_ext.local.api._processing_client.LocalProcessingClient`.
The container is emulated on the local disk: every ``/opt/ml/...`` path in the
``AppSpecification`` (entry point and arguments) and in ``Environment`` is rewritten to the
job's ``container/opt/ml/...`` folder; ``python`` / ``python3`` as the entry point's first item
is this interpreter (the image's Python). ``ProcessingInputs`` are downloaded before the
command starts; ``ProcessingOutputs`` are uploaded when it ends (``Continuous`` ones also
every second while it runs), whatever the outcome, so a failing job loses nothing.

This is one of the package's process boundaries: an unexpected error ends the job ``Failed``
with ``InternalServerError`` and the error, never silently.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..._exceptions import StorageError
from ..store._job_store import atomic_write_json, read_json
from ..store._processing_store import ProcessingPaths
from ._child_process import ChildProcess, _error_message, _tail
from ._inputs_fetch import _download_prefix
from ._sync import Syncer, SyncTarget

__all__ = ["container_command", "main", "map_container_paths"]

_CONTAINER_PREFIX = "/opt/ml"
_PYTHONS = ("python", "python3")
_POLL_S = 0.1
_CONTINUOUS_S = 1.0
_STOP_GRACE_S = 20.0
_MAX_REASON = 1024


def map_container_paths(value: str, container_root: Path) -> str:
    """``value`` with every ``/opt/ml`` path moved under ``container_root``."""
    return value.replace(_CONTAINER_PREFIX, str(container_root) + _CONTAINER_PREFIX)


def container_command(app: Mapping[str, Any], container_root: Path) -> list[str]:
    """The argv of ``AppSpecification`` (entry point then arguments), paths mapped."""
    argv = [str(a) for a in (app.get("ContainerEntrypoint") or [])] + [
        str(a) for a in (app.get("ContainerArguments") or [])
    ]
    argv = [map_container_paths(a, container_root) for a in argv]
    if argv and argv[0] in _PYTHONS:
        argv[0] = sys.executable
    return argv


def _environment(request: Mapping[str, Any], paths: ProcessingPaths, region: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            str(k): map_container_paths(str(v), paths.container_root)
            for k, v in (request.get("Environment") or {}).items()
        }
    )
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.setdefault("AWS_REGION", region)
    env.setdefault("AWS_DEFAULT_REGION", region)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _write_config(request: Mapping[str, Any], paths: ProcessingPaths) -> None:
    """``/opt/ml/config/processingjobconfig.json`` and ``resourceconfig.json``, as the service writes them."""
    config = paths.container_path("/opt/ml/config")
    config.mkdir(parents=True, exist_ok=True)
    (config / "processingjobconfig.json").write_text(json.dumps(dict(request), default=str))
    cluster = (request.get("ProcessingResources") or {}).get("ClusterConfig") or {}
    hosts = [f"algo-{i + 1}" for i in range(int(cluster.get("InstanceCount") or 1))]
    (config / "resourceconfig.json").write_text(json.dumps({"current_host": hosts[0], "hosts": hosts}))


def _fetch_inputs(request: Mapping[str, Any], paths: ProcessingPaths) -> None:
    for item in request.get("ProcessingInputs") or []:
        s3 = item.get("S3Input")
        if not s3:
            continue
        target = paths.container_path(str(s3["LocalPath"]))
        _download_prefix(str(s3["S3Uri"]), target)


def _output_targets(request: Mapping[str, Any], paths: ProcessingPaths, mode: str | None) -> list[SyncTarget]:
    out = []
    for item in (request.get("ProcessingOutputConfig") or {}).get("Outputs") or []:
        s3 = item.get("S3Output")
        if s3 and (mode is None or s3.get("S3UploadMode") == mode):
            local = paths.container_path(str(s3["LocalPath"]))
            local.mkdir(parents=True, exist_ok=True)
            out.append(SyncTarget(local, str(s3["S3Uri"])))
    return out


def _set_state(paths: ProcessingPaths, **changes: Any) -> None:
    state = dict(read_json(paths.state) or {})
    state.update(changes)
    state["LastModifiedTime"] = time.time()
    atomic_write_json(paths.state, state)


def _log(paths: ProcessingPaths, line: str) -> None:
    with open(paths.log, "a") as log:
        log.write(f"[sagemaker-debugger-ext processing] {line}\n")


def _failure(code: int, paths: ProcessingPaths) -> str:
    message = _error_message(_tail(paths.log)).strip()
    reason = f"AlgorithmError: {message}, exit code: {code}" if message else f"AlgorithmError: exit code: {code}"
    return reason if len(reason) <= _MAX_REASON else reason[: _MAX_REASON - 3] + "..."


def _run_command(request: Mapping[str, Any], paths: ProcessingPaths, region: str) -> tuple[str, dict[str, Any]]:
    """Run the command to its end; ``(status, state changes)``."""
    argv = container_command(request.get("AppSpecification") or {}, paths.container_root)
    max_runtime = float((request.get("StoppingCondition") or {}).get("MaxRuntimeInSeconds") or 86400)
    continuous = Syncer(_output_targets(request, paths, "Continuous"))
    work_dir = paths.container_path("/opt/ml/processing")
    work_dir.mkdir(parents=True, exist_ok=True)
    child = ChildProcess("processing", argv, env=_environment(request, paths, region), cwd=work_dir, log_path=paths.log)
    started = time.monotonic()
    last_sync = started
    stop_why: str | None = None
    while child.poll() is None:
        if stop_why is None and paths.stop_request.exists():
            stop_why = "StopProcessingJob"
        if stop_why is None and time.monotonic() - started > max_runtime:
            stop_why = f"MaxRuntimeInSeconds ({max_runtime:g} s) exceeded"
        if stop_why is not None:
            child.terminate()
            child.kill_if_overdue(_STOP_GRACE_S)
        if continuous.targets and time.monotonic() - last_sync >= _CONTINUOUS_S:
            last_sync = time.monotonic()
            try:
                continuous.sync()
            except StorageError as exc:
                _log(paths, f"continuous upload failed (retried at the next pass): {exc}")
        time.sleep(_POLL_S)
    code = child.wait()
    if stop_why is not None:
        _log(paths, f"stopped: {stop_why}")
        return "Stopped", {"ExitMessage": f"Stopped: {stop_why}"}
    if code == 0:
        return "Completed", {}
    return "Failed", {"FailureReason": _failure(code, paths)}


def run(paths: ProcessingPaths, region: str) -> str:
    """Run the job in ``paths``; returns its final status."""
    request = dict(read_json(paths.request) or {})
    _set_state(paths, ProcessingStartTime=time.time())
    try:
        _write_config(request, paths)
        _fetch_inputs(request, paths)
    except (StorageError, OSError, KeyError, ValueError) as exc:
        reason = f"ClientError: failed to download the ProcessingInputs: {exc}"
        _set_state(
            paths, ProcessingJobStatus="Failed", FailureReason=reason[:_MAX_REASON], ProcessingEndTime=time.time()
        )
        return "Failed"
    status, changes = _run_command(request, paths, region)
    try:
        Syncer(_output_targets(request, paths, None)).sync()
    except StorageError as exc:
        status = "Failed"
        changes = {"FailureReason": f"ClientError: failed to upload the ProcessingOutputs: {exc}"[:_MAX_REASON]}
    message = paths.container_path("/opt/ml/output/message")
    if message.is_file() and "ExitMessage" not in changes:
        changes["ExitMessage"] = message.read_text(errors="replace")[:_MAX_REASON]
    _set_state(paths, ProcessingJobStatus=status, ProcessingEndTime=time.time(), **changes)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: ``<job folder> <region>``; exit code 0 once a final status is recorded."""
    args = list(sys.argv[1:] if argv is None else argv)
    paths = ProcessingPaths(Path(args[0]))
    region = args[1] if len(args) > 1 else "us-east-1"
    try:
        run(paths, region)
    except Exception as exc:  # noqa: BLE001 - the runner's boundary: the job records why it failed
        reason = f"InternalServerError: {type(exc).__name__}: {exc}"[:_MAX_REASON]
        _set_state(paths, ProcessingJobStatus="Failed", FailureReason=reason, ProcessingEndTime=time.time())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
