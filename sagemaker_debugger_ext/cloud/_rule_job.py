"""The Processing container's side of a self-hosted rule: the package's rule entry point, followed.

``python -m sagemaker_debugger_ext.cloud rule-job ...`` runs ``python -m
sagemaker_debugger_ext.rules run`` (the one rule runner, Debugger and profiler rules alike)
against the trial on S3 and, while it runs:

- copies its status file to ``<rule output>/status.json`` on S3 at every change, so
  ``describe()`` / ``rule_job_summary()`` show the rule's state while training runs;
- asks ``DescribeTrainingJob`` how the training job is doing: once it has ended (Completed,
  Failed or Stopped) the rule gets ``--final-grace-seconds`` for its final evaluation and is then
  stopped, so no rule job outlives its training job by more than that.

It exits 1 when the rule ended in ``Error`` (the processing job is then ``Failed``), else 0.
The rule's reports in ``--output-dir`` reach ``rule-output/<Rule>/`` as the job's
ProcessingOutput.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from .._rule_status import EvaluationStatus, status_record
from ..format._files import atomic_write
from ..local._runner import ChildProcess
from ..storage import open_storage

__all__ = ["build_rule_job_parser", "rule_job_main"]

_TERMINAL_TRAINING = ("Completed", "Failed", "Stopped")
_PAUSE_S = 0.2


def build_rule_job_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the rule job's flags to ``parser``."""
    parser.add_argument("--training-job-name", required=True)
    parser.add_argument("--trial-path", required=True, help="s3:// URI of debug-output or profiler-output")
    parser.add_argument("--rule-name", required=True)
    parser.add_argument("--rule-parameters-file", required=True)
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--status-uri", required=True, help="where the status JSON is copied (s3:// or file://)")
    parser.add_argument("--poll-seconds", type=float, default=10.0, help="between DescribeTrainingJob calls")
    parser.add_argument("--final-grace-seconds", type=float, default=120.0)
    return parser


def _publish(status_file: Path, uri: str, last: bytes | None) -> bytes | None:
    try:
        data = status_file.read_bytes()
    except OSError:
        return last
    if data and data != last:
        parent, _, name = uri.rpartition("/")
        open_storage(parent).write_bytes(name, data)
        return data
    return last


def _training_status(client: Any, name: str) -> str | None:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        return str(client.describe_training_job(TrainingJobName=name)["TrainingJobStatus"])
    except (BotoCoreError, ClientError) as exc:
        print(f"DescribeTrainingJob({name}) failed, retried at the next poll: {exc}", flush=True)
        return None


def follow(args: argparse.Namespace, *, training_status: Callable[[], str | None]) -> int:
    """Run the rule and follow it and the training job; returns the exit code."""
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    status_file = out / "status.json"
    atomic_write(status_file, json.dumps(status_record(EvaluationStatus.IN_PROGRESS)).encode())
    argv = [
        sys.executable, "-m", "sagemaker_debugger_ext.rules", "run",
        "--trial-path", args.trial_path, "--rule-name", args.rule_name,
        "--rule-parameters-file", args.rule_parameters_file,
        "--output-dir", str(out), "--status-file", str(status_file),
    ]  # fmt: skip
    child = ChildProcess(f"rule:{args.rule_name}", argv, env=_env(), cwd=out, log_path=out.parent / "rule.log")
    stop: dict[str, str | None] = {"why": None}

    def _on_sigterm(signum: int, frame: FrameType | None) -> None:
        stop["why"] = "StopProcessingJob"

    signal.signal(signal.SIGTERM, _on_sigterm)
    published: bytes | None = None
    ended_at: float | None = None
    ended_status = ""
    next_poll = 0.0
    while child.poll() is None:
        published = _publish(status_file, args.status_uri, published)
        now = time.monotonic()
        if ended_at is None and now >= next_poll:
            next_poll = now + args.poll_seconds
            status = training_status()
            if status in _TERMINAL_TRAINING:
                ended_at, ended_status = now, str(status)
        overdue = ended_at is not None and now - ended_at > args.final_grace_seconds
        if overdue or stop["why"]:
            child.terminate()
            child.kill_if_overdue(10.0)
        time.sleep(_PAUSE_S)
    _log_tail(out.parent / "rule.log")
    final = _final_status(status_file, ended_status, stop["why"])
    _publish(status_file, args.status_uri, published)
    return 1 if final == EvaluationStatus.ERROR.value else 0


def _final_status(status_file: Path, training: str, stopped_by: str | None) -> str:
    """The reported status; a rule stopped before it finished becomes Stopped, saying why."""
    try:
        record = json.loads(status_file.read_text())
    except (OSError, ValueError):
        record = {}
    status = str(record.get("RuleEvaluationStatus") or EvaluationStatus.IN_PROGRESS.value)
    if status in (EvaluationStatus.IN_PROGRESS.value, EvaluationStatus.STOPPING.value):
        why = stopped_by or (f"the training job ended ({training})" if training else "the rule process ended")
        so_far = str(record.get("StatusDetails") or "")
        details = f"Stopped before the evaluation finished: {why}." + (f" So far: {so_far}" if so_far else "")
        atomic_write(status_file, json.dumps(status_record(EvaluationStatus.STOPPED, details)).encode())
        return EvaluationStatus.STOPPED.value
    return status


def _log_tail(log: Path) -> None:
    try:
        print(log.read_text(errors="replace")[-4000:], flush=True)
    except OSError:
        pass


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONUNBUFFERED": "1"}


def rule_job_main(argv: Sequence[str]) -> int:
    """Entry point of ``python -m sagemaker_debugger_ext.cloud rule-job``."""
    parser = build_rule_job_parser(argparse.ArgumentParser(prog="python -m sagemaker_debugger_ext.cloud rule-job"))
    args = parser.parse_args(list(argv))
    import boto3  # the SageMaker client: only inside a rule job

    client = boto3.client("sagemaker")
    return follow(args, training_status=lambda: _training_status(client, args.training_job_name))
