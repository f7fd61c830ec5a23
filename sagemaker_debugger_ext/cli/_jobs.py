"""``sagemaker-debugger-ext jobs list|describe|logs|stop``: the local job store.

``jobs describe NAME --endpoint-url URL`` (or ``--sagemaker``: boto3's SageMaker endpoint,
``$AWS_ENDPOINT_URL_SAGEMAKER`` or AWS) describes a job through SageMaker instead, a self-hosted
job's rule statuses added in the service's shape as ``describe()`` adds them.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
from typing import Any

from ..local import LocalTrainingClient
from ..local.caller._logs import LogFollower, follow_job
from ..reports._local_view import print_summary, status_style
from ._on_sagemaker import add_sagemaker_options, describe_on_sagemaker, wants_sagemaker

__all__ = ["HELP", "add_arguments", "run"]

HELP = "list, describe, follow or stop local training jobs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``jobs`` sub-actions."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    p = sub.add_parser("list", help="local jobs, newest first")
    p.add_argument("--status", choices=("InProgress", "Completed", "Failed", "Stopping", "Stopped"))
    p.add_argument("--name-contains", metavar="TEXT")
    p.add_argument("--json", action="store_true", help="print ListTrainingJobs' TrainingJobSummaries as JSON")
    p = sub.add_parser("describe", help="DescribeTrainingJob of a local job, as JSON")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--json", action="store_true", help="print JSON (the default; accepted for scripts)")
    p.add_argument("--rules", action="store_true", help="print the job's status and a table of its rules instead")
    add_sagemaker_options(p)
    p = sub.add_parser("logs", help="print a job's logs")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--follow", "-f", action="store_true", help="follow until the job ends (Ctrl-C stops the job)")
    p = sub.add_parser("stop", help="stop a running local job")
    p.add_argument("name", metavar="NAME")


def _json_default(value: Any) -> str:
    if isinstance(value, _dt.datetime):
        return value.isoformat()
    return str(value)


def _created(summary: dict[str, Any]) -> str:
    return str(summary["CreationTime"].astimezone().strftime("%Y-%m-%d %H:%M:%S"))


def _print_table(summaries: list[dict[str, Any]], *, title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    table.add_column("Name", no_wrap=True, overflow="fold")
    for col in ("Status", "Secondary status", "Created"):
        table.add_column(col)
    for s in summaries:
        status = s["TrainingJobStatus"]
        table.add_row(
            s["TrainingJobName"], f"[{status_style(status)}]{status}[/]", s.get("SecondaryStatus", ""), _created(s)
        )
    Console().print(table)


def run(args: argparse.Namespace) -> int:
    """Run one ``jobs`` action."""
    if args.action == "describe" and wants_sagemaker(args):
        described = describe_on_sagemaker(args.name, args.endpoint_url)
        if described is None:
            return 2
        if args.rules:
            print_summary(described)
        else:
            print(json.dumps(described, indent=2, sort_keys=True, default=_json_default))
        return 0
    client = LocalTrainingClient()
    if args.action == "list":
        jobs = client.list_training_jobs(NameContains=args.name_contains, StatusEquals=args.status)
        summaries = jobs["TrainingJobSummaries"]
        if args.json:
            print(json.dumps(summaries, indent=2, sort_keys=True, default=_json_default))
        elif sys.stdout.isatty():
            _print_table(summaries, title=f"Local jobs in {client.store.root}")
        else:  # piped: whole names, one job a line, tab-separated (nothing cut to a terminal width)
            for s in summaries:
                print(
                    "\t".join((s["TrainingJobName"], s["TrainingJobStatus"], s.get("SecondaryStatus", ""), _created(s)))
                )
        return 0
    if args.action == "describe":
        description = client.describe_training_job(args.name)
        if args.rules:
            print_summary(description)
        else:
            print(json.dumps(description, indent=2, sort_keys=True, default=_json_default))
        return 0
    if args.action == "logs":
        if args.follow:
            desc = follow_job(client, args.name)
            return 0 if desc["TrainingJobStatus"] != "Failed" else 1
        request = client.store.read_request(args.name)
        count = int((request.get("ResourceConfig") or {}).get("InstanceCount") or 1)
        LogFollower(
            client.store.paths(args.name),
            hosts=[f"algo-{i + 1}" for i in range(count)],
            include_rules=True,
            out=sys.stdout,
        ).pump(final=True)
        return 0
    client.stop_training_job(args.name)
    desc = client.wait(args.name, timeout_s=120)
    print(f"{args.name}: {desc['TrainingJobStatus']}")
    return 0
