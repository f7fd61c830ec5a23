"""The Processing container's side of a self-hosted rule: the package's rule entry point, followed.

``python -m sagemaker_debugger_ext.cloud rule-job ...`` runs ``python -m
sagemaker_debugger_ext.rules run`` (the one rule runner, Debugger and profiler rules alike)
against the trial on S3 and, while it runs:

- copies its status file to ``<rule output>/status.json`` on S3 at every change, so
  ``describe()`` / ``rule_job_summary()`` show the rule's state while training runs;
- asks ``DescribeTrainingJob`` how the training job is doing: once it has ended (Completed,
  Failed or Stopped, a ``MaxRuntimeInSeconds`` timeout included) the rule gets
  ``--final-grace-seconds`` for its final evaluation and is then stopped, so no rule job outlives
  its training job by more than that.

A training job that did not complete is named in the rule's ``StatusDetails`` with the service's
reason (``FailureReason``, else the secondary status such as ``MaxRuntimeExceeded``): a rule
stopped before its evaluation finished says "Stopped before the evaluation finished: the
training job ended (Failed: AlgorithmError: ...)", and a rule whose final evaluation ran
starts its details with "The training job ended Failed (...): evaluated the steps saved before it
ended."

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

from .._container_env import TRAINING_END_MARKER
from .._exceptions import StorageError
from ..format._files import atomic_write
from ..local.supervisor._child_process import ChildProcess
from ..rule_contract._status import EvaluationStatus, status_record
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
    """``Status`` or, for a job that ended other than Completed, ``Status: reason``; None if unknown."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        described = client.describe_training_job(TrainingJobName=name)
    except (BotoCoreError, ClientError) as exc:
        print(f"DescribeTrainingJob({name}) failed, retried at the next poll: {exc}", flush=True)
        return None
    status = str(described["TrainingJobStatus"])
    secondary = str(described.get("SecondaryStatus") or "")
    reason = str(described.get("FailureReason") or (secondary if secondary not in ("", status) else ""))
    return f"{status}: {reason}" if reason and status in ("Failed", "Stopped") else status


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
            if status is not None and status.partition(":")[0] in _TERMINAL_TRAINING:
                ended_at, ended_status = now, status
        overdue = ended_at is not None and now - ended_at > args.final_grace_seconds
        if overdue or stop["why"]:
            child.terminate()
            child.kill_if_overdue(10.0)
        time.sleep(_PAUSE_S)
    _log_tail(out.parent / "rule.log")
    if not ended_status and not stop["why"]:  # the rule ended at the end-of-training marker: how did training end?
        ended_status = _training_outcome(args, training_status)
    final = _final_status(status_file, ended_status, stop["why"])
    _publish(status_file, args.status_uri, published)
    return 1 if final == EvaluationStatus.ERROR.value else 0


def _training_outcome(args: argparse.Namespace, training_status: Callable[[], str | None]) -> str:
    """The training job's end, once it is known: after the end-of-training marker the job ends soon
    (model upload), so it is asked again for at most the final grace period; "" if still unknown."""
    deadline = time.monotonic() + args.final_grace_seconds
    status = training_status()
    try:
        marked = open_storage(args.trial_path).exists(TRAINING_END_MARKER)
    except StorageError:
        marked = False
    while marked and (status or "").partition(":")[0] not in _TERMINAL_TRAINING and time.monotonic() < deadline:
        time.sleep(min(args.poll_seconds, 5.0))
        status = training_status()
    return status if status and status.partition(":")[0] in _TERMINAL_TRAINING else ""


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
    ended, _, reason = training.partition(":")
    if ended in ("Failed", "Stopped") and status != EvaluationStatus.ERROR.value:
        how = f"{ended} ({reason.strip()})" if reason.strip() else ended
        note = f"The training job ended {how}: evaluated the steps saved before it ended."
        details = " ".join(x for x in (note, str(record.get("StatusDetails") or "")) if x)
        atomic_write(status_file, json.dumps({**record, **status_record(status, details)}).encode())
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
