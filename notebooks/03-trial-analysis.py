# %% [markdown]
# # Interactive trial analysis
#
# A trial is the tensors a job saved. `create_trial` opens a local folder or an `s3://` URI; the API is smdebug's. We run a short job first, then explore its trial.

# %%
import os

# This package builds on the SageMaker SDK v2 on purpose (v3 has no Debugger): no notice that v2 is deprecated.
os.environ["SAGEMAKER_SUPPRESS_V2_WARNING"] = "1"

from sagemaker_debugger_ext import CollectionConfig, DebuggerHookConfig, Estimator, Rule, rule_configs
from sagemaker_debugger_ext.reports import plot_tensor, rule_summary, summarize_trial
from sagemaker_debugger_ext.trials import create_trial

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"  # any role ARN: local mode does not assume it

estimator = Estimator(
    image_uri="local-python",
    role=ROLE,
    instance_count=1,
    instance_type="local",
    entry_point="train_pytorch.py",
    source_dir="scripts",  # the training scripts next to this notebook
    hyperparameters={"epochs": 2, "lr": 0.1},
    debugger_hook_config=DebuggerHookConfig(
        hook_parameters={"save_interval": "1"},
        collection_configs=[CollectionConfig(name=n) for n in ("weights", "gradients", "losses")],
    ),
    rules=[Rule.sagemaker(rule_configs.exploding_tensor())],
)
estimator.fit(wait=True, logs=False)

# %%
job = estimator.latest_training_job
print(rule_summary(job.describe()))

# %%
from sagemaker_debugger_ext.pytorch import modes

trial = create_trial(estimator.latest_job_debugger_artifacts_path())
print("workers:", trial.workers())
print("train steps:", trial.steps(mode=modes.TRAIN))
print("eval steps:", trial.steps(mode=modes.EVAL))
print("collections:", sorted(trial.collections()))
print("losses:", trial.tensor_names(collection="losses"))

# %% [markdown]
# ## Values and reductions

# %%
loss_name = trial.tensor_names(collection="losses")[0]
loss = trial.tensor(loss_name)
print({step: float(v) for step, v in loss.values(mode=modes.TRAIN).items()})
weight = trial.tensor(trial.tensor_names(collection="weights")[0])
step = weight.steps()[-1]
print(weight.value(step).shape, float(weight.reduction_value(step, "mean", abs=True)))

# %% [markdown]
# ## A summary table and plots

# %%
import pandas as pd

summary = summarize_trial(trial)
pd.DataFrame([{"tensor": t.name, "shape": t.shape, "steps": len(t.steps)} for t in summary.tensors])

# %%
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, 2, figsize=(10, 3))
plot_tensor(trial, loss_name, ax=axes[0])
plot_tensor(trial, weight.name, reduction="l2", ax=axes[1])
plt.show()
