# %% [markdown]
# # Quickstart: a local job with built-in rules
#
# This trains a tiny PyTorch model with `instance_type="local"`: no Docker, no AWS account. The Debugger hook saves tensors, the built-in rules run next to training, and we look at the rule summary and plot the tensors a rule flagged.
#
# The learning rate is 0, so the loss cannot decrease and `LossNotDecreasing` finds an issue.

# %%
import os

# This package builds on the SageMaker SDK v2 on purpose (v3 has no Debugger): no notice that v2 is deprecated.
os.environ["SAGEMAKER_SUPPRESS_V2_WARNING"] = "1"

from sagemaker_debugger_ext import CollectionConfig, DebuggerHookConfig, Estimator, Rule, rule_configs
from sagemaker_debugger_ext.reports import flagged_tensors, plot_tensor, rule_summary
from sagemaker_debugger_ext.trials import create_trial

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"  # any role ARN: local mode does not assume it

# %%
every_step = {"save_interval": "1"}
estimator = Estimator(
    image_uri="local-python",  # recorded in the request; local mode runs the entry point in this environment
    role=ROLE,
    instance_count=1,
    instance_type="local",
    entry_point="train_pytorch.py",
    source_dir="scripts",  # the training scripts next to this notebook
    hyperparameters={"epochs": 2, "lr": 0.0},
    debugger_hook_config=DebuggerHookConfig(hook_parameters=every_step),
    rules=[
        Rule.sagemaker(
            rule_configs.loss_not_decreasing(),
            rule_parameters={"num_steps": "3", "mode": "TRAIN"},
            collections_to_save=[CollectionConfig(name="losses", parameters=every_step)],
        ),
        Rule.sagemaker(
            rule_configs.vanishing_gradient(),
            collections_to_save=[CollectionConfig(name="gradients", parameters=every_step)],
        ),
    ],
)
# logs="Rules": the rules' logs and a [progress] line at every status change (logs=False: silent)
estimator.fit(wait=True, logs="Rules")

# %% [markdown]
# ## The rule summary
#
# `fit()` returns once training and the rules have finished. `rule_summary` formats what `DescribeTrainingJob` returns, exactly as on SageMaker; the SDK call `estimator.latest_training_job.rule_job_summary()` gives the same statuses as a list of dicts.

# %%
job = estimator.latest_training_job
summary = rule_summary(job.describe())
print(summary)

# %% [markdown]
# ## The flagged tensors
#
# Open the job's debug output as a trial and plot what each rule that found issues looked at.

# %%
import matplotlib.pyplot as plt

trial = create_trial(estimator.latest_job_debugger_artifacts_path())
flagged = flagged_tensors(job.describe(), trial)
print(flagged)
for rule, names in flagged.items():
    for name in names:
        fig, ax = plt.subplots(figsize=(6, 3))
        plot_tensor(trial, name, ax=ax)
        ax.set_title(f"{rule}: {name}")
        plt.show()
