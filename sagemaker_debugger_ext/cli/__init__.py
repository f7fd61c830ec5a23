"""The ``sagemaker-debugger-ext`` console script.

Each subcommand lives in its own module ``cli/_<name>.py`` exposing::

    HELP: str                                    one-line description
    def add_arguments(parser: argparse.ArgumentParser) -> None
    def run(args: argparse.Namespace) -> int     exit code

Errors the package raises on purpose (``DebuggerExtError``), plus ``ValueError``,
``TypeError``, ``FileNotFoundError`` and ``KeyboardInterrupt``, are printed as one line;
``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from .._exceptions import DebuggerExtError

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

# name -> module (relative to this package). Order is the order in --help.
SUBCOMMANDS: dict[str, str] = {
    "demo": "._demo",
    "run": "._run",
    "jobs": "._jobs",
    "rules": "._rules",
    "trial": "._trial",
    "report": "._report",
    "request": "._request",
    "serve": "._serve",
}


def _load(module: str):  # type: ignore[no-untyped-def]
    return importlib.import_module(module, __name__)


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every subcommand (a missing subcommand module is an ImportError)."""
    parser = argparse.ArgumentParser(
        prog="sagemaker-debugger-ext",
        description="SageMaker Debugger, maintained: local jobs with rules, trials, reports.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module_name in SUBCOMMANDS.items():
        module = _load(module_name)
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def _quiet_sagemaker() -> None:
    """Keep the SDK's v2 deprecation notices and INFO lines off the command's output.

    The console script is a process boundary, so it may set this process's environment.
    """
    os.environ.setdefault("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    for name in ("sagemaker", "sagemaker.config"):  # the commands print their own progress
        sdk_logger = logging.getLogger(name)
        if sdk_logger.level == logging.NOTSET:
            sdk_logger.setLevel(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    _quiet_sagemaker()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (DebuggerExtError, ValueError, TypeError, LookupError, OSError, RuntimeError) as exc:
        if args.debug:
            raise
        kind = "error" if isinstance(exc, DebuggerExtError) else type(exc).__name__
        print(f"{kind}: {exc}", file=sys.stderr)
        return 2
