"""The local training-job API: Create/Describe/List/Stop/UpdateTrainingJob on one machine.

This class has no dependency on the ``sagemaker`` package, so the CLI and the supervisor
use it directly; :class:`~sagemaker_debugger_ext.local.LocalSession` plugs it into the SDK.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..._exceptions import JobAlreadyExistsError, LocalJobInputError, field_error_message
from ..events._event_callables import CallableFollower
from ..events._events import handler_specs
from ..store._job_spec import (
    check_before_training,
    resolve_job_spec,
    resolve_request_addresses,
)
from ..store._job_store import (
    LAUNCH_FILE,
    SUPERVISOR_MODULE,
    UPDATES_FILE,
    JobPaths,
    JobStore,
    atomic_write_json,
    list_summaries,
    pid_alive,
    read_json,
    validate_job_name,
)
from ._describe import describe_response, summary_response, training_job_arn

__all__ = ["DEFAULT_OUTPUT_DIR", "LocalTrainingClient", "default_output_path"]

DEFAULT_OUTPUT_DIR = "sagemaker-local-output"
TERMINAL_STATUSES = frozenset({"Completed", "Failed", "Stopped"})


def default_output_path(cwd: Path | None = None) -> str:
    """``file://<cwd>/sagemaker-local-output/``: where jobs without an output path write."""
    base = (cwd or Path.cwd()).resolve() / DEFAULT_OUTPUT_DIR
    return base.as_uri() + "/"


class LocalTrainingClient:
    """SageMaker's training-job API, served by local processes and a job store on disk.

    Args:
        store: the job store (default: ``JobStore.from_environ()``).
        region: region used in ARNs and passed to rule actions.
        environ: environment given to the job's processes (default: this process's).
        settings: supervisor tuning (``PollSeconds``, ``StopGraceSeconds``,
            ``RuleWaitSeconds``, ``SyncIntervalSeconds``, ``RulePollSeconds``, ``DebugRuleModule``,
            ``ProfilerRuleModule``, ``StartMonitor``; ``CloudInstanceTypes``: accept ``ml.*``
            instance types, run on this machine and recorded, as ``serve`` does; ``Inline``: run the supervisor in
            this process, blocking, so in-process fakes such as moto's ``mock_aws`` see
            its S3 calls), and events: ``EventHandlers`` (callables, ``file.py:function``
            references or ``{"Handler", "Pattern", "TimeoutSeconds"}`` objects, see
            ``docs/local-mode.md``) and ``EventBusName`` (an EventBridge bus to send every
            event to).

    .. versionadded:: 0.1.0
    """

    def __init__(
        self,
        store: JobStore | None = None,
        *,
        region: str = "us-east-1",
        environ: Mapping[str, str] | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.store = store or JobStore.from_environ()
        self.region = region
        self._environ = environ
        self.settings = dict(settings or {})
        self._children: list[subprocess.Popen[bytes]] = []
        #: followers delivering events to Python-callable handlers (one per job that has them)
        self.followers: list[CallableFollower] = []

    # --- CreateTrainingJob --------------------------------------------------------------
    def create_training_job(self, **request: Any) -> dict[str, Any]:
        """Start a local training job; returns at once (``{"TrainingJobArn": ...}``).

        Raises:
            LocalJobInputError: bad input, found before any process starts.
            JobAlreadyExistsError: the job name is taken.
        """
        name = validate_job_name(request.get("TrainingJobName"))
        output_default = str(self.settings.get("OutputPath") or default_output_path())
        if self.store.exists(name):
            msg = f"a local training job named {name!r} already exists in {self.store.root}; choose another job name"
            raise JobAlreadyExistsError(msg, job_name=name)
        caller_cwd = str(Path.cwd())
        check_before_training(request, caller_cwd, cloud_instance_types=bool(self.settings.get("CloudInstanceTypes")))
        request = resolve_request_addresses(request, caller_cwd)
        spec = resolve_job_spec(request, default_output_path=output_default, base_dir=caller_cwd)
        handlers = handler_specs(
            self.settings.get("EventHandlers") or (),
            environ=os.environ if self._environ is None else self._environ,
            base_dir=Path(caller_cwd),
        )
        paths = self.store.create(name, request)
        settings = {k: v for k, v in self.settings.items() if k != "EventHandlers"}
        launch = {"Region": self.region, **settings, "OutputPath": spec.output_path, "CallerCwd": caller_cwd}
        launch["EventHandlers"] = [h.to_launch() for h in handlers if not callable(h.handler)]
        atomic_write_json(paths.root / LAUNCH_FILE, launch)
        callables = [h for h in handlers if callable(h.handler)]
        follower = CallableFollower(paths, callables, lambda: self._supervisor_done(name)) if callables else None
        if follower is not None and not self.settings.get("Inline"):
            follower.start()
        if self.settings.get("Inline"):
            self._run_inline(paths)
            if follower is not None:
                follower.run()  # the job has ended: deliver its events now, in this thread
        else:
            self._start_supervisor(paths)
        if follower is not None:
            self.followers.append(follower)
        return {"TrainingJobArn": training_job_arn(self.region, name)}

    def _supervisor_done(self, name: str) -> bool:
        """Whether the job's supervisor has exited (it writes no more events then)."""
        try:
            pid = int(self.store.paths(name).supervisor_pid.read_text())
        except (OSError, ValueError):
            return False
        return pid == os.getpid() or not pid_alive(pid)

    def _start_supervisor(self, paths: JobPaths) -> None:
        env = dict(os.environ if self._environ is None else self._environ)
        paths.logs_dir.mkdir(parents=True, exist_ok=True)
        with open(paths.supervisor_log, "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", SUPERVISOR_MODULE, str(paths.root)],
                env=env,
                cwd=str(paths.root),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._children.append(proc)
        paths.supervisor_pid.write_text(str(proc.pid))

    def _run_inline(self, paths: JobPaths) -> None:
        """Run the supervisor in this process (blocking): for in-process fakes such as moto."""
        # by its entry module's name, as the detached run: the API never links against the supervisor
        # (boto3 for S3 sync is imported only for inline runs, not in every client)
        supervisor = importlib.import_module(SUPERVISOR_MODULE)

        env = dict(os.environ if self._environ is None else self._environ)
        supervisor.Supervisor(paths, env, install_signal_handlers=False).run()

    # --- DescribeTrainingJob / ListTrainingJobs -----------------------------------------
    def _reap(self) -> None:
        self._children = [p for p in self._children if p.poll() is None]

    def _state(self, name: str) -> dict[str, Any]:
        self._reap()
        state = self.store.read_state(name)
        if state.get("TrainingJobStatus") in TERMINAL_STATUSES:
            return state
        paths = self.store.paths(name)
        try:
            pid = int(paths.supervisor_pid.read_text())
        except (OSError, ValueError):
            pid = None
        if pid is not None and not pid_alive(pid):
            state = self.store.read_state(name)  # it may have finished just now
            if state.get("TrainingJobStatus") not in TERMINAL_STATUSES:
                now = time.time()
                state.update(
                    TrainingJobStatus="Failed",
                    SecondaryStatus="Failed",
                    FailureReason=f"InternalServerError: the local supervisor (pid {pid}) exited unexpectedly; "
                    f"see {paths.supervisor_log}",
                    TrainingEndTime=now,
                    LastModifiedTime=now,
                )
                with contextlib.suppress(OSError):  # best effort: reading never requires writing (a full disk)
                    atomic_write_json(paths.state, state)
        return state

    def describe_training_job(self, TrainingJobName: str) -> dict[str, Any]:
        """DescribeTrainingJob for a local job (works from any process).

        Raises:
            JobNotFoundError: no such local job.
        """
        request = self.store.read_request(TrainingJobName)
        state = self._state(TrainingJobName)
        paths = self.store.paths(TrainingJobName)
        launch = read_json(paths.root / LAUNCH_FILE) or {}
        updates = read_json(paths.root / UPDATES_FILE) or {}
        return describe_response(
            request,
            state,
            region=str(launch.get("Region") or self.region),
            output_path=str(state.get("OutputPath") or launch.get("OutputPath") or ""),
            updates=updates,
        )

    def list_training_jobs(
        self,
        *,
        NameContains: str | None = None,
        StatusEquals: str | None = None,
        MaxResults: int = 100,
        **_ignored: Any,
    ) -> dict[str, Any]:
        """ListTrainingJobs over the local store, newest first."""
        out = list_summaries(
            self.store.names(),
            lambda name: summary_response(self.describe_training_job(name)),
            status_key="TrainingJobStatus",
            name_contains=NameContains,
            status_equals=StatusEquals,
            max_results=MaxResults,
        )
        return {"TrainingJobSummaries": out}

    # --- StopTrainingJob / UpdateTrainingJob --------------------------------------------
    def stop_training_job(self, TrainingJobName: str) -> dict[str, Any]:
        """Ask the job to stop (SIGTERM to its processes, SIGKILL after a grace period)."""
        paths = self.store.require(TrainingJobName)
        state = self._state(TrainingJobName)
        if state.get("TrainingJobStatus") not in TERMINAL_STATUSES:
            paths.stop_request.write_text(str(time.time()))
        return {}

    def update_training_job(self, TrainingJobName: str, **changes: Any) -> dict[str, Any]:
        """UpdateTrainingJob: ProfilerConfig / ProfilerRuleConfigurations of a local job.

        The change is recorded atomically in the job's ``updates.json`` (``describe_training_job``
        shows it at once). A running job's supervisor applies it within one poll: it rewrites
        each host's ``profilerconfig.json`` (the system monitor follows a new
        ``ProfilingIntervalInMilliseconds`` live), starts the monitor when profiling gets
        enabled and stops it on ``DisableProfiler: true``, and starts the rule processes of
        new ``ProfilerRuleConfigurations``.

        Raises:
            JobNotFoundError: no such local job.
            LocalJobInputError: an unknown parameter, or a rule name the job already has.
        """
        paths = self.store.require(TrainingJobName)
        allowed = {"ProfilerConfig", "ProfilerRuleConfigurations", "ResourceConfig", "RemoteDebugConfig"}
        unknown = sorted(set(changes) - allowed)
        if unknown:
            msg = field_error_message("UpdateTrainingJob parameter", f"one of {sorted(allowed)}", unknown[0])
            raise LocalJobInputError(msg)
        with open(paths.root / ".updates.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # concurrent updates from several processes: none lost
            self._record_update(paths, TrainingJobName, changes)
        return {"TrainingJobArn": training_job_arn(self.region, TrainingJobName)}

    def _record_update(self, paths: JobPaths, name: str, changes: Mapping[str, Any]) -> None:
        updates = read_json(paths.root / UPDATES_FILE) or {}
        request = self.store.read_request(name)
        for key, value in changes.items():
            if key == "ProfilerConfig":
                _check_profiler_update(value)
                base = dict(updates.get("ProfilerConfig") or request.get("ProfilerConfig") or {})
                base.update(value)
                updates[key] = base
            elif key == "ProfilerRuleConfigurations":
                current = list(updates.get(key) or request.get(key) or [])
                taken = {str(c.get("RuleConfigurationName")) for c in current}
                taken |= {str(c.get("RuleConfigurationName")) for c in request.get("DebugRuleConfigurations") or []}
                for cfg in value:
                    name = cfg.get("RuleConfigurationName")
                    if name in taken:
                        msg = field_error_message(
                            "ProfilerRuleConfigurations[].RuleConfigurationName",
                            "a name the job's rules do not already use",
                            name,
                        )
                        raise LocalJobInputError(msg)
                    taken.add(str(name))
                updates[key] = current + list(value)
            else:
                updates[key] = value
        atomic_write_json(paths.root / UPDATES_FILE, updates)

    # --- waiting ------------------------------------------------------------------------
    def wait_supervisor_exit(self, name: str, *, timeout_s: float = 15.0) -> bool:
        """Wait until the job's supervisor process has exited; returns whether it did."""
        try:
            pid = int(self.store.paths(name).supervisor_pid.read_text())
        except (OSError, ValueError):
            return True
        if pid == os.getpid():  # an inline job ran in this process
            return True
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            self._reap()
            if not pid_alive(pid):
                return True
            time.sleep(0.01)
        return False

    def wait(self, name: str, *, timeout_s: float | None = None, poll_s: float = 0.05) -> dict[str, Any]:
        """Block until the job reaches a terminal status; returns its description."""
        deadline = None if timeout_s is None else time.time() + timeout_s
        while True:
            state = self._state(name)
            if state.get("TrainingJobStatus") in TERMINAL_STATUSES:
                self.wait_supervisor_exit(name)
                return self.describe_training_job(name)
            if deadline is not None and time.time() > deadline:
                msg = f"local job {name!r} did not finish within {timeout_s} s"
                raise TimeoutError(msg)
            time.sleep(poll_s)


def _check_profiler_update(value: Any) -> None:
    """Reject an UpdateTrainingJob ``ProfilerConfig`` the monitor could not apply."""
    if not isinstance(value, Mapping):
        raise LocalJobInputError(field_error_message("ProfilerConfig", "a mapping", value))
    interval = value.get("ProfilingIntervalInMilliseconds")
    if interval is not None and (isinstance(interval, bool) or not isinstance(interval, int) or interval <= 0):
        msg = field_error_message("ProfilerConfig.ProfilingIntervalInMilliseconds", "a positive integer", interval)
        raise LocalJobInputError(msg)
    disable = value.get("DisableProfiler")
    if disable is not None and not isinstance(disable, bool):
        raise LocalJobInputError(field_error_message("ProfilerConfig.DisableProfiler", "a bool", disable))
