"""``sagemaker-debugger-ext request FILE.py`` as the installed console script."""

from __future__ import annotations

import json

import pytest

ESTIMATOR_FILE = """
from sagemaker_debugger_ext import Estimator, Rule, rule_configs

estimator = Estimator(
    image_uri="123456789012.dkr.ecr.us-west-2.amazonaws.com/my-training:latest",
    role="arn:aws:iam::123456789012:role/SageMakerRole",
    instance_count=1,
    instance_type="ml.m5.xlarge",
    output_path="s3://my-bucket/out",
    rules=[Rule.sagemaker(rule_configs.loss_not_decreasing())],
)
"""


@pytest.fixture
def estimator_file(tmp_path):
    """A Python file defining ``estimator``."""
    path = tmp_path / "est.py"
    path.write_text(ESTIMATOR_FILE)
    return path


def test_request_prints_create_training_job_json(cli, estimator_file):
    """The JSON on stdout is the request, with the rule and the default hook config, and nothing else."""
    proc = cli("request", str(estimator_file), "--job-name", "job-1")
    assert proc.returncode == 0, proc.stderr
    request = json.loads(proc.stdout)
    assert request["TrainingJobName"] == "job-1"
    assert request["DebugHookConfig"]["S3OutputPath"] == "s3://my-bucket/out"
    rule = request["DebugRuleConfigurations"][0]
    assert rule["RuleConfigurationName"] == "LossNotDecreasing"
    assert rule["RuleEvaluatorImage"].endswith(".dkr.ecr.us-west-2.amazonaws.com/sagemaker-debugger-rules:latest")


def test_request_bad_input_is_one_line(cli, expect_error, expect_traceback, estimator_file, tmp_path):
    """A missing file or variable is a one-line error naming it; --debug shows the traceback."""
    expect_error(cli("request", str(tmp_path / "nope.py")), "nope.py")
    expect_error(cli("request", str(estimator_file), "--var", "missing_var"), "missing_var")
    expect_traceback(cli("--debug", "request", str(tmp_path / "nope.py")))
