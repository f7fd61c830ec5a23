"""Bad CreateTrainingJob requests, as SDK estimators send them, refused by the local training
client before anything starts: each row asserts the error type, that the message names the
field, the value and what is allowed, and that no job was created.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bad_input_helpers import (
    RULE_SRC,
    Row,
    builtin,
    check_row,
    custom,
    job_request,
    no_job_started,
    rows_parametrized,
    send,
)

from sagemaker_debugger_ext._exceptions import LocalJobInputError

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ROWS: list[Row] = [
    # --- requests as SDK estimators send them, refused by the local client (items 6 and 9) ---
    (
        "rule_param_unknown_did_you_mean",
        lambda t: send(job_request(DebugRuleConfigurations=[builtin({"num_step": "3"})])),
        LocalJobInputError,
        "RuleParameters['num_step']",
        "'3'",
        "did you mean 'num_steps'",
    ),
    (
        "rule_param_wrong_kind",
        lambda t: send(job_request(DebugRuleConfigurations=[builtin({"num_steps": "three"})])),
        LocalJobInputError,
        "RuleParameters['num_steps']",
        "'three'",
        "an integer",
    ),
    (
        "rule_param_not_allowed_value",
        lambda t: send(job_request(DebugRuleConfigurations=[builtin({"mode": "TRAINING"})])),
        LocalJobInputError,
        "RuleParameters['mode']",
        "'TRAINING'",
        "one of ['EVAL', 'TRAIN', 'GLOBAL']",
    ),
    (
        "rule_param_not_a_number",
        lambda t: send(job_request(DebugRuleConfigurations=[builtin({"diff_percent": "lots"})])),
        LocalJobInputError,
        "RuleParameters['diff_percent']",
        "'lots'",
        "a number",
    ),
    (
        "custom_rule_source_missing",
        lambda t: send(job_request(DebugRuleConfigurations=[custom(t, None)])),
        LocalJobInputError,
        "RuleParameters['source_s3_uri']",
        "my_rule.py",
        "existing Python file",
    ),
    (
        "custom_rule_syntax_error",
        lambda t: send(job_request(DebugRuleConfigurations=[custom(t, "class MyRule(object)\n    pass\n")])),
        LocalJobInputError,
        "my_rule.py, line 1",
        "SyntaxError",
        "expected ':'",
    ),
    (
        "custom_rule_class_missing",
        lambda t: send(job_request(DebugRuleConfigurations=[custom(t, RULE_SRC, cls="Other")])),
        LocalJobInputError,
        "rule_to_invoke",
        "'Other'",
        "classes there: ['MyRule']",
    ),
    (
        "custom_rule_unknown_param",
        lambda t: send(job_request(DebugRuleConfigurations=[custom(t, RULE_SRC, {"treshold": "2"})])),
        LocalJobInputError,
        "RuleParameters['treshold']",
        "'2'",
        "did you mean 'threshold'",
    ),
    (
        "request_instance_count_zero",
        lambda t: send(job_request(ResourceConfig={"InstanceType": "local", "InstanceCount": 0, "VolumeSizeInGB": 1})),
        LocalJobInputError,
        "'instance_count'",
        "got 0",
        "integer >= 1",
    ),
    (
        "request_ml_instance_type",
        lambda t: send(
            job_request(ResourceConfig={"InstanceType": "ml.p3.2xlarge", "InstanceCount": 1, "VolumeSizeInGB": 1})
        ),
        LocalJobInputError,
        "'instance_type'",
        "'ml.p3.2xlarge'",
        "local mode",
    ),
    (
        "request_duplicate_rule_names",
        lambda t: send(
            job_request(
                DebugRuleConfigurations=[builtin({}, "Same")],
                ProfilerRuleConfigurations=[{"RuleConfigurationName": "Same", "RuleEvaluatorImage": "img"}],
            )
        ),
        LocalJobInputError,
        "ProfilerRuleConfigurations[0].RuleConfigurationName",
        "'Same'",
        "unique among the job's rules",
    ),
    (
        "request_hook_save_interval",
        lambda t: send(
            job_request(DebugHookConfig={"S3OutputPath": "out", "HookParameters": {"save_interval": "ten"}})
        ),
        LocalJobInputError,
        "HookParameters['save_interval']",
        "'ten'",
        "integer >= 1",
    ),
    (
        "request_collection_save_interval",
        lambda t: send(
            job_request(
                DebugHookConfig={
                    "S3OutputPath": "out",
                    "CollectionConfigurations": [
                        {"CollectionName": "w", "CollectionParameters": {"save_interval": "-1"}}
                    ],
                }
            )
        ),
        LocalJobInputError,
        "['save_interval']",
        "'-1'",
        "integer >= 1",
    ),
    (
        "request_hook_output_malformed",
        lambda t: send(job_request(DebugHookConfig={"S3OutputPath": "s3:/broken"})),
        LocalJobInputError,
        "DebugHookConfig.S3OutputPath",
        "'s3:/broken'",
        "s3://bucket/",
    ),
    (
        "request_output_other_scheme",
        lambda t: send(job_request(OutputDataConfig={"S3OutputPath": "gs://b/out"})),
        LocalJobInputError,
        "OutputDataConfig.S3OutputPath",
        "'gs://b/out'",
        "s3://bucket/",
    ),
    (
        "request_tensorboard_no_bucket",
        lambda t: send(job_request(TensorBoardOutputConfig={"S3OutputPath": "s3://"})),
        LocalJobInputError,
        "TensorBoardOutputConfig.S3OutputPath",
        "'s3://'",
        "bucket name",
    ),
]

# Rows run without AWS credentials: an s3:// address must fail before training.
NO_CREDENTIAL_ROWS: list[Row] = [
    (
        "s3_output_without_credentials",
        lambda t: send(job_request(OutputDataConfig={"S3OutputPath": "s3://bucket/out"})),
        LocalJobInputError,
        "OutputDataConfig.S3OutputPath",
        "'s3://bucket/out'",
        "AWS credentials",
    ),
    (
        "s3_hook_without_credentials",
        lambda t: send(job_request(DebugHookConfig={"S3OutputPath": "s3://bucket/dbg"})),
        LocalJobInputError,
        "DebugHookConfig.S3OutputPath",
        "'s3://bucket/dbg'",
        "AWS credentials",
    ),
    (
        "s3_channel_without_credentials",
        lambda t: send(
            job_request(
                InputDataConfig=[
                    {
                        "ChannelName": "train",
                        "DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": "s3://bucket/in"}},
                    }
                ]
            )
        ),
        LocalJobInputError,
        "channel 'train'",
        "'s3://bucket/in'",
        "AWS credentials",
    ),
]


@rows_parametrized(ROWS)
def test_bad_request(row: Row, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The row's error names the field, the value and what is allowed; no job exists."""
    check_row(row, tmp_path, monkeypatch)


@rows_parametrized(NO_CREDENTIAL_ROWS)
def test_s3_without_credentials_fails_before_training(
    row: Row, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No usable credentials: an s3:// output or channel is refused before the job starts."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SECURITY_TOKEN", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    check_row(row, tmp_path, monkeypatch)


def test_one_error_names_every_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Several problems in one request come back together in one error."""
    monkeypatch.chdir(tmp_path)
    request = job_request(
        ResourceConfig={"InstanceType": "local", "InstanceCount": 0, "VolumeSizeInGB": 1},
        DebugRuleConfigurations=[builtin({"num_step": "3", "mode": "TRAINING"}), custom(tmp_path, "class MyRule(\n")],
        DebugHookConfig={"S3OutputPath": "s3:/x", "HookParameters": {"save_interval": "0"}},
    )
    with pytest.raises(LocalJobInputError) as info:
        send(request)()
    fields = [field for field, _ in info.value.problems]  # type: ignore[attr-defined]
    assert len(fields) == 6, info.value
    assert "5 problem" not in str(info.value) and "6 problem(s)" in str(info.value)
    no_job_started()


def test_hook_off_with_rules_warns_rules_have_no_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """debugger_hook_config=False with Debugger rules: a warning that the rules will have no data."""
    from sagemaker_debugger_ext.local import LocalTrainingClient

    monkeypatch.chdir(tmp_path)
    request = job_request(DebugRuleConfigurations=[builtin({})])
    del request["DebugHookConfig"]
    client = LocalTrainingClient(settings={"StartMonitor": False}, region="us-west-2")
    # A second problem (InstanceCount 0) stops the job before it starts; the warning comes first.
    with (
        pytest.warns(UserWarning, match=r"Debugger rules \['LossNotDecreasing'\] will have no data"),
        pytest.raises(LocalJobInputError),
    ):
        client.create_training_job(**{**request, "ResourceConfig": {"InstanceType": "local", "InstanceCount": 0}})
    no_job_started()


def test_table_has_at_least_15_rows() -> None:
    """Acceptance: at least 40 bad inputs, with test_local_bad_inputs.py's (at least 25)."""
    assert len(ROWS) + len(NO_CREDENTIAL_ROWS) >= 15
