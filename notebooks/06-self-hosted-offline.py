# %% [markdown]
# # Debugger on SageMaker without the Debugger service, tried offline
#
# AWS closed SageMaker Debugger to new customers: in the cloud, nothing evaluates the rules of a new account's jobs any more. The **self-hosted** backend does the service's work with SageMaker's own building blocks:
#
# - the SDK's own estimator (here `sagemaker.pytorch.PyTorch`) sends a `CreateTrainingJob` **without** any Debugger field;
# - the hook's configuration travels in the job's source bundle with a small launcher, which syncs `debug-output` to S3 from the training container;
# - each rule runs as a SageMaker **Processing job** that reads the trial from S3 and can stop the training job;
# - `describe()`, `rule_job_summary()` and the trial read from S3 work as they did with the service.
#
# This notebook runs that whole path on this machine: SageMaker is `sagemaker-debugger-ext serve` and S3 is moto's server, both on 127.0.0.1, and the `ml.*` jobs run here. **On AWS, skip the next cell**: the rest is the code you run against your account (with your role and bucket).

# %%
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import boto3

# This package builds on the SageMaker SDK v2 on purpose: no notice that v2 is deprecated.
os.environ["SAGEMAKER_SUPPRESS_V2_WARNING"] = "1"
# Warnings only (the SDK turns on INFO logging for everything the first time it imports its metrics module).
logging.basicConfig(level=logging.WARNING)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


s3_url, sm_port = f"http://127.0.0.1:{free_port()}", free_port()
os.environ.update(
    AWS_ENDPOINT_URL_S3=s3_url,  # S3 (and the jobs' S3, which inherit the variable): moto
    AWS_ENDPOINT_URL_CLOUDWATCH_LOGS=s3_url,  # the job's logs, which fit(logs=True) follows: moto too
    AWS_ENDPOINT_URL_SAGEMAKER=f"http://127.0.0.1:{sm_port}",  # SageMaker: sagemaker-debugger-ext serve
    AWS_ACCESS_KEY_ID="offline",
    AWS_SECRET_ACCESS_KEY="offline",
    AWS_DEFAULT_REGION="us-west-2",
    SAGEMAKER_DEBUGGER_EXT_HOME=tempfile.mkdtemp(prefix="sdx-home-"),  # serve's job store
    SAGEMAKER_DEBUGGER_EXT_SYNC_SECONDS="1",  # the launcher's sync period in the container (default 5 s)
)
bin_dir = os.path.dirname(sys.executable)
quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
moto = subprocess.Popen([os.path.join(bin_dir, "moto_server"), "-p", s3_url.rsplit(":", 1)[1]], **quiet)
serve = subprocess.Popen(
    [os.path.join(bin_dir, "sagemaker-debugger-ext"), "serve", "--port", str(sm_port), "--region", "us-west-2"],
    **quiet,
)


def answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=1)
    except OSError as exc:  # an HTTP error is an answer too
        return hasattr(exc, "code")
    return True


deadline = time.monotonic() + 60
while not (answers(s3_url) and answers(os.environ["AWS_ENDPOINT_URL_SAGEMAKER"])):
    assert time.monotonic() < deadline, "moto or serve did not start"
    time.sleep(0.2)
BUCKET = "my-debugger-bucket"
boto3.client("s3").create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
print("S3:", s3_url, "| SageMaker:", os.environ["AWS_ENDPOINT_URL_SAGEMAKER"])

# %% [markdown]
# ## The SDK's own estimator, on a `DebuggerSession`
#
# The only change to a Debugger job written for the service is the session: `DebuggerSession(debugger_backend="self-hosted")` is a `sagemaker.Session` (or set `SAGEMAKER_DEBUGGER_EXT_DEBUGGER_BACKEND=self-hosted`). The rules are the SDK's `Rule.sagemaker(...)` objects; the learning rate is 0, so the loss cannot decrease and `LossNotDecreasing` finds an issue. `rule_poll_seconds=1` makes the rule jobs ask often whether training has ended (the default is 10 s).

# %%
from sagemaker_debugger_ext.cloud import DebuggerSession  # first: the SDK then imports without its config-file notes

# isort: split
from sagemaker.debugger import CollectionConfig, DebuggerHookConfig, Rule, rule_configs
from sagemaker.pytorch import PyTorch

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
boto_session = boto3.Session(region_name="us-west-2")
session = DebuggerSession(
    boto_session=boto_session,
    sagemaker_client=boto_session.client("sagemaker"),
    default_bucket=BUCKET,
    debugger_backend="self-hosted",
    rule_poll_seconds=1,
    # offline: no SDK telemetry call to AWS (nor a look for SDK config files)
    sagemaker_config={"SchemaVersion": "1.0", "SageMaker": {"PythonSDK": {"Modules": {"TelemetryOptOut": True}}}},
)
every_step = {"save_interval": "1"}
estimator = PyTorch(
    entry_point="train_pytorch.py",
    source_dir="scripts",  # the training scripts next to this notebook
    role=ROLE,
    framework_version="2.3",
    py_version="py311",
    instance_count=1,
    instance_type="ml.m5.xlarge",
    output_path=f"s3://{BUCKET}/out",
    hyperparameters={"epochs": 2, "lr": 0.0},
    sagemaker_session=session,
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
# the job's logs, then (once the rule jobs have made their final evaluation) the rules' summary
estimator.fit(wait=True, logs=True)

# %% [markdown]
# ## What SageMaker received, and what ran
#
# The training job's request carries no Debugger field: its program is the launcher, and the source bundle holds the hook's configuration. Each rule ran as a Processing job, named as Debugger named its rule jobs.

# %%
sm = boto3.client("sagemaker")
name = estimator.latest_training_job.name
request = sm.describe_training_job(TrainingJobName=name)
print("Debugger fields sent:", [k for k in ("DebugHookConfig", "DebugRuleConfigurations") if k in request])
print("program:", request["HyperParameters"]["sagemaker_program"])
for job in sm.list_processing_jobs(NameContains=name[:26])["ProcessingJobSummaries"]:
    print("rule job:", job["ProcessingJobName"], job["ProcessingJobStatus"])

# %% [markdown]
# ## The rule summary and the flagged tensors
#
# `describe()` adds the rules' statuses in the service's shape (`RuleEvaluationJobArn` is the processing job's ARN), so the reports of a service job work unchanged; the trial is read from S3.

# %%
import matplotlib.pyplot as plt

from sagemaker_debugger_ext.reports import flagged_tensors, plot_tensor, rule_summary
from sagemaker_debugger_ext.trials import create_trial

description = estimator.latest_training_job.describe()
print(rule_summary(description))
trial = create_trial(estimator.latest_job_debugger_artifacts_path())
for rule, names in flagged_tensors(description, trial).items():
    for tensor in names:
        fig, ax = plt.subplots(figsize=(6, 3))
        plot_tensor(trial, tensor, ax=ax)
        ax.set_title(f"{rule}: {tensor}")
        plt.show()

# %% [markdown]
# ## Cleaning up
#
# Only for the offline run: stop `serve` and moto.

# %%
for process in (serve, moto):
    process.terminate()
    process.wait(timeout=30)
