"""``sagemaker-debugger-ext rules list|run``: the built-in rules, and one rule on a trial."""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

from .._container_env import TRAINING_END_MARKER
from .._exceptions import RuleNotFoundError, StorageNotFoundError
from ..rules._catalog import catalog, profiler_catalog
from ..rules._report import REPORT_JSON
from ..rules._result import EvaluationStatus
from ..rules._run_rule import PROFILER_RULE_NAMES, RunRequest, run_rule
from ..rules.builtin import BUILTIN_RULES

__all__ = ["HELP", "add_arguments", "run"]

HELP = "list the built-in rules, or run a rule against a trial (folder or s3:// URI)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``rules list`` and ``rules run``."""
    sub = parser.add_subparsers(dest="rules_command", metavar="{list,run}")
    sub.required = True
    lst = sub.add_parser("list", help="every built-in rule (Debugger and profiler) with its parameters and defaults")
    lst.add_argument("--json", action="store_true", help="print JSON")
    r = sub.add_parser("run", help="evaluate a rule against a trial until its training ended")
    r.add_argument("trial_path", metavar="TRIAL_PATH", help="debug output: a folder, file:// or s3:// URI")
    r.add_argument("name", metavar="NAME", help="built-in rule name, or the class name with --source")
    r.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="a rule parameter (repeatable)")
    r.add_argument("--source", help="custom rule source (.py path, file:// or s3:// URI)")
    r.add_argument(
        "--out", "--output-dir", dest="output_dir", metavar="DIR",
        help="where the rule's reports go (rule-report.json/.md, and e.g. the XGBoost report); default: a new "
        "temporary folder, printed at the end",
    )  # fmt: skip
    r.add_argument(
        "--wait", type=float, default=0.0, metavar="SECONDS",
        help="wait this long for a trial to appear in an empty TRIAL_PATH (default 0: report at once that there "
        "is nothing to evaluate)",
    )  # fmt: skip
    r.add_argument("--start-step", type=int, default=0)
    r.add_argument("--end-step", type=int, default=None)
    r.add_argument("--json", action="store_true", help="print the rule report JSON")


def _parse_params(items: list[str]) -> dict[str, str]:
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            msg = f"'--param' must be KEY=VALUE (got {item!r})"
            raise ValueError(msg)
        params[key.strip()] = value
    return params


def _list(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    rules = [{**r, "kind": "debugger"} for r in catalog()] + profiler_catalog()
    if args.json:
        print(json.dumps(rules, indent=2))
        return 0
    table = Table(title="Built-in rules", show_lines=True)
    table.add_column("rule", style="bold")
    table.add_column("kind")
    table.add_column("fires when")
    table.add_column("parameters (default → recommended)")
    for rule in rules:
        rec = rule.get("recommended_parameters") or {}
        params = "\n".join(
            f"{p['name']} = {p['default']}" + (f" → {rec[p['name']]}" if p["name"] in rec else "")
            for p in rule["parameters"]
        )
        name = rule["name"] + ("\n(recommended)" if rec else "")
        table.add_row(name, rule["kind"], rule["description"], params or "-")
    Console(soft_wrap=False).print(table)
    return 0


def _check_inputs(args: argparse.Namespace) -> None:
    """Refuse an unknown rule name or a missing local trial path as one-line CLI errors."""
    if not args.source and args.name not in BUILTIN_RULES and args.name not in PROFILER_RULE_NAMES:
        msg = (
            f"'NAME' must be a built-in rule (got {args.name!r}); see `sagemaker-debugger-ext rules list`, "
            "or pass --source for a custom rule"
        )
        raise RuleNotFoundError(msg, rule_name=args.name)
    if args.wait < 0:
        msg = f"'--wait' must be a number of seconds >= 0 (got {args.wait!r})"
        raise ValueError(msg)
    parsed = urlparse(args.trial_path)
    if parsed.scheme in ("", "file"):
        local = Path(parsed.path if parsed.scheme == "file" else args.trial_path)
        if not local.exists():
            msg = f"'TRIAL_PATH' must be an existing folder (got {args.trial_path!r})"
            raise StorageNotFoundError(msg, uri=args.trial_path)
        if not _wait_for_trial(local, args.wait):
            msg = (
                f"nothing to evaluate: {args.trial_path!r} holds no trial (no collections/ files) and no "
                f"end-of-training marker{f' after waiting {args.wait:g} s' if args.wait else ''}; "
                "pass --wait SECONDS to wait for a job that has not written yet"
            )
            raise StorageNotFoundError(msg, uri=args.trial_path)


def _has_trial(folder: Path) -> bool:
    """Whether ``folder`` holds something a rule can evaluate or finish on."""
    if (folder / TRAINING_END_MARKER).exists():
        return True
    collections = folder / "collections"
    if collections.is_dir() and any(collections.rglob("*.json")):
        return True
    system = folder / "system"  # a profiler-output folder
    return system.is_dir() and any(system.rglob("*.json"))


def _wait_for_trial(folder: Path, wait_s: float) -> bool:
    """Poll ``folder`` for up to ``wait_s`` seconds until it holds a trial."""
    deadline = time.monotonic() + wait_s
    pause = threading.Event()
    while not _has_trial(folder):
        if time.monotonic() >= deadline:
            return False
        pause.wait(0.2)
    return True


def _run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    _check_inputs(args)
    params = _parse_params(args.param)
    params.setdefault("rule_to_invoke", args.name)
    if args.source:
        params["source_s3_uri"] = args.source
    out = Path(args.output_dir) if args.output_dir else Path(tempfile.mkdtemp(prefix="sdx-rule-"))
    req = RunRequest(
        trial_path=args.trial_path,
        rule_name=args.name,
        parameters=params,
        output_dir=out,
        start_step=args.start_step,
        end_step=args.end_step,
        trial_wait_s=0.0,
    )
    outcome = run_rule(req)
    report = json.loads((out / REPORT_JSON).read_text())
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        console = Console(soft_wrap=False)
        console.print(f"[bold]{args.name}[/bold]: {outcome.status.value} {outcome.details}".rstrip())
        if report["Findings"]:
            table = Table(title="Findings", title_justify="left")
            for col in ("step", "mode", "tensor", "value", "threshold"):
                table.add_column(col)
            for f in report["Findings"][:30]:
                table.add_row(
                    *(str(f[c]) if f[c] is not None else "" for c in ("step", "mode", "tensor", "value", "threshold"))
                )
            console.print(table)
        reports = sorted(p for p in out.rglob("*") if p.is_file())
        # plain print: a path must never be wrapped or cut to the terminal's width
        print(f"reports in {out}: " + ", ".join(str(p.relative_to(out)) for p in reports), flush=True)
    return 1 if outcome.status is EvaluationStatus.ERROR else 0


def run(args: argparse.Namespace) -> int:
    """Dispatch ``rules list`` / ``rules run``."""
    return _list(args) if args.rules_command == "list" else _run(args)
