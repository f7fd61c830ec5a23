"""``sagemaker-debugger-ext report JOB_NAME_OR_PROFILER_PATH [--out DIR]``: a job's debugger and profiler reports, or a profiler folder's."""

from __future__ import annotations

import argparse
from pathlib import Path

from .._exceptions import ProfilerError, field_error_message
from ..profiler import render_profiler_report
from ..reports import write_job_reports, write_local_job_reports
from ._on_sagemaker import add_sagemaker_options, describe_on_sagemaker, wants_sagemaker

__all__ = ["HELP", "add_arguments", "run"]

HELP = "HTML reports: a local job's debugger report (rules, losses, flagged tensors) and profiler report, or a profiler folder's"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the subcommand's arguments."""
    parser.add_argument(
        "target",
        metavar="JOB_NAME_OR_PROFILER_PATH",
        help="a local job's name (writes job-report.html, and profiler-report.html when "
        "the job was profiled), or a profiler folder (holding system/ and framework/)",
    )
    parser.add_argument(
        "--out",
        default=None,
        help="output folder (default: <profiler folder>/report; for a job: <output path>/<job>/report)",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="RULE_PARAM=VALUE",
        help="ProfilerReport parameter such as StepOutlier_stddev=2 (repeatable)",
    )
    add_sagemaker_options(parser, what="report a job")


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
    if wants_sagemaker(args):
        # A job described through SageMaker: a self-hosted job's rules as the service shows them.
        description = describe_on_sagemaker(args.target, args.endpoint_url, as_service=True)
        if description is None:
            return 2
        for written in write_job_reports(description, args.out, profiler_parameters=_parse_params(args.param)):
            print(written)
        return 0
    target = Path(args.target)
    if not target.is_dir():
        # A local job: the debugger job report, plus the profiler report when it was profiled.
        for written in write_local_job_reports(args.target, args.out, profiler_parameters=_parse_params(args.param)):
            print(written)
        return 0
    profiler_dir = target
    out = Path(args.out) if args.out else profiler_dir / "report"
    path = render_profiler_report(profiler_dir, out, parameters=_parse_params(args.param))
    print(path)
    return 0
