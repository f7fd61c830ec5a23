"""Regenerate the notebooks from the cell sources below: ``python notebooks/_build.py``.

The .ipynb files are committed without outputs; the test suite executes them
(tests/notebooks/test_notebooks.py).
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

ROLE = (
    'ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"  # any role ARN: local mode does not assume it\n'
    'SCRIPTS = str(Path("scripts").resolve())  # the training scripts next to this notebook'
)

QUICKSTART = [
    new_markdown_cell(
        "# Quickstart: a local job with built-in rules\n\n"
        "This trains a tiny PyTorch model with `instance_type=\"local\"`: no Docker, no AWS account. "
        "The Debugger hook saves tensors, the built-in rules run next to training, and we look at the "
        "rule summary and plot the tensors a rule flagged.\n\n"
        "The learning rate is 0, so the loss cannot decrease and `LossNotDecreasing` finds an issue."
    ),
    new_code_cell(
        "from pathlib import Path\n\nfrom sagemaker_debugger_ext import CollectionConfig, DebuggerHookConfig, Estimator, Rule, rule_configs\n"
        "from sagemaker_debugger_ext.reports import flagged_tensors, plot_tensor, rule_summary\n"
        "from sagemaker_debugger_ext.trials import create_trial\n\n" + ROLE
    ),
    new_code_cell(
        "every_step = {\"save_interval\": \"1\"}\n"
        "estimator = Estimator(\n"
        "    image_uri=\"local-python\",  # recorded in the request; local mode runs the entry point in this environment\n"
        "    role=ROLE,\n"
        "    instance_count=1,\n"
        "    instance_type=\"local\",\n"
        "    entry_point=\"train_pytorch.py\",\n"
        "    source_dir=SCRIPTS,\n"
        "    hyperparameters={\"epochs\": 2, \"lr\": 0.0},\n"
        "    debugger_hook_config=DebuggerHookConfig(hook_parameters=every_step),\n"
        "    rules=[\n"
        "        Rule.sagemaker(\n"
        "            rule_configs.loss_not_decreasing(),\n"
        "            rule_parameters={\"num_steps\": \"3\", \"mode\": \"TRAIN\"},\n"
        "            collections_to_save=[CollectionConfig(name=\"losses\", parameters=every_step)],\n"
        "        ),\n"
        "        Rule.sagemaker(\n"
        "            rule_configs.vanishing_gradient(),\n"
        "            collections_to_save=[CollectionConfig(name=\"gradients\", parameters=every_step)],\n"
        "        ),\n"
        "    ],\n"
        ")\n"
        "# logs=\"Rules\": the rules' logs and a [progress] line at every status change (logs=False: silent)\n"
        "estimator.fit(wait=True, logs=\"Rules\")"
    ),
    new_markdown_cell("## The rule summary\n\n`fit()` returns once training and the rules have finished. `rule_summary` formats what `DescribeTrainingJob` returns, exactly as on SageMaker; the SDK call `estimator.latest_training_job.rule_job_summary()` gives the same statuses as a list of dicts."),
    new_code_cell("job = estimator.latest_training_job\nsummary = rule_summary(job.describe())\nprint(summary)"),
    new_markdown_cell("## The flagged tensors\n\nOpen the job's debug output as a trial and plot what each rule that found issues looked at."),
    new_code_cell(
        "import matplotlib.pyplot as plt\n\n"
        "trial = create_trial(estimator.latest_job_debugger_artifacts_path())\n"
        "flagged = flagged_tensors(job.describe(), trial)\n"
        "print(flagged)\n"
        "for rule, names in flagged.items():\n"
        "    for name in names:\n"
        "        fig, ax = plt.subplots(figsize=(6, 3))\n"
        "        plot_tensor(trial, name, ax=ax)\n"
        "        ax.set_title(f\"{rule}: {name}\")\n"
        "        plt.show()"
    ),
]

CUSTOM_RULES = [
    new_markdown_cell(
        "# Custom rules\n\n"
        "A custom rule is an smdebug-style `Rule` subclass. We write one to a file, run it on a trial "
        "with `invoke_rule`, then run the same file as a rule of a local training job."
    ),
    new_code_cell(
        "%%writefile large_gradient.py\n"
        "from sagemaker_debugger_ext.rules import Rule\n\n\n"
        "class LargeGradient(Rule):\n"
        "    \"\"\"Fires when the largest absolute gradient value exceeds `threshold`.\"\"\"\n\n"
        "    def __init__(self, base_trial, threshold=\"1.0\"):\n"
        "        super().__init__(base_trial)\n"
        "        self.threshold = float(threshold)\n\n"
        "    def invoke_at_step(self, step):\n"
        "        for name in self.base_trial.tensor_names(collection=\"gradients\"):\n"
        "            tensor = self.base_trial.tensor(name)\n"
        "            if step in tensor.steps() and abs(tensor.value(step)).max() > self.threshold:\n"
        "                self.logger.info(f\"{name} exceeds {self.threshold} at step {step}\")\n"
        "                return True\n"
        "        return False"
    ),
    new_code_cell(
        "from pathlib import Path\n\nfrom sagemaker_debugger_ext import CollectionConfig, DebuggerHookConfig, Estimator, Rule\n"
        "from sagemaker_debugger_ext.reports import plot_tensor, rule_summary\n"
        "from sagemaker_debugger_ext.rules import invoke_rule\n"
        "from sagemaker_debugger_ext.trials import create_trial\n\n" + ROLE
    ),
    new_markdown_cell("## A local job with the custom rule\n\n`Rule.custom` with a local `source` file: in local mode the file is used in place."),
    new_code_cell(
        "every_step = {\"save_interval\": \"1\"}\n"
        "estimator = Estimator(\n"
        "    image_uri=\"local-python\",\n"
        "    role=ROLE,\n"
        "    instance_count=1,\n"
        "    instance_type=\"local\",\n"
        "    entry_point=\"train_pytorch.py\",\n"
        "    source_dir=SCRIPTS,\n"
        "    hyperparameters={\"epochs\": 1, \"lr\": 0.5},\n"
        "    debugger_hook_config=DebuggerHookConfig(hook_parameters=every_step),\n"
        "    rules=[\n"
        "        Rule.custom(\n"
        "            name=\"LargeGradient\",\n"
        "            image_uri=\"local-python\",\n"
        "            instance_type=\"ml.t3.medium\",\n"
        "            volume_size_in_gb=1,\n"
        "            source=\"large_gradient.py\",\n"
        "            rule_to_invoke=\"LargeGradient\",\n"
        "            rule_parameters={\"threshold\": \"0.05\"},\n"
        "            collections_to_save=[CollectionConfig(name=\"gradients\", parameters=every_step)],\n"
        "        ),\n"
        "    ],\n"
        ")\n"
        "estimator.fit(wait=True, logs=False)"
    ),
    new_code_cell("job = estimator.latest_training_job\nprint(rule_summary(job.describe()))"),
    new_markdown_cell("## The same rule on the trial, interactively\n\n`invoke_rule` runs it step by step, exactly like smdebug."),
    new_code_cell(
        "from large_gradient import LargeGradient\n\n"
        "from sagemaker_debugger_ext.rules import RuleEvaluationConditionMet\n\n"
        "trial = create_trial(estimator.latest_job_debugger_artifacts_path())\n"
        "try:\n"
        "    invoke_rule(LargeGradient(trial, threshold=\"0.05\"), raise_eval_cond=True)\n"
        "    print(\"condition never met\")\n"
        "except RuleEvaluationConditionMet as met:\n"
        "    print(\"condition met:\", met)"
    ),
    new_code_cell(
        "import matplotlib.pyplot as plt\n\n"
        "name = trial.tensor_names(collection=\"gradients\")[0]\n"
        "fig, ax = plt.subplots(figsize=(6, 3))\n"
        "plot_tensor(trial, name, reduction=\"max\", ax=ax)\n"
        "plt.show()"
    ),
]

TRIAL_ANALYSIS = [
    new_markdown_cell(
        "# Interactive trial analysis\n\n"
        "A trial is the tensors a job saved. `create_trial` opens a local folder or an `s3://` URI; the "
        "API is smdebug's. We run a short job first, then explore its trial."
    ),
    new_code_cell(
        "from pathlib import Path\n\nfrom sagemaker_debugger_ext import CollectionConfig, DebuggerHookConfig, Estimator, Rule, rule_configs\n"
        "from sagemaker_debugger_ext.reports import plot_tensor, rule_summary, summarize_trial\n"
        "from sagemaker_debugger_ext.trials import create_trial\n\n" + ROLE + "\n\n"
        "estimator = Estimator(\n"
        "    image_uri=\"local-python\",\n"
        "    role=ROLE,\n"
        "    instance_count=1,\n"
        "    instance_type=\"local\",\n"
        "    entry_point=\"train_pytorch.py\",\n"
        "    source_dir=SCRIPTS,\n"
        "    hyperparameters={\"epochs\": 2, \"lr\": 0.1},\n"
        "    debugger_hook_config=DebuggerHookConfig(\n"
        "        hook_parameters={\"save_interval\": \"1\"},\n"
        "        collection_configs=[CollectionConfig(name=n) for n in (\"weights\", \"gradients\", \"losses\")],\n"
        "    ),\n"
        "    rules=[Rule.sagemaker(rule_configs.exploding_tensor())],\n"
        ")\n"
        "estimator.fit(wait=True, logs=False)"
    ),
    new_code_cell("job = estimator.latest_training_job\nprint(rule_summary(job.describe()))"),
    new_code_cell(
        "from sagemaker_debugger_ext.pytorch import modes\n\n"
        "trial = create_trial(estimator.latest_job_debugger_artifacts_path())\n"
        "print(\"workers:\", trial.workers())\n"
        "print(\"train steps:\", trial.steps(mode=modes.TRAIN))\n"
        "print(\"eval steps:\", trial.steps(mode=modes.EVAL))\n"
        "print(\"collections:\", sorted(trial.collections()))\n"
        "print(\"losses:\", trial.tensor_names(collection=\"losses\"))"
    ),
    new_markdown_cell("## Values and reductions"),
    new_code_cell(
        "loss_name = trial.tensor_names(collection=\"losses\")[0]\n"
        "loss = trial.tensor(loss_name)\n"
        "print({step: float(v) for step, v in loss.values(mode=modes.TRAIN).items()})\n"
        "weight = trial.tensor(trial.tensor_names(collection=\"weights\")[0])\n"
        "step = weight.steps()[-1]\n"
        "print(weight.value(step).shape, float(weight.reduction_value(step, \"mean\", abs=True)))"
    ),
    new_markdown_cell("## A summary table and plots"),
    new_code_cell(
        "import pandas as pd\n\n"
        "summary = summarize_trial(trial)\n"
        "pd.DataFrame([{\"tensor\": t.name, \"shape\": t.shape, \"steps\": len(t.steps)} for t in summary.tensors])"
    ),
    new_code_cell(
        "import matplotlib.pyplot as plt\n\n"
        "fig, axes = plt.subplots(1, 2, figsize=(10, 3))\n"
        "plot_tensor(trial, loss_name, ax=axes[0])\n"
        "plot_tensor(trial, weight.name, reduction=\"l2\", ax=axes[1])\n"
        "plt.show()"
    ),
]

PROFILER = [
    new_markdown_cell(
        "# The profiler report\n\n"
        "With a `ProfilerConfig`, a local job also records system metrics (CPU, memory, GPU when there "
        "is one) and framework metrics (step times), runs the profiler rules, and the profiler report "
        "renders them as HTML."
    ),
    new_code_cell(
        "from pathlib import Path\n\nfrom sagemaker_debugger_ext import Estimator, ProfilerConfig, ProfilerRule, Rule, rule_configs\n"
        "from sagemaker_debugger_ext.reports import rule_summary\n\n" + ROLE + "\n\n"
        "estimator = Estimator(\n"
        "    image_uri=\"local-python\",\n"
        "    role=ROLE,\n"
        "    instance_count=1,\n"
        "    instance_type=\"local\",\n"
        "    entry_point=\"train_pytorch.py\",\n"
        "    source_dir=SCRIPTS,\n"
        "    hyperparameters={\"epochs\": 2, \"lr\": 0.1},\n"
        "    profiler_config=ProfilerConfig(system_monitor_interval_millis=100),\n"
        "    rules=[\n"
        "        ProfilerRule.sagemaker(rule_configs.ProfilerReport()),\n"
        "        Rule.sagemaker(rule_configs.loss_not_decreasing()),\n"
        "    ],\n"
        ")\n"
        "estimator.fit(wait=True, logs=False)"
    ),
    new_code_cell("job = estimator.latest_training_job\nprint(rule_summary(job.describe()))"),
    new_markdown_cell("## System and framework metrics\n\n`create_profiler_trial` reads them; `system_metrics_df()` gives a pandas DataFrame."),
    new_code_cell(
        "import matplotlib.pyplot as plt\n\n"
        "from sagemaker_debugger_ext.profiler import create_profiler_trial\n\n"
        "ptrial = create_profiler_trial(estimator.latest_job_profiler_artifacts_path())\n"
        "system = ptrial.system_metrics_df()\n"
        "cpu = system[system.dimension == \"CPUUtilization\"].groupby(\"timestamp\").value.mean()\n"
        "steps = ptrial.step_durations()\n"
        "fig, axes = plt.subplots(1, 2, figsize=(10, 3))\n"
        "axes[0].plot(cpu.index - cpu.index.min(), cpu.values)\n"
        "axes[0].set(title=\"CPU utilization (mean over cores)\", xlabel=\"seconds\", ylabel=\"%\")\n"
        "axes[1].plot(steps, marker=\"o\")\n"
        "axes[1].set(title=\"Step durations\", xlabel=\"step\", ylabel=\"seconds\")\n"
        "plt.show()"
    ),
    new_markdown_cell("## The HTML report\n\nThe same file as `sagemaker-debugger-ext report JOB`."),
    new_code_cell(
        "import html\n\n"
        "from IPython.display import HTML\n\n"
        "from sagemaker_debugger_ext.profiler import render_profiler_report\n\n"
        "report = render_profiler_report(ptrial, \"profiler-report\")\n"
        "print(report)\n"
        "# An iframe keeps the report's styles away from the notebook's.\n"
        "HTML(f'<iframe srcdoc=\"{html.escape(report.read_text())}\" width=\"100%\" height=\"600\"></iframe>')"
    ),
]

XGBOOST = [
    new_markdown_cell(
        "# XGBoost with its report\n\n"
        "The XGBoost hook is a training callback. The job saves metrics, feature importance and "
        "the trees; the XGBoost rules check them, and the job report shows rule summary, metric "
        "curves and flagged tensors."
    ),
    new_code_cell(
        "from pathlib import Path\n\nfrom sagemaker_debugger_ext import CollectionConfig, DebuggerHookConfig, Estimator, Rule, rule_configs\n"
        "from sagemaker_debugger_ext.reports import job_report_html, plot_tensor, rule_summary\n"
        "from sagemaker_debugger_ext.trials import create_trial\n\n" + ROLE + "\n\n"
        "every_step = {\"save_interval\": \"1\"}\n"
        "estimator = Estimator(\n"
        "    image_uri=\"local-python\",\n"
        "    role=ROLE,\n"
        "    instance_count=1,\n"
        "    instance_type=\"local\",\n"
        "    entry_point=\"train_xgboost.py\",\n"
        "    source_dir=SCRIPTS,\n"
        "    hyperparameters={\"num_round\": 10, \"max_depth\": 6},\n"
        "    debugger_hook_config=DebuggerHookConfig(\n"
        "        hook_parameters=every_step,\n"
        "        collection_configs=[CollectionConfig(name=n) for n in (\"metrics\", \"feature_importance\", \"trees\")],\n"
        "    ),\n"
        "    rules=[\n"
        "        Rule.sagemaker(rule_configs.tree_depth(), rule_parameters={\"depth\": \"4\"}),\n"
        "        Rule.sagemaker(rule_configs.feature_importance_overweight(),\n"
        "                       collections_to_save=[CollectionConfig(name=\"feature_importance\", parameters=every_step)]),\n"
        "    ],\n"
        ")\n"
        "estimator.fit(wait=True, logs=False)"
    ),
    new_code_cell("job = estimator.latest_training_job\nprint(rule_summary(job.describe()))"),
    new_code_cell(
        "import matplotlib.pyplot as plt\n\n"
        "trial = create_trial(estimator.latest_job_debugger_artifacts_path())\n"
        "metrics = trial.tensor_names(collection=\"metrics\")\n"
        "print(metrics)\n"
        "fig, ax = plt.subplots(figsize=(6, 3))\n"
        "for name in metrics:\n"
        "    plot_tensor(trial, name, ax=ax)\n"
        "plt.show()"
    ),
    new_markdown_cell("## The job report\n\nOne self-contained HTML file (also `sagemaker-debugger-ext report JOB`)."),
    new_code_cell(
        "import html\n\n"
        "from IPython.display import HTML\n\n"
        "page = job_report_html(job.describe(), trial=trial)\n"
        "with open(\"job-report.html\", \"w\") as f:\n"
        "    f.write(page)\n"
        "# An iframe keeps the report's styles away from the notebook's.\n"
        "HTML(f'<iframe srcdoc=\"{html.escape(page)}\" width=\"100%\" height=\"600\"></iframe>')"
    ),
]

NOTEBOOKS = {
    "01-quickstart.ipynb": QUICKSTART,
    "02-custom-rules.ipynb": CUSTOM_RULES,
    "03-trial-analysis.ipynb": TRIAL_ANALYSIS,
    "04-profiler-report.ipynb": PROFILER,
    "05-xgboost-report.ipynb": XGBOOST,
}


QUIET = new_code_cell(
    "# Keep the SageMaker SDK v2's deprecation notice and config INFO lines out of the outputs.\n"
    "import logging\n"
    "import os\n\n"
    "os.environ[\"SAGEMAKER_SUPPRESS_V2_WARNING\"] = \"1\"\n"
    "logging.getLogger(\"sagemaker.config\").setLevel(logging.WARNING)"
)


def cells_of(name: str) -> list:  # type: ignore[type-arg]
    """The cells of one notebook: its title, the QUIET cell, then the rest."""
    cells = NOTEBOOKS[name]
    return [cells[0], QUIET, *cells[1:]]


def main() -> None:
    for name in NOTEBOOKS:
        nb = new_notebook(cells=cells_of(name))
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
        nb.metadata["language_info"] = {"name": "python"}
        for i, cell in enumerate(nb.cells):
            cell["id"] = f"cell-{i}"
        nbformat.validate(nb)
        nbformat.write(nb, HERE / name)


if __name__ == "__main__":
    main()
