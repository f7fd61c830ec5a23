# %% [markdown]
# # XGBoost with its report
#
# The XGBoost hook is a training callback. The job saves metrics, feature importance and the trees; the XGBoost rules check them, and the job report shows rule summary, metric curves and flagged tensors.

# %%
import os

# This package builds on the SageMaker SDK v2 on purpose (v3 has no Debugger): no notice that v2 is deprecated.
os.environ["SAGEMAKER_SUPPRESS_V2_WARNING"] = "1"

from sagemaker_debugger_ext import CollectionConfig, DebuggerHookConfig, Estimator, Rule, rule_configs
from sagemaker_debugger_ext.reports import job_report_html, plot_tensor, rule_summary
from sagemaker_debugger_ext.trials import create_trial

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"  # any role ARN: local mode does not assume it

every_step = {"save_interval": "1"}
estimator = Estimator(
    image_uri="local-python",
    role=ROLE,
    instance_count=1,
    instance_type="local",
    entry_point="train_xgboost.py",
    source_dir="scripts",  # the training scripts next to this notebook
    hyperparameters={"num_round": 10, "max_depth": 6},
    debugger_hook_config=DebuggerHookConfig(
        hook_parameters=every_step,
        collection_configs=[CollectionConfig(name=n) for n in ("metrics", "feature_importance", "trees")],
    ),
    rules=[
        Rule.sagemaker(rule_configs.tree_depth(), rule_parameters={"depth": "4"}),
        Rule.sagemaker(
            rule_configs.feature_importance_overweight(),
            collections_to_save=[CollectionConfig(name="feature_importance", parameters=every_step)],
        ),
    ],
)
estimator.fit(wait=True, logs=False)

# %%
job = estimator.latest_training_job
print(rule_summary(job.describe()))

# %%
import matplotlib.pyplot as plt

trial = create_trial(estimator.latest_job_debugger_artifacts_path())
metrics = trial.tensor_names(collection="metrics")
print(metrics)
fig, ax = plt.subplots(figsize=(6, 3))
for name in metrics:
    plot_tensor(trial, name, ax=ax)
plt.show()

# %% [markdown]
# ## The job report
#
# One self-contained HTML file (also `sagemaker-debugger-ext report JOB`).

# %%
import html

from IPython.display import display_html

page = job_report_html(job.describe(), trial=trial)
with open("job-report.html", "w") as f:
    f.write(page)
# Inline, in an iframe (srcdoc) that keeps the report's styles away from the notebook's.
display_html(f'<iframe srcdoc="{html.escape(page)}" width="100%" height="600"></iframe>', raw=True)
