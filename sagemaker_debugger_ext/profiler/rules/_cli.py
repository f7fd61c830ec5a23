"""``python -m sagemaker_debugger_ext.profiler.rules run``: one profiler "rule container".

Flags (the rule processes' common flags): ``--trial-path`` (the profiler folder), ``--rule-name``
(RuleConfigurationName), ``--rule-parameters-file`` (JSON map of string values, with
``rule_to_invoke``), ``--output-dir``, ``--status-file``, ``[--stop-file]`` (accepted;
profiler rules have no actions). Exit 0, or 1 on Error.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from ..._exceptions import ProfilerError, RuleError
from ...rule_contract._status import EvaluationStatus, write_status
from .._trial import ProfilerTrial
from ._base import ProfilerRule
from ._follow import follow_trial, write_rule_outputs
from ._registry import PROFILER_RULES, ProfilerReport, get_profiler_rule_class
from ._report import render_profiler_report

__all__ = ["build_rule", "main", "run_command", "run_rule"]


def _read_parameters(path: str | None) -> dict[str, Any]:
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError) as exc:
        msg = f"cannot read rule parameters file {path!r}: {exc}"
        raise RuleError(msg) from exc
    if not isinstance(data, dict):
        msg = f"rule parameters file {path!r} must hold a JSON object (got {type(data).__name__})"
        raise RuleError(msg)
    return data


def build_rule(rule_name: str, parameters: dict[str, Any]) -> ProfilerRule:
    """Instantiate the rule ``rule_to_invoke`` (else ``rule_name``) with the other parameters.

    Raises:
        RuleNotFoundError: unknown rule.
        RuleParameterError: unknown parameter or bad value.
    """
    params = dict(parameters)
    to_invoke = params.pop("rule_to_invoke", None) or rule_name
    cls = get_profiler_rule_class(str(to_invoke))
    return cls(**params)


class _StatusSink:
    """Status updates of one run: the status file, and a caller's callback."""

    def __init__(
        self, path: str | Path | None, callback: Callable[[EvaluationStatus, str], None] | None = None
    ) -> None:
        self.path = path
        self.callback = callback

    def write(self, status: EvaluationStatus, details: str = "") -> None:
        if self.path:
            write_status(self.path, status, details)
        if self.callback is not None:
            self.callback(status, details)


def run_rule(
    trial_path: str | Path,
    rule_name: str,
    parameters: dict[str, Any],
    output_dir: str | Path,
    status_file: str | Path | None,
    *,
    wait: bool = True,
    stop: threading.Event | None = None,
    poll_s: float = 0.5,
    on_status: Callable[[EvaluationStatus, str], None] | None = None,
) -> int:
    """Run one profiler rule to completion; returns the exit code (1 on Error).

    Each status goes to ``status_file`` (the one status writer of every rule) and to ``on_status``.
    """
    status = _StatusSink(status_file, on_status)
    try:
        rule = build_rule(rule_name, parameters)
        status.write(EvaluationStatus.IN_PROGRESS)
        trial = ProfilerTrial(trial_path)

        def _on_fire(msg: str) -> None:
            status.write(EvaluationStatus.ISSUES_FOUND, msg)

        outcome = follow_trial(trial, rule, wait=wait, stop=stop, poll_s=poll_s, on_fire=_on_fire)
        write_rule_outputs(rule, Path(output_dir) / "profiler-output" / "profiler-reports")
        if isinstance(rule, ProfilerReport):
            render_profiler_report(trial, Path(output_dir) / "profiler-output", rule=rule)
    except (RuleError, ProfilerError, OSError, ValueError, TypeError, KeyError) as exc:
        status.write(EvaluationStatus.ERROR, f"Exception during rule evaluation: {type(exc).__name__}: {exc}")
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if outcome.stopped:
        return 0
    if outcome.fired:
        status.write(EvaluationStatus.ISSUES_FOUND, "; ".join(outcome.messages))
    else:
        status.write(EvaluationStatus.NO_ISSUES_FOUND, rule.note)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: ``run`` subcommand."""
    parser = argparse.ArgumentParser(prog="python -m sagemaker_debugger_ext.profiler.rules")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="evaluate one profiler rule over a profiler folder")
    run.add_argument("--trial-path", required=True)
    run.add_argument("--rule-name", required=True)
    run.add_argument("--rule-parameters-file", default=None)
    run.add_argument("--output-dir", required=True)
    run.add_argument("--status-file", default=None)
    run.add_argument("--stop-file", default=None)
    sub.add_parser("list", help="list the built-in profiler rules")
    args = parser.parse_args(argv)
    if args.command == "list":
        table: list[tuple[str, type[ProfilerRule]]] = [*PROFILER_RULES.items(), ("ProfilerReport", ProfilerReport)]
        for name, cls in table:
            print(f"{name}: {', '.join(cls.param_names()) or '<Rule>_<param>'}")
        return 0
    return run_command(args.trial_path, args.rule_name, args.rule_parameters_file, args.output_dir, args.status_file)


def run_command(
    trial_path: str, rule_name: str, parameters_file: str | None, output_dir: str, status_file: str | None
) -> int:
    """Run one profiler rule as a rule container: SIGTERM/SIGINT stop it cleanly; returns the exit code.

    Both entry points (``python -m sagemaker_debugger_ext.profiler.rules run`` and
    ``python -m sagemaker_debugger_ext.rules run`` given a profiler rule) run the rule
    through here, in their own process.
    """
    stop = threading.Event()

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    try:
        params = _read_parameters(parameters_file)
    except RuleError as exc:
        _StatusSink(status_file).write(EvaluationStatus.ERROR, str(exc))
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return run_rule(trial_path, rule_name, params, output_dir, status_file, stop=stop)
