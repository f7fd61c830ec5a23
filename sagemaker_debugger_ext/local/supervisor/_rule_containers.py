"""Rule containers: one process per DebugRuleConfiguration / ProfilerRuleConfiguration.

Each process runs ``python -m <module> run --trial-path ... --rule-name ...
--rule-parameters-file ... --output-dir ... --status-file ... --stop-file ...``
and reports through its status file; this module turns those files, and the processes'
exit codes, into ``DebugRuleEvaluationStatuses`` entries.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ...request._paths import rule_output_path
from ...rule_contract._status import EvaluationStatus, truncate_details
from ..api._describe import rule_job_arn
from ..store._job_store import JobPaths, atomic_write_json, read_json
from ._child_process import ChildProcess, _tail

__all__ = [
    "DEBUG_RULE_MODULE",
    "PROFILER_RULE_MODULE",
    "RuleContainer",
    "RuleSpec",
    "rule_specs",
]

DEBUG_RULE_MODULE = "sagemaker_debugger_ext.rules"
PROFILER_RULE_MODULE = "sagemaker_debugger_ext.profiler.rules"
TERMINAL = frozenset(s.value for s in EvaluationStatus if s.terminal)
_STOPPING = (EvaluationStatus.STOPPING, EvaluationStatus.STOPPED)


@attrs.frozen(kw_only=True)
class RuleSpec:
    """One rule process to start."""

    name: str
    kind: str  # "debug" | "profiler"
    module: str
    trial_path: Path
    parameters: dict[str, str]
    output_uri: str
    arn: str


def rule_specs(
    request: Mapping[str, Any],
    job: JobPaths,
    *,
    output_path: str,
    region: str,
    modules: Mapping[str, str],
) -> list[RuleSpec]:
    """The rule processes a request asks for.

    Args:
        request: the CreateTrainingJob request.
        job: the job's folder.
        output_path: the job's resolved ``OutputDataConfig.S3OutputPath``.
        region: for the rule job ARNs.
        modules: ``{"debug": module, "profiler": module}`` to run with ``-m``.
    """
    job_name = str(request["TrainingJobName"])
    out = []
    for key, kind, trial in (
        ("DebugRuleConfigurations", "debug", job.debug_dir),
        ("ProfilerRuleConfigurations", "profiler", job.profiler_dir),
    ):
        for cfg in request.get(key) or []:
            name = str(cfg["RuleConfigurationName"])
            base = str(cfg.get("S3OutputPath") or output_path)
            out.append(
                RuleSpec(
                    name=name,
                    kind=kind,
                    module=modules[kind],
                    trial_path=trial,
                    parameters={str(k): str(v) for k, v in (cfg.get("RuleParameters") or {}).items()},
                    output_uri=rule_output_path(base, job_name, name),
                    arn=rule_job_arn(region, job_name, name),
                )
            )
    return out


class RuleContainer:
    """A running rule process and its latest reported status."""

    def __init__(
        self,
        spec: RuleSpec,
        job: JobPaths,
        *,
        env: Mapping[str, str],
        use_stop_file: bool = True,
        poll_interval_s: float | None = None,
    ) -> None:
        self.spec = spec
        self.dir = job.rule_dir(spec.name)
        self.output_dir = self.dir / "output"
        self.status_file = self.dir / "status.json"
        self.output_dir.mkdir(parents=True, exist_ok=True)
        spec.trial_path.mkdir(parents=True, exist_ok=True)
        params_file = self.dir / "parameters.json"
        atomic_write_json(params_file, spec.parameters)
        self.status: dict[str, Any] = {
            "RuleConfigurationName": spec.name,
            "RuleEvaluationJobArn": spec.arn,
            "RuleEvaluationStatus": EvaluationStatus.IN_PROGRESS.value,
            "LastModifiedTime": time.time(),
        }
        self.process: ChildProcess | None = None
        self._stop_reason: str | None = None
        self.log_path = job.rule_log(spec.name)
        if importlib.util.find_spec(spec.module.split(".")[0]) is None or not _module_exists(spec.module):
            self._set(EvaluationStatus.ERROR, f"rule runner module {spec.module!r} is not installed")
            return
        argv = [
            sys.executable,
            "-m",
            spec.module,
            "run",
            "--trial-path",
            str(spec.trial_path),
            "--rule-name",
            spec.name,
            "--rule-parameters-file",
            str(params_file),
            "--output-dir",
            str(self.output_dir),
            "--status-file",
            str(self.status_file),
        ]
        if use_stop_file:
            argv += ["--stop-file", str(job.stop_file)]
        if poll_interval_s is not None and spec.module == DEBUG_RULE_MODULE:
            argv += ["--poll-interval", str(poll_interval_s)]
        self.process = ChildProcess(f"rule:{spec.name}", argv, env=env, cwd=self.dir, log_path=self.log_path)

    def _set(self, new: EvaluationStatus, details: str | None = None) -> None:
        status = new.value
        changed = self.status.get("RuleEvaluationStatus") != status or (
            details is not None and self.status.get("StatusDetails") != details
        )
        if changed:
            self.status["RuleEvaluationStatus"] = status
            if details:
                self.status["StatusDetails"] = truncate_details(details)
            self.status["LastModifiedTime"] = time.time()

    @property
    def terminal(self) -> bool:
        """Whether the rule reached a final status and its process ended."""
        running = self.process is not None and self.process.poll() is None
        return not running and self.status["RuleEvaluationStatus"] in TERMINAL

    def refresh(self) -> None:
        """Read the status file and the process state."""
        reported = read_json(self.status_file)
        if isinstance(reported, dict) and reported.get("RuleEvaluationStatus"):
            status = str(reported["RuleEvaluationStatus"])
            stopping = self.status["RuleEvaluationStatus"] in _STOPPING
            details = reported.get("StatusDetails")
            changed = status != self.status["RuleEvaluationStatus"] or details != self.status.get("StatusDetails")
            # Once stopping, only a finding, an error or Stopped counts: "NoIssuesFound" would
            # only mean the rule read the end-of-training marker of a stopped job.
            if changed and (
                not stopping
                or status in (EvaluationStatus.ISSUES_FOUND, EvaluationStatus.ERROR, EvaluationStatus.STOPPED)
            ):
                self.status["RuleEvaluationStatus"] = status
                if details:
                    self.status["StatusDetails"] = truncate_details(str(details))
                self.status["LastModifiedTime"] = float(reported.get("LastModifiedTime") or time.time())
        if self.process is None or self.process.poll() is None:
            return
        code = self.process.returncode
        current = self.status["RuleEvaluationStatus"]
        if current in _STOPPING:
            self._set(EvaluationStatus.STOPPED, self._stopped_details())
        elif current == EvaluationStatus.IN_PROGRESS:
            if code == 0:
                self._set(EvaluationStatus.ERROR, "rule process exited without reporting a final status")
            else:
                tail = _tail(self.log_path, 4096).strip().splitlines()
                self._set(EvaluationStatus.ERROR, f"rule process exited with code {code}: " + " | ".join(tail[-3:]))

    def stop(self, reason: str | None = None) -> None:
        """Ask the process to stop (SIGTERM); an unfinished evaluation becomes Stopping/Stopped,
        its StatusDetails saying why (``reason``: the job's stop reason) and what it had seen."""
        if reason and self._stop_reason is None:
            self._stop_reason = reason
        if self.status["RuleEvaluationStatus"] == EvaluationStatus.IN_PROGRESS:
            self._set(EvaluationStatus.STOPPING, self._stopped_details())
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
        elif self.status["RuleEvaluationStatus"] == EvaluationStatus.STOPPING:
            self._set(EvaluationStatus.STOPPED, self._stopped_details())

    def _stopped_details(self) -> str:
        """StatusDetails of a rule stopped before it finished: why, then its evidence so far."""
        previous = str(self.status.get("StatusDetails") or "")
        if previous.startswith("Stopped before"):
            return previous
        why = f"the training job stopped ({self._stop_reason})" if self._stop_reason else "the job ended"
        sentence = f"Stopped before the evaluation finished: {why}."
        return f"{sentence} So far: {previous}" if previous else sentence


def _module_exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
