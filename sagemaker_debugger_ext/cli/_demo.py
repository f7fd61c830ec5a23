"""``sagemaker-debugger-ext demo`` (``make demo``): a real local job that a rule stops.

A small PyTorch model with a deliberately bad learning rate (``examples/demo/train.py``)
trains as a local SageMaker job with the built-in rules ExplodingTensor (with the
StopTraining action), LossNotDecreasing and VanishingGradient. A live display shows the
steps saved and the rule states; the job ends with a rule summary table.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any

from ..config import CollectionConfig, Rule
from ..config import rule_configs as configs
from ..reports._local_view import print_summary, rule_table, status_style
from ..rule_contract._status import EvaluationStatus
from ._run import LOCAL_ROLE

__all__ = ["HELP", "add_arguments", "demo_script", "run"]

HELP = "train a small PyTorch model with a bad learning rate as a local job; rules catch and stop it"
_TERMINAL = ("Completed", "Failed", "Stopped")


def demo_script() -> Path:
    """``examples/demo/train.py`` of the source tree (or of the working directory)."""
    for base in (Path(__file__).resolve().parents[2], Path.cwd()):
        candidate = base / "examples" / "demo" / "train.py"
        if candidate.is_file():
            return candidate
    msg = "examples/demo/train.py not found: run the demo from the project's source tree"
    raise FileNotFoundError(msg)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``demo`` arguments."""
    parser.add_argument("--lr", type=float, default=2.0, help="learning rate (default 2.0: far too high)")
    parser.add_argument("--steps", type=int, default=200, help="training steps if nothing stops the job")
    parser.add_argument("--output", metavar="URI", help="output path (default ./sagemaker-local-output/)")
    parser.add_argument("--no-live", action="store_true", help="plain progress lines instead of a live display")


def _rules() -> list[Any]:
    rule_configs: Any = configs

    every_step = {"save_interval": "1"}
    return [
        Rule.sagemaker(
            rule_configs.exploding_tensor(),
            actions=rule_configs.ActionList(rule_configs.StopTraining()),
            collections_to_save=[CollectionConfig("losses", every_step)],
        ),
        Rule.sagemaker(
            rule_configs.loss_not_decreasing(), collections_to_save=[CollectionConfig("losses", every_step)]
        ),
        Rule.sagemaker(
            rule_configs.vanishing_gradient(), collections_to_save=[CollectionConfig("gradients", every_step)]
        ),
    ]


def _steps_saved(debug_dir: Path) -> int:
    events = debug_dir / "events"
    return sum(1 for _ in events.iterdir()) if events.is_dir() else 0


def _view(desc: dict[str, Any], steps: int, elapsed: float) -> Any:
    from rich.console import Group
    from rich.text import Text

    status = str(desc["TrainingJobStatus"])
    head = Text.from_markup(
        f"[bold]{desc['TrainingJobName']}[/]  [{status_style(status)}]{status}[/] / {desc.get('SecondaryStatus')}"
        f"   steps saved: [bold]{steps}[/]   {elapsed:5.1f} s"
    )
    return Group(head, rule_table(desc))


def run(args: argparse.Namespace) -> int:
    """Run the demo job; exit 0 when a rule caught the bad learning rate."""
    from rich.console import Console
    from rich.live import Live

    from ..estimator import Estimator  # the SageMaker SDK: only when a job is started

    # Offline, SDK v2 logs a traceback when its telemetry request fails; the CLI hides it.
    logging.getLogger("sagemaker.telemetry.telemetry_logging").setLevel(logging.CRITICAL)

    console = Console()
    estimator = Estimator(
        image_uri="local",
        role=LOCAL_ROLE,
        instance_type="local",
        instance_count=1,
        entry_point=str(demo_script()),
        hyperparameters={"lr": args.lr, "steps": args.steps},
        rules=_rules(),
        output_path=args.output,
        base_job_name="demo",
    )
    estimator.fit(wait=False)
    job: Any = estimator.latest_training_job
    session: Any = estimator.sagemaker_session
    client = session.training_client
    debug_dir = client.store.paths(job.name).debug_dir
    console.print(f"local job [bold]{job.name}[/] started (lr={args.lr}); Ctrl-C stops it")
    start = time.time()
    try:
        if args.no_live:
            last = None
            while (desc := job.describe())["TrainingJobStatus"] not in _TERMINAL:
                line = (
                    desc["SecondaryStatus"],
                    _steps_saved(debug_dir),
                    tuple(r["RuleEvaluationStatus"] for r in desc.get("DebugRuleEvaluationStatuses", [])),
                )
                if line != last:
                    console.print(
                        f"{time.time() - start:5.1f} s  {line[0]}  steps saved {line[1]}  rules {', '.join(line[2])}"
                    )
                    last = line
                time.sleep(0.25)
        else:
            with Live(console=console, refresh_per_second=8, transient=True) as live:
                while (desc := job.describe())["TrainingJobStatus"] not in _TERMINAL:
                    live.update(_view(desc, _steps_saved(debug_dir), time.time() - start))
                    time.sleep(0.125)
    except KeyboardInterrupt:
        client.stop_training_job(job.name)
        client.wait(job.name, timeout_s=120)
        raise
    client.wait_supervisor_exit(job.name)
    desc = job.describe()
    print_summary(desc)
    console.print(
        f"{_steps_saved(debug_dir)} steps saved in {time.time() - start:.1f} s; "
        f"debug output: {estimator.latest_job_debugger_artifacts_path()}"
    )
    caught = any(
        r["RuleEvaluationStatus"] == EvaluationStatus.ISSUES_FOUND for r in desc.get("DebugRuleEvaluationStatuses", [])
    )
    return 0 if caught else 1
