"""``sagemaker-debugger-ext report JOB_NAME_OR_PROFILER_PATH [--out DIR]``: the profiler report."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .._exceptions import ProfilerError, field_error_message

__all__ = ["HELP", "add_arguments", "run"]

HELP = "render the profiler report (HTML) of a local job or a profiler folder"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the subcommand's arguments."""
    parser.add_argument("target", metavar="JOB_NAME_OR_PROFILER_PATH",
                        help="a local job's name, or a profiler folder (holding system/ and framework/)")
    parser.add_argument("--out", default=None, help="output folder (default: <profiler folder>/report)")
    parser.add_argument("--param", action="append", default=[], metavar="RULE_PARAM=VALUE",
                        help="ProfilerReport parameter such as StepOutlier_stddev=2 (repeatable)")


def _job_profiler_path(job_name: str) -> Path:
    """The profiler folder of a local job (needs the local mode package)."""
    try:
        from ..local import LocalSession  # noqa: PLC0415 - optional until local mode exists
    except ImportError as exc:
        msg = field_error_message("JOB_NAME_OR_PROFILER_PATH", "an existing profiler folder", job_name)
        raise ProfilerError(msg) from exc
    desc: dict[str, Any] = LocalSession().sagemaker_client.describe_training_job(TrainingJobName=job_name)
    base = (desc.get("ProfilerConfig") or {}).get("S3OutputPath") or (desc.get("OutputDataConfig") or {}).get(
        "S3OutputPath", ""
    )
    if not str(base).startswith("file://"):
        msg = f"job {job_name!r} keeps its profiler data at {base!r}: sync it locally and pass the folder"
        raise ProfilerError(msg)
    from ..profiler._trial import local_profiler_dir  # noqa: PLC0415

    return local_profiler_dir(str(base)) / job_name / "profiler-output"


def _parse_params(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ProfilerError(field_error_message("--param", "RULE_PARAM=VALUE", item))
        out[key] = value
    return out


def run(args: argparse.Namespace) -> int:
    """Render the report and print its path."""
    from ..profiler import render_profiler_report  # noqa: PLC0415 - matplotlib only when used

    target = Path(args.target)
    profiler_dir = target if target.is_dir() else _job_profiler_path(args.target)
    out = Path(args.out) if args.out else profiler_dir / "report"
    path = render_profiler_report(profiler_dir, out, parameters=_parse_params(args.param))
    print(path)
    return 0
