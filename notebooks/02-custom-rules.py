# %% [markdown]
# # Custom rules
#
# A custom rule is an smdebug-style `Rule` subclass. We write one to a file, run it on a trial with `invoke_rule`, then run the same file as a rule of a local training job.

# %%
# %%writefile large_gradient.py
from sagemaker_debugger_ext.rules import Rule


class LargeGradient(Rule):
    """Fires when the largest absolute gradient value exceeds `threshold`."""

    def __init__(self, base_trial, threshold="1.0"):
        super().__init__(base_trial)
        self.threshold = float(threshold)

    def invoke_at_step(self, step):
        for name in self.base_trial.tensor_names(collection="gradients"):
            tensor = self.base_trial.tensor(name)
            if step in tensor.steps() and abs(tensor.value(step)).max() > self.threshold:
                self.logger.info(f"{name} exceeds {self.threshold} at step {step}")
                return True
        return False


# %%
import os

# This package builds on the SageMaker SDK v2 on purpose (v3 has no Debugger): no notice that v2 is deprecated.
os.environ["SAGEMAKER_SUPPRESS_V2_WARNING"] = "1"

from sagemaker_debugger_ext import CollectionConfig, DebuggerHookConfig, Estimator, Rule
from sagemaker_debugger_ext.reports import plot_tensor, rule_summary
from sagemaker_debugger_ext.rules import invoke_rule
from sagemaker_debugger_ext.trials import create_trial

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"  # any role ARN: local mode does not assume it

# %% [markdown]
# ## A local job with the custom rule
#
# `Rule.custom` with a local `source` file: in local mode the file is used in place.

# %%
every_step = {"save_interval": "1"}
estimator = Estimator(
    image_uri="local-python",
    role=ROLE,
    instance_count=1,
    instance_type="local",
    entry_point="train_pytorch.py",
    source_dir="scripts",  # the training scripts next to this notebook
    hyperparameters={"epochs": 1, "lr": 0.5},
    debugger_hook_config=DebuggerHookConfig(hook_parameters=every_step),
    rules=[
        Rule.custom(
            name="LargeGradient",
            image_uri="local-python",
            instance_type="ml.t3.medium",
            volume_size_in_gb=1,
            source="large_gradient.py",
            rule_to_invoke="LargeGradient",
            rule_parameters={"threshold": "0.05"},
            collections_to_save=[CollectionConfig(name="gradients", parameters=every_step)],
        ),
    ],
)
estimator.fit(wait=True, logs=False)

# %%
job = estimator.latest_training_job
print(rule_summary(job.describe()))

# %% [markdown]
# ## The same rule on the trial, interactively
#
# `invoke_rule` runs it step by step, exactly like smdebug.

# %%
import large_gradient  # the file written above

from sagemaker_debugger_ext.rules import RuleEvaluationConditionMet

trial = create_trial(estimator.latest_job_debugger_artifacts_path())
try:
    invoke_rule(large_gradient.LargeGradient(trial, threshold="0.05"), raise_eval_cond=True)
    print("condition never met")
except RuleEvaluationConditionMet as met:
    print("condition met:", met)

# %%
import matplotlib.pyplot as plt

name = trial.tensor_names(collection="gradients")[0]
fig, ax = plt.subplots(figsize=(6, 3))
plot_tensor(trial, name, reduction="max", ax=ax)
plt.show()
