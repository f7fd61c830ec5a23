"""Rule-container entry point: ``python -m sagemaker_debugger_ext.rules run|list``.

``run`` takes the flags of the local runner's rule contract::

    run --trial-path P --rule-name NAME --rule-parameters-file F.json --output-dir D
        --status-file S.json [--stop-file X.json] [--start-step N] [--end-step M]
        [--poll-interval SECONDS]

and exits 0 (1 when the final status is Error). Profiler rule names (every name of the
profiler rule registry) run through the same runner, in this process, over a
``profiler-output`` folder given as ``--trial-path``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from ..rule_contract._status import write_status
from ._catalog import catalog
from ._result import EvaluationStatus
from ._run_rule import RunRequest, run_rule

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """Argument parser of the entry point."""
    parser = argparse.ArgumentParser(prog="python -m sagemaker_debugger_ext.rules")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="evaluate one rule against a trial")
    run.add_argument("--trial-path", required=True, help="debug output folder, file:// or s3:// URI")
    run.add_argument("--rule-name", required=True, help="RuleConfigurationName")
    run.add_argument("--rule-parameters-file", help="JSON file: the RuleParameters map (string values)")
    run.add_argument("--output-dir", required=True, help="rule output folder (reports)")
    run.add_argument("--status-file", help="status JSON written atomically")
    run.add_argument("--stop-file", help="stop request file for StopTraining in local jobs")
    run.add_argument("--start-step", type=int, default=0)
    run.add_argument("--end-step", type=int, default=None)
    run.add_argument("--poll-interval", type=float, default=None, help="seconds between polls of a running trial")
    lst = sub.add_parser("list", help="list the built-in rules with parameters and defaults")
    lst.add_argument("--json", action="store_true", help="machine-readable output")
    return parser


def _read_parameters(path: str | None) -> dict[str, str]:
    if not path:
        return {}
    data = json.loads(Path(path).read_text())
    if not isinstance(data, dict):
        msg = f"'--rule-parameters-file' must hold a JSON object (got {type(data).__name__})"
        raise TypeError(msg)
    return {str(k): "" if v is None else str(v) for k, v in data.items()}


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def _run(args: argparse.Namespace) -> int:
    try:
        params = _read_parameters(args.rule_parameters_file)
    except (OSError, ValueError, TypeError) as exc:
        if args.status_file:
            write_status(args.status_file, EvaluationStatus.ERROR, f"{type(exc).__name__}: {exc}")
        print(f"error: {exc}", file=sys.stderr)
        return 1
    req = RunRequest(
        trial_path=args.trial_path,
        rule_name=args.rule_name,
        parameters=params,
        output_dir=args.output_dir,
        status_file=args.status_file,
        stop_file=args.stop_file,
        start_step=args.start_step,
        end_step=args.end_step,
        poll_interval=args.poll_interval,
        region=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION"),
    )
    outcome = run_rule(req)
    print(f"{args.rule_name}: {outcome.status.value} {outcome.details}".rstrip())
    return 1 if outcome.status is EvaluationStatus.ERROR else 0


def _list(args: argparse.Namespace) -> int:
    rules = catalog()
    if args.json:
        print(json.dumps(rules, indent=2))
        return 0
    for rule in rules:
        print(f"{rule['name']}: {rule['description']}")
        for p in rule["parameters"]:
            print(f"    {p['name']} ({p['type']}, default {p['default']}): {p['doc']}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    if args.command == "list":
        return _list(args)
    signal.signal(signal.SIGTERM, _on_sigterm)
    return _run(args)


if __name__ == "__main__":
    sys.exit(main())
