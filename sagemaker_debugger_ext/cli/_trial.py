"""``sagemaker-debugger-ext trial PATH``: what a trial holds, and plots of its tensors."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from .._exceptions import ConfigValueError, field_error_message
from ..reports import REDUCTIONS, TrialSummary, format_steps, open_trial, save_tensor_plot, summarize_trial

__all__ = ["HELP", "add_arguments", "run"]

HELP = "summarise a trial (debug output folder or s3:// URI); --plot TENSOR writes a PNG"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``trial`` arguments."""
    parser.add_argument("path", metavar="PATH", help="debug output: a folder, file:// or s3:// URI")
    parser.add_argument("--collection", metavar="NAME", help="list only the tensors of this collection")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--plot", metavar="TENSOR", help="write a PNG of this tensor over the steps")
    parser.add_argument("--out", metavar="FILE.png", help="PNG file for --plot (default: <TENSOR>.png here)")
    parser.add_argument(
        "--reduction",
        choices=REDUCTIONS,
        help="reduce each step's value to one number (default: scalars as they are, "
        "other tensors by the l2 norm of the flattened values)",
    )


def _default_png(tensor: str) -> Path:
    return Path(re.sub(r"[^A-Za-z0-9_.-]+", "_", tensor).strip("._") + ".png")


def _print_summary(summary: TrialSummary) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(soft_wrap=False)
    console.print(f"[bold]Trial[/bold] {summary.path}")
    ended = {True: "yes", False: "no (still running or stopped)", None: "unknown"}[summary.training_ended]
    console.print(f"workers: {', '.join(summary.workers) or '-'}    training ended: {ended}")

    modes = Table(title="Steps per mode", title_justify="left")
    modes.add_column("mode")
    modes.add_column("steps", justify="right")
    modes.add_column("mode steps")
    modes.add_column("global steps")
    for m in summary.modes:
        modes.add_row(m.mode, str(len(m.steps)), format_steps(m.steps), format_steps(m.global_steps))
    console.print(modes)

    colls = Table(title="Collections", title_justify="left")
    colls.add_column("collection")
    colls.add_column("tensors", justify="right")
    for name, count in summary.collections.items():
        colls.add_row(name, str(count))
    console.print(colls)

    tensors = Table(title=f"Tensors ({len(summary.tensors)})", title_justify="left")
    tensors.add_column("tensor", overflow="fold")
    tensors.add_column("shape")
    tensors.add_column("steps", justify="right")
    tensors.add_column("global steps")
    tensors.add_column("collections", overflow="fold")
    for t in summary.tensors:
        shape = "-" if t.shape is None else str(t.shape)
        tensors.add_row(t.name, shape, str(len(t.steps)), format_steps(t.steps), ", ".join(t.collections))
    console.print(tensors)


def run(args: argparse.Namespace) -> int:
    """Print the summary of a trial, or write the plot of one tensor."""
    if args.out and not args.plot:
        msg = field_error_message("--out", "used together with --plot TENSOR", args.out)
        raise ConfigValueError(msg, field="--out", value=args.out)
    trial = open_trial(args.path)
    if args.plot:
        out = Path(args.out) if args.out else _default_png(args.plot)
        written = save_tensor_plot(trial, args.plot, out, reduction=args.reduction)
        print(f"wrote {written}")
        return 0
    summary = summarize_trial(trial, collection=args.collection)
    if args.json:
        print(json.dumps(summary.to_dict(), indent=2))
    else:
        _print_summary(summary)
    return 0
