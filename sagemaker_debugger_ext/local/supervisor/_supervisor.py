"""The detached supervisor of one local job: ``python -m sagemaker_debugger_ext.local.supervisor._supervisor DIR``.

It prepares the hosts, starts the rules, the system monitor and the training, watches them (stop requests,
StopTraining, MaxRuntimeInSeconds), syncs the LocalPaths, and is the only writer of ``state.json``.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ..._container_env import CONFIG_FILE_PROFILER
from ..._exceptions import DiskFullError, StorageError
from ...request._paths import debugger_artifacts_path, profiler_artifacts_path, tensorboard_artifacts_path
from ...storage import open_storage
from ..store._job_spec import JobSpec, output_uri, profiler_enabled, resolve_job_spec
from ..store._job_store import LAUNCH_FILE, JobPaths, JobStore, atomic_write_json, read_json
from ._child_process import ChildProcess, failure_reason, free_port, terminate_all
from ._container import HostSetup, build_host
from ._disk import DiskReserve, disk_full_reason, local_output_folders
from ._event_dispatch import EventDispatcher
from ._inputs_fetch import fetch_channels, fetch_code
from ._launch import LaunchOptions, training_grace_s
from ._profiler_updates import UpdateWatcher, write_host_profiler_config
from ._rule_containers import RuleContainer, rule_specs
from ._sync import Syncer, SyncTarget, SyncThread, pack_folder, write_end_markers

__all__ = ["Supervisor", "main"]


_LOG = logging.getLogger(__name__)


class Supervisor:
    """Runs one job to its end. Construct, then :meth:`run`."""

    def __init__(self, paths: JobPaths, environ: dict[str, str], *, install_signal_handlers: bool = True) -> None:
        self.paths = paths
        self.install_signal_handlers = install_signal_handlers
        self.environ = environ
        self.request: dict[str, Any] = read_json(paths.request) or {}
        self.options = LaunchOptions.from_json(read_json(paths.root / LAUNCH_FILE) or {})
        self.state: dict[str, Any] = read_json(paths.state) or {}
        self.poll_s = self.options.poll_s
        self.grace_s = self.options.stop_grace_s
        self.training_grace_s = training_grace_s(self.request, self.grace_s)  # the service's for ml.* types
        self.rule_wait_s = self.options.rule_wait_s
        self.stop_reason: str | None = None
        self.final_secondary = "Stopped"
        self.rules: list[RuleContainer] = []
        self.training: list[ChildProcess] = []
        self.hosts: list[HostSetup] = []
        self.monitor: ChildProcess | None = None
        self.retired_monitors: list[ChildProcess] = []
        self.syncer: Syncer | None = None
        self.profiler_active = profiler_enabled(self.request)
        self._profiler_ever_enabled = self.profiler_active
        self._updates = UpdateWatcher(paths)
        self._signalled = threading.Event()
        self.events = EventDispatcher(paths, self.options.event_settings(), environ)
        self._reserve = DiskReserve(paths.root / ".disk-reserve")

    # --- state --------------------------------------------------------------------------
    def write(self, **updates: Any) -> None:
        """Apply ``updates`` and persist the state atomically."""
        self.state.update(updates)
        self.state["Rules"] = {r.spec.name: dict(r.status) for r in self.rules}
        pids: dict[str, int] = {"supervisor": os.getpid()}
        pids.update({c.name: c.pid for c in self.training})
        pids.update({r.process.name: r.process.pid for r in self.rules if r.process is not None})
        if self.monitor is not None:
            pids["monitor"] = self.monitor.pid
        self.state["Pids"] = pids
        self.state["LastModifiedTime"] = time.time()
        try:
            atomic_write_json(self.paths.state, self.state)
        except DiskFullError as exc:
            # the job folder's disk is full: give back the reserve and try once more; else
            # keep the state in memory (the final state is written with the reserve's room)
            if not self._reserve.release():
                _LOG.warning("job state not saved: %s", exc)
                return
            atomic_write_json(self.paths.state, self.state)
        self.events.observe_state(self.state, self.request)

    def transition(self, status: str, message: str, **updates: Any) -> None:
        """Record a SecondaryStatus transition."""
        now = time.time()
        transitions = self.state.setdefault("SecondaryStatusTransitions", [])
        if transitions and "EndTime" not in transitions[-1]:
            transitions[-1]["EndTime"] = now
        transitions.append({"Status": status, "StartTime": now, "StatusMessage": message})
        self.write(SecondaryStatus=status, **updates)

    # --- phases -------------------------------------------------------------------------
    def _prepare(self, spec: JobSpec) -> None:
        self.transition("Downloading", "Downloading input data and code to the local job folder")
        code_dir = fetch_code(spec, self.paths.root)
        channels = fetch_channels(spec, self.paths.root)
        port = free_port()
        worker_ports = [free_port() for _ in range(spec.instance_count)]
        base_env = dict(self.environ)
        for rank in range(spec.instance_count):
            self.hosts.append(
                build_host(
                    spec=spec,
                    request=self.request,
                    job=self.paths,
                    rank=rank,
                    master_port=port,
                    code_dir=code_dir,
                    channel_sources=channels,
                    base_env=base_env,
                    worker_ports=worker_ports,
                )
            )
        for folder in (self.paths.debug_dir, self.paths.tensorboard_dir, self.paths.profiler_dir):
            folder.mkdir(parents=True, exist_ok=True)

    def _start_side_processes(self, spec: JobSpec) -> None:
        self.rules.extend(self._rule_containers(spec, self.request))
        if self.profiler_active:
            self._start_monitor(spec, self.request["ProfilerConfig"])

    def _start_monitor(self, spec: JobSpec, config: dict[str, Any]) -> None:
        """Start the system monitor of host algo-1, watching its ``profilerconfig.json``."""
        if not self.options.start_monitor or self.monitor is not None:
            return
        interval = int(config.get("ProfilingIntervalInMilliseconds") or 500)
        argv = [
            sys.executable, "-m", "sagemaker_debugger_ext.profiler", "monitor",
            "--output-dir", str(self.paths.profiler_dir), "--interval-ms", str(interval),
            "--host", spec.hosts[0], "--host-index", "1",
        ]  # fmt: skip
        if self.hosts:
            argv += ["--config-file", str(self.hosts[0].paths.config_file(CONFIG_FILE_PROFILER))]
        env = {**self.environ, "PYTHONUNBUFFERED": "1"}
        self.monitor = ChildProcess(
            "monitor", argv, env=env, cwd=self.paths.root, log_path=self.paths.logs_dir / "monitor.log"
        )

    def _apply_updates(self, spec: JobSpec) -> None:
        """Apply a new UpdateTrainingJob (``updates.json``) to the running job."""
        updates = self._updates.poll()
        if updates is None:
            return
        config = updates.get("ProfilerConfig")
        if isinstance(config, dict):
            for host in self.hosts:
                path = host.paths.config_file(CONFIG_FILE_PROFILER)
                write_host_profiler_config(path, config, local_path=self.paths.profiler_dir)
            self.profiler_active = not bool(config.get("DisableProfiler", False))
            if self.profiler_active:
                self._profiler_ever_enabled = True
                self._add_profiler_sync(spec, config)
                self._start_monitor(spec, config)
            elif self.monitor is not None:
                self.monitor.terminate()  # reaped at the end of the job
                self.retired_monitors.append(self.monitor)
                self.monitor = None
        known = {r.spec.name for r in self.rules}
        new_rules = [
            c for c in updates.get("ProfilerRuleConfigurations") or [] if c.get("RuleConfigurationName") not in known
        ]
        if new_rules:
            request = {"TrainingJobName": spec.job_name, "ProfilerRuleConfigurations": new_rules}
            for container in self._rule_containers(spec, request):
                self.rules.append(container)
                if self.syncer is not None:
                    self.syncer.add(SyncTarget(container.output_dir, container.spec.output_uri))
        self.write()

    def _rule_containers(self, spec: JobSpec, request: dict[str, Any]) -> list[RuleContainer]:
        modules = {
            "debug": self.options.debug_rule_module,
            "profiler": self.options.profiler_rule_module,
        }
        env = {**self.environ, "PYTHONUNBUFFERED": "1"}
        region = self.options.region
        poll = self.options.rule_poll_s
        specs = rule_specs(request, self.paths, output_path=spec.output_path, region=region, modules=modules)
        return [RuleContainer(rs, self.paths, env=env, poll_interval_s=poll) for rs in specs]

    def _add_profiler_sync(self, spec: JobSpec, config: dict[str, Any]) -> None:
        if self.syncer is None or any(t.local_dir == self.paths.profiler_dir for t in self.syncer.targets):
            return
        base = config.get("S3OutputPath") or spec.output_path
        self.syncer.add(SyncTarget(self.paths.profiler_dir, profiler_artifacts_path(str(base), spec.job_name)))

    def _sync_targets(self, spec: JobSpec) -> list[SyncTarget]:
        targets = []
        if self.request.get("DebugHookConfig"):
            base = self.request["DebugHookConfig"].get("S3OutputPath") or spec.output_path
            targets.append(SyncTarget(self.paths.debug_dir, debugger_artifacts_path(str(base), spec.job_name)))
        if self.request.get("TensorBoardOutputConfig"):
            base = self.request["TensorBoardOutputConfig"].get("S3OutputPath") or spec.output_path
            targets.append(SyncTarget(self.paths.tensorboard_dir, tensorboard_artifacts_path(str(base), spec.job_name)))
        if profiler_enabled(self.request):
            base = self.request["ProfilerConfig"].get("S3OutputPath") or spec.output_path
            targets.append(SyncTarget(self.paths.profiler_dir, profiler_artifacts_path(str(base), spec.job_name)))
        targets += [SyncTarget(r.output_dir, r.spec.output_uri) for r in self.rules]
        return targets

    def _check_stop(self, spec: JobSpec) -> None:
        if self.stop_reason is not None:
            return
        if self.paths.stop_request.exists() or self._signalled.is_set():
            self.stop_reason = "Stopped by StopTrainingJob"
        elif self.paths.stop_file.exists():
            data = read_json(self.paths.stop_file) or {}
            rule = data.get("RuleConfigurationName", "?")
            self.stop_reason = f"Training stopped by rule {rule}: {data.get('Reason', 'StopTraining action')}"
        elif self.training and time.time() - self.training[0].started_at > spec.max_runtime_s:
            self.stop_reason = f"MaxRuntimeInSeconds ({spec.max_runtime_s}) exceeded"
            self.final_secondary = "MaxRuntimeExceeded"
        else:
            return
        self.state["StopReason"] = self.stop_reason
        self.write(TrainingJobStatus="Stopping")
        self.transition("Stopping", self.stop_reason)
        for child in self.training:
            child.terminate()

    def _watch_training(self, spec: JobSpec) -> None:
        while True:
            self._check_stop(spec)
            if self.stop_reason is None:
                self._apply_updates(spec)
            changed = False
            for rule in self.rules:
                before = dict(rule.status)
                rule.refresh()
                changed |= before != rule.status
            if changed:
                self.write()
            self.events.poll()
            if all(c.poll() is not None for c in self.training):
                return
            for child in self.training:
                child.kill_if_overdue(self.training_grace_s)
            time.sleep(self.poll_s)

    def _finish_rules(self) -> None:
        if self.stop_reason is not None:
            for rule in self.rules:
                rule.refresh()
                rule.stop(self.stop_reason)
            self.write()
        deadline = time.time() + (self.grace_s if self.stop_reason else self.rule_wait_s)
        while time.time() < deadline:
            for rule in self.rules:
                rule.refresh()
            self.write()
            if all(r.terminal for r in self.rules):
                break
            if self._signalled.is_set() and self.stop_reason is None:
                break
            time.sleep(self.poll_s)
        for rule in self.rules:
            rule.stop()
        procs = [r.process for r in self.rules if r.process is not None]
        terminate_all(procs, grace_s=self.grace_s)
        for rule in self.rules:
            rule.refresh()
        self.write()

    def _upload(self, spec: JobSpec, syncer: Syncer) -> None:
        model_dir = self.hosts[0].paths.model_dir if self.hosts else None
        out = open_storage(output_uri(spec, "output"))
        if model_dir is not None:
            tar = pack_folder(model_dir, into=self.paths.root / "packed" / "model.tar.gz")
            out.upload_file(tar, "model.tar.gz")
            data_dir = self.hosts[0].paths.output_data_dir
            if data_dir.is_dir() and any(data_dir.iterdir()):
                out.upload_file(
                    pack_folder(data_dir, into=self.paths.root / "packed" / "output.tar.gz"), "output.tar.gz"
                )
        syncer.sync()

    def run(self) -> int:
        """Run the job to its end; returns the supervisor's exit code."""
        if self.install_signal_handlers:
            signal.signal(signal.SIGTERM, lambda *_: self._signalled.set())
            signal.signal(signal.SIGINT, lambda *_: self._signalled.set())
        self.paths.supervisor_pid.write_text(str(os.getpid()))
        self._reserve.take()
        failure: str | None = None
        sync_thread: SyncThread | None = None
        try:
            spec = resolve_job_spec(
                self.request,
                default_output_path=self.options.output_path,
                base_dir=self.options.caller_cwd,
            )
            self.state["OutputPath"] = spec.output_path
            self._prepare(spec)
            self._start_side_processes(spec)
            syncer = self.syncer = Syncer(self._sync_targets(spec))
            self._apply_updates(spec)  # an update made while the job was starting
            sync_thread = SyncThread(syncer, self.options.sync_interval_s)
            sync_thread.start()
            self._check_stop(spec)
            if self.stop_reason is None:
                for host in self.hosts:
                    self.training.append(
                        ChildProcess(
                            host.host, host.argv, env=host.env, cwd=host.paths.code_dir,
                            log_path=self.paths.host_log(host.host),
                        )
                    )  # fmt: skip
                self.transition("Training", "Training in progress", TrainingStartTime=time.time())
                self._watch_training(spec)
            terminate_all(self.training, grace_s=self.training_grace_s)
            if self.stop_reason is not None:
                self._finish_rules()  # stop them before they can read the end marker as a normal end
            write_end_markers(self.paths, profiler=self._profiler_ever_enabled)
            monitors = self.retired_monitors + ([self.monitor] if self.monitor is not None else [])
            if monitors:
                terminate_all(monitors, grace_s=self.grace_s)
            if self.stop_reason is None:
                for child, host in zip(self.training, self.hosts, strict=False):
                    if child.returncode:
                        failure = failure_reason(
                            host=host.host, exit_code=int(child.returncode), log_path=child.log_path,
                            failure_file=host.paths.failure_file, argv=host.argv,
                        )  # fmt: skip
                        break
                self._finish_rules()
            sync_thread.halt.set()
            sync_thread.join()
            self.transition("Uploading", "Uploading generated training model and artifacts")
            try:
                self._upload(spec, syncer)
            except StorageError as exc:
                failure = failure or (
                    f"ClientError: uploading artifacts to {spec.output_path} failed: {exc}; "
                    f"the local copy is kept in {self.paths.artifacts_dir}"
                )
        except DiskFullError as exc:
            failure = f"ClientError: {exc}"
            self._kill_everything()
        except Exception as exc:  # noqa: BLE001 - the supervisor's process boundary: record the failure, clean up
            failure = f"InternalServerError: local platform error: {type(exc).__name__}: {exc}"
            self._kill_everything()
        finally:
            if sync_thread is not None:
                sync_thread.halt.set()
        if failure is not None:
            outputs = local_output_folders(self.state.get("OutputPath"))
            failure = disk_full_reason(failure, [self.paths.root, *outputs])
        try:
            self._finalise(failure)
        finally:
            self._reserve.release()
        self.events.close()
        return 0

    def _kill_everything(self) -> None:
        children = list(self.training) + [r.process for r in self.rules if r.process is not None]
        if self.monitor is not None:
            children.append(self.monitor)
        children += self.retired_monitors
        terminate_all(children, grace_s=self.grace_s)

    def _finalise(self, failure: str | None) -> None:
        if failure is not None:
            self.transition("Failed", failure.splitlines()[0][:256], FailureReason=failure, TrainingJobStatus="Failed")
        elif self.stop_reason is not None:
            self.transition(self.final_secondary, self.stop_reason, TrainingJobStatus="Stopped")
        else:
            self.transition("Completed", "Training job completed", TrainingJobStatus="Completed")
        last = self.state["SecondaryStatusTransitions"][-1]
        last["EndTime"] = last["StartTime"]
        self.write(TrainingEndTime=last["StartTime"])


def main(argv: list[str] | None = None) -> int:
    """Entry point of the detached supervisor process."""
    args = sys.argv[1:] if argv is None else argv
    job_dir = Path(args[0])
    store = JobStore(job_dir.parent.parent)
    paths = store.require(job_dir.name)
    return Supervisor(paths, dict(os.environ)).run()


if __name__ == "__main__":
    sys.exit(main())
