"""``sagemaker-debugger-ext request FILE.py``: print an estimator's CreateTrainingJob request as JSON."""

from __future__ import annotations

import argparse
import json
import runpy
import sys
from pathlib import Path

from .._exceptions import ConfigTypeError, field_error_message

__all__ = ["HELP", "add_arguments", "run"]

HELP = "print the CreateTrainingJob request (JSON) of an estimator defined in a Python file"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``FILE``, ``--var`` and ``--job-name``."""
    parser.add_argument("file", type=Path, help="Python file defining the estimator")
    parser.add_argument(
        "--var", default="estimator", help="module-level variable holding the estimator (default: estimator)"
    )
    parser.add_argument(
        "--job-name", default=None, help="training job name (default: generated from the base job name)"
    )


def run(args: argparse.Namespace) -> int:
    """Run the file, build the request without submitting it, print it; return the exit code."""
    path: Path = args.file
    if not path.is_file():
        msg = f"no such estimator file: {str(path)!r}"
        raise FileNotFoundError(msg)
    namespace = runpy.run_path(str(path), run_name="__sagemaker_debugger_ext_request__")
    if args.var not in namespace:
        msg = f"{str(path)!r} defines no module-level variable {args.var!r} (use --var NAME)"
        raise LookupError(msg)
    estimator = namespace[args.var]
    build = getattr(estimator, "training_job_request", None)
    if build is None:
        msg = field_error_message(args.var, "a sagemaker_debugger_ext.Estimator", estimator)
        raise ConfigTypeError(msg, field=args.var, value=estimator)
    request = build(job_name=args.job_name)
    json.dump(request, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
    return 0
