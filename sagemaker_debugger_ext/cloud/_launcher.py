"""The training container's side of a self-hosted job: the hook's config, the monitor, the sync.

SageMaker runs ``sagemaker_debugger_ext_launch.py`` from the job's source bundle, which calls
:func:`main`. It does in the container what the Debugger service did around it:

1. writes the bundled ``DebugHookConfig`` / ``ProfilerConfig`` as ``debughookconfig.json`` /
   ``profilerconfig.json`` (their ``LocalPath`` a folder of this host) and points
   ``SMDEBUG_CONFIG_FILE_PATH`` / ``SMPROFILER_CONFIG_PATH`` at them, so
   ``Hook.create_from_json_file()``, the framework hooks and the trainer integrations work
   unchanged (``TensorBoardOutputConfig`` stays in the request: SageMaker still handles it);
2. starts the system monitor when profiling is on;
3. runs the user's entry point with the job's arguments;
4. mirrors the hook's and the profiler's folders to ``<S3OutputPath>/<job>/debug-output`` and
   ``.../profiler-output`` every few seconds, and once more at the end, after writing the
   end-of-training marker the rule jobs wait for.

SIGTERM (StopTrainingJob) is passed to the entry point; the final sync still runs.

Under ``torchrun`` the toolkit starts one launcher per process: the launchers of one host elect
one leader (``_host_group``), which alone starts the monitor and the sync and, after every
rank's script has ended, writes the end marker; the others only run their script with the
hook's config. On a multi-host job only the first host writes the end marker, once every
host's leader has synced its last files (``JobHosts``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from .._container_env import (
    CONFIG_FILE_PROFILER,
    SELF_HOSTED_SYNC_SECONDS_ENV,
    SM_CURRENT_HOST,
    SM_OUTPUT_DIR,
    TRAINING_JOB_NAME_ENV,
    ContainerPaths,
)
from ..integrations import _autopatch as trainer_integrations
from ..local.store._job_spec import profiler_enabled
from ..local.store._job_store import JobPaths
from ..local.supervisor._child_process import ChildProcess, terminate_all
from ..local.supervisor._container import _config_files
from ..local.supervisor._sync import Syncer, SyncTarget, SyncThread, write_end_markers
from ..request._paths import debugger_artifacts_path, profiler_artifacts_path
from ._bundle import BUNDLE_CONFIG
from ._host_group import HostGroup, JobHosts

__all__ = ["SYNC_SECONDS_ENV", "main"]

SYNC_SECONDS_ENV = SELF_HOSTED_SYNC_SECONDS_ENV
_DEFAULT_SYNC_S = 5.0
RANKS_WAIT_S = 3600.0  # the leader's wait for the other ranks' scripts (torchrun waits for them too)
STOP_GRACE_S = 30.0  # ... once the job is being stopped: SageMaker kills 120 s after SIGTERM


def _sync_targets(config: Mapping[str, Any], work: JobPaths, job: str) -> list[SyncTarget]:
    targets = []
    hook = config.get("DebugHookConfig")
    if hook:
        targets.append(SyncTarget(work.debug_dir, debugger_artifacts_path(str(hook["S3OutputPath"]), job)))
    if profiler_enabled(config):
        s3 = str(config["ProfilerConfig"].get("S3OutputPath") or "")
        if s3:
            targets.append(SyncTarget(work.profiler_dir, profiler_artifacts_path(s3, job)))
    return targets


def _start_monitor(config: Mapping[str, Any], work: JobPaths, env: Mapping[str, str]) -> ChildProcess | None:
    if not profiler_enabled(config):
        return None
    host = env.get(SM_CURRENT_HOST) or "algo-1"
    index = host.rsplit("-", 1)[-1] if host.startswith("algo-") else "1"
    interval = int(config["ProfilerConfig"].get("ProfilingIntervalInMilliseconds") or 500)
    argv = [
        sys.executable, "-m", "sagemaker_debugger_ext.profiler", "monitor",
        "--output-dir", str(work.profiler_dir), "--interval-ms", str(interval),
        "--host", host, "--host-index", index,
        "--config-file", str(ContainerPaths(root=work.root).config_file(CONFIG_FILE_PROFILER)),
    ]  # fmt: skip
    return ChildProcess("monitor", argv, env=env, cwd=work.root, log_path=work.logs_dir / "monitor.log")


def _finish(
    config: Mapping[str, Any], work: JobPaths, syncer: Syncer, hosts: JobHosts | None, stopping: threading.Event
) -> None:
    """The last sync and the end markers: on a multi-host job, only the first host writes them,
    after every host has synced its last files (``JobHosts``)."""
    if hosts is None:
        write_end_markers(work, profiler=profiler_enabled(config))
        syncer.sync()
        return
    syncer.sync()
    hosts.report_ended()
    if hosts.first:
        missing = hosts.wait_for_all(RANKS_WAIT_S, stop=stopping, grace_s=STOP_GRACE_S)
        if missing:
            print(f"sagemaker-debugger-ext: ending without the last files of {', '.join(missing)}", flush=True)
        write_end_markers(work, profiler=profiler_enabled(config))
        syncer.sync()


def main(argv: Sequence[str], *, code_dir: str | os.PathLike[str], environ: Mapping[str, str] | None = None) -> int:
    """Run the bundled entry point with ``argv`` under the self-hosted Debugger; returns its exit code."""
    env = dict(os.environ if environ is None else environ)
    code = Path(code_dir)
    config = json.loads((code / BUNDLE_CONFIG).read_text())
    job = env.get(TRAINING_JOB_NAME_ENV) or str(config.get("TrainingJobName") or "job")
    container = ContainerPaths(root=Path(env.get(SM_OUTPUT_DIR) or "/opt/ml/output").parent)
    work = JobPaths(container.root / "sagemaker-debugger-ext")
    for folder in (work.debug_dir, work.profiler_dir, work.logs_dir):
        folder.mkdir(parents=True, exist_ok=True)
    request = {k: config[k] for k in ("DebugHookConfig", "ProfilerConfig") if config.get(k)}
    env.update(_config_files(request, work, ContainerPaths(root=work.root)))
    group = HostGroup(work.root / "launchers", HostGroup.expected_from(env))
    stopping = threading.Event()
    thread = monitor = syncer = None
    if group.leader:
        syncer = Syncer(_sync_targets(config, work, job))
        thread = SyncThread(syncer, float(env.get(SYNC_SECONDS_ENV) or _DEFAULT_SYNC_S))
        thread.start()
        monitor = _start_monitor(config, work, env)
    entry = str(code / str(config["EntryPoint"]))
    child = subprocess.Popen(
        [sys.executable, *trainer_integrations.launcher_args(env), entry, *argv], env=env, cwd=code
    )

    def _forward(signum: int, frame: FrameType | None) -> None:
        stopping.set()
        child.send_signal(signum)

    previous = signal.signal(signal.SIGTERM, _forward)
    try:
        exit_code = child.wait()
    finally:
        group.script_ended()
        if group.leader:
            group.wait_for_others(RANKS_WAIT_S, stop=stopping, grace_s=STOP_GRACE_S)
        signal.signal(signal.SIGTERM, previous)
        if monitor is not None:
            terminate_all([monitor], grace_s=10.0)
        if thread is not None and syncer is not None:
            thread.halt.set()
            thread.join(timeout=60)
            _finish(config, work, syncer, JobHosts.of_job(config, env, job), stopping)
        group.close()
    return exit_code if exit_code >= 0 else 128 - exit_code
