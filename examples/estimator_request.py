"""An estimator with rules, a hook config, TensorBoard and a profiler config (works offline).

    sagemaker-debugger-ext request examples/estimator_request.py --job-name demo-job

``output_path`` is explicit, so no default-bucket lookup (STS/S3) happens.
"""

import boto3
import sagemaker

from sagemaker_debugger_ext import (
    CollectionConfig,
    DebuggerHookConfig,
    Estimator,
    ProfilerConfig,
    ProfilerRule,
    Rule,
    TensorBoardOutputConfig,
    rule_configs,
)

session = sagemaker.Session(boto_session=boto3.Session(region_name="us-west-2"))

estimator = Estimator(
    image_uri="123456789012.dkr.ecr.us-west-2.amazonaws.com/my-training:latest",
    role="arn:aws:iam::123456789012:role/SageMakerRole",
    instance_count=1,
    instance_type="ml.m5.xlarge",
    output_path="s3://my-bucket/training-output/",
    sagemaker_session=session,
    rules=[
        Rule.sagemaker(
            rule_configs.loss_not_decreasing(),
            actions=rule_configs.ActionList(rule_configs.StopTraining(), rule_configs.Email("mlteam@example.com")),
        ),
        Rule.sagemaker(rule_configs.vanishing_gradient()),
        ProfilerRule.sagemaker(rule_configs.ProfilerReport()),
    ],
    debugger_hook_config=DebuggerHookConfig(
        hook_parameters={"save_interval": "100"},
        collection_configs=[CollectionConfig("weights"), CollectionConfig("losses", {"save_interval": "10"})],
    ),
    tensorboard_output_config=TensorBoardOutputConfig("s3://my-bucket/tensorboard/"),
    profiler_config=ProfilerConfig(system_monitor_interval_millis=500),
)
