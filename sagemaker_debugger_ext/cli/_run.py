"""``sagemaker-debugger-ext run SCRIPT``: a local SageMaker training job from a script."""

from __future__ import annotations

import argparse
import json
import logging
import os
from pathlib import Path
from typing import Any

from .._exceptions import ConfigValueError, field_error_message
from .._sdk_major import require_sdk
from ..config import DebuggerHookConfig
from ..config._addresses import check_output_address
from ..local.events._events import EVENT_HANDLERS_ENV, env_handler_items, handler_specs
from ..reports._local_view import print_summary
from ._local_rules import builtin_rule, custom_rule

__all__ = ["HELP", "LOCAL_ROLE", "add_arguments", "run"]

HELP = "run SCRIPT as a local SageMaker training job, with Debugger rules and hyperparameters"
LOCAL_ROLE = "arn:aws:iam::000000000000:role/local-mode"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``run`` arguments."""
    parser.add_argument("script", metavar="SCRIPT", help="the training script (entry point)")
    parser.add_argument(
        "--source-dir", metavar="DIR", help="folder holding SCRIPT and its modules (default: its folder)"
    )
    parser.add_argument(
        "--rule", action="append", default=[], metavar="NAME[:k=v,...]",
        help="a built-in rule, e.g. ExplodingTensor:stop_training=true or LossNotDecreasing:diff_percent=5",
    )  # fmt: skip
    parser.add_argument(
        "--custom-rule", action="append", default=[], metavar="FILE.py:CLASS[:k=v,...]",
        help="a custom rule class written for smdebug (or this package)",
    )  # fmt: skip
    parser.add_argument(
        "--hyperparameter", "-p", action="append", default=[], metavar="K=V", help="passed to the script as --K V"
    )
    parser.add_argument(
        "--output",
        metavar="URI",
        help="output path (s3://bucket/..., file://... or a folder; default ./sagemaker-local-output/)",
    )
    parser.add_argument("--instance-count", type=int, default=1, metavar="N", help="training processes (hosts)")
    parser.add_argument("--save-interval", type=int, metavar="N", help="save the rules' collections every N steps")
    parser.add_argument("--job-name", metavar="NAME", help="job name (default: generated)")
    parser.add_argument("--no-wait", action="store_true", help="return once the job has started")
    parser.add_argument("--logs", choices=("All", "Training", "Rules", "None"), default="All", help="logs to stream")
    parser.add_argument(
        "--event-handler", action="append", default=[], metavar="FILE.py:FUNCTION",
        help="a Lambda-style handler of the job's state-change events (see docs/local-mode.md)",
    )  # fmt: skip


def _hyperparameters(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            msg = field_error_message("--hyperparameter", "K=V", item)
            raise ConfigValueError(msg, field="--hyperparameter", value=item)
        out[key] = value
    return out


def run(args: argparse.Namespace) -> int:
    """Start (and by default follow) the job; exit 0 when it Completed or was Stopped by a rule."""
    require_sdk(2, "sagemaker-debugger-ext run")  # built on the v2 Estimator: a clear error under SDK v3
    # The SageMaker SDK (seconds to import): only when a job is started, not for every command.
    from sagemaker.exceptions import UnexpectedStatusException

    from ..estimator import Estimator

    # Offline, SDK v2 logs a traceback when its telemetry request fails; the CLI hides it.
    logging.getLogger("sagemaker.telemetry.telemetry_logging").setLevel(logging.CRITICAL)

    script = Path(args.script)
    if not script.is_file():
        msg = field_error_message("SCRIPT", "an existing file", args.script)
        raise ConfigValueError(msg, field="SCRIPT", value=args.script)
    output = None if args.output is None else check_output_address("--output", args.output)
    if args.event_handler:  # the CLI's own process: the local client reads handlers from its environment
        handler_specs(args.event_handler, environ={})  # checked before anything starts
        given = env_handler_items(os.environ.get(EVENT_HANDLERS_ENV, ""))
        os.environ[EVENT_HANDLERS_ENV] = json.dumps(given + args.event_handler)
    rules = [builtin_rule(r, save_interval=args.save_interval) for r in args.rule]
    rules += [custom_rule(r) for r in args.custom_rule]
    hook = (
        DebuggerHookConfig(hook_parameters={"save_interval": str(args.save_interval)}) if args.save_interval else None
    )
    estimator = Estimator(
        image_uri="local",
        role=LOCAL_ROLE,
        instance_type="local",
        instance_count=args.instance_count,
        entry_point=str(script.resolve()) if args.source_dir is None else script.name,
        source_dir=str(Path(args.source_dir).resolve()) if args.source_dir else None,
        hyperparameters=_hyperparameters(args.hyperparameter),
        rules=rules or None,
        debugger_hook_config=hook,
        output_path=output,
    )
    try:
        estimator.fit(wait=not args.no_wait, logs=args.logs, job_name=args.job_name)
    except UnexpectedStatusException:
        pass
    latest: Any = estimator.latest_training_job
    job = latest.name
    if args.no_wait:
        print(f"started local job {job}; follow it with: sagemaker-debugger-ext jobs logs {job} --follow")
        return 0
    desc = latest.describe()
    if args.logs == "None":  # otherwise fit() has just printed the summary and the output paths
        print_summary(desc)
        print(f"debug output: {estimator.latest_job_debugger_artifacts_path()}")
    return 0 if desc["TrainingJobStatus"] in ("Completed", "Stopped") else 1
