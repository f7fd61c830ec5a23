# %% [markdown]
# # The profiler report
#
# With a `ProfilerConfig`, a local job also records system metrics (CPU, memory, GPU when there is one) and framework metrics (step times), runs the profiler rules, and the profiler report renders them as HTML.

# %%
import os

# This package builds on the SageMaker SDK v2 on purpose (v3 has no Debugger): no notice that v2 is deprecated.
os.environ["SAGEMAKER_SUPPRESS_V2_WARNING"] = "1"

from sagemaker_debugger_ext import CollectionConfig, Estimator, ProfilerConfig, ProfilerRule, Rule, rule_configs
from sagemaker_debugger_ext.reports import rule_summary

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"  # any role ARN: local mode does not assume it

estimator = Estimator(
    image_uri="local-python",
    role=ROLE,
    instance_count=1,
    instance_type="local",
    entry_point="train_pytorch.py",
    source_dir="scripts",  # the training scripts next to this notebook
    hyperparameters={"epochs": 2, "lr": 0.1},
    profiler_config=ProfilerConfig(system_monitor_interval_millis=100),
    rules=[
        ProfilerRule.sagemaker(rule_configs.ProfilerReport()),
        Rule.sagemaker(
            rule_configs.loss_not_decreasing(),
            collections_to_save=[CollectionConfig(name="losses", parameters={"save_interval": "1"})],
        ),
    ],
)
estimator.fit(wait=True, logs=False)

# %%
job = estimator.latest_training_job
print(rule_summary(job.describe()))

# %% [markdown]
# ## System and framework metrics
#
# `create_profiler_trial` reads them; `system_metrics_df()` gives a pandas DataFrame.

# %%
import matplotlib.pyplot as plt

from sagemaker_debugger_ext.profiler import create_profiler_trial

ptrial = create_profiler_trial(estimator.latest_job_profiler_artifacts_path())
system = ptrial.system_metrics_df()
cpu = system[system.dimension == "CPUUtilization"].groupby("timestamp").value.mean()
steps = ptrial.step_durations()
fig, axes = plt.subplots(1, 2, figsize=(10, 3))
axes[0].plot(cpu.index - cpu.index.min(), cpu.values)
axes[0].set(title="CPU utilization (mean over cores)", xlabel="seconds", ylabel="%")
axes[1].plot(steps, marker="o")
axes[1].set(title="Step durations", xlabel="step", ylabel="seconds")
plt.show()

# %% [markdown]
# ## The HTML report
#
# The same file as `sagemaker-debugger-ext report JOB`.

# %%
import html

from IPython.display import display_html

from sagemaker_debugger_ext.profiler import render_profiler_report

report = render_profiler_report(ptrial, "profiler-report")
print(report)
# Inline, in an iframe (srcdoc) that keeps the report's styles away from the notebook's.
display_html(f'<iframe srcdoc="{html.escape(report.read_text())}" width="100%" height="600"></iframe>', raw=True)
