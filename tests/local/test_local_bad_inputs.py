"""Bad inputs, found before anything starts: each row asserts the error type, that the message
names the field, the value and what is allowed, and that no job was created.

Rows build config objects (construction), our Estimator, or send a CreateTrainingJob request
(as an SDK estimator does) to the local training client.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import sagemaker_debugger_ext as sdx
from sagemaker_debugger_ext._exceptions import (
    ConfigTypeError,
    ConfigValueError,
    DebuggerExtError,
    LocalJobInputError,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

rc = sdx.rule_configs
SCRIPTS = Path(__file__).resolve().parent / "scripts"
ROLE = "arn:aws:iam::123456789012:role/R"
Make = Callable[[Path], Any]


def _est(**kwargs: Any) -> Any:
    base = {
        "image_uri": "local-python", "role": ROLE, "instance_count": 1, "instance_type": "local",
        "entry_point": "train_steps.py", "source_dir": str(SCRIPTS),
    }  # fmt: skip
    base.update(kwargs)
    if "sagemaker_session" not in base:
        base["sagemaker_session"] = sdx.LocalSession(settings={"StartMonitor": False})
    return sdx.Estimator(**base)


def _request(**extra: Any) -> dict[str, Any]:
    req: dict[str, Any] = {
        "TrainingJobName": "bad-job",
        "AlgorithmSpecification": {"TrainingImage": "local-image", "TrainingInputMode": "File"},
        "RoleArn": ROLE,
        "OutputDataConfig": {"S3OutputPath": "out"},
        "ResourceConfig": {"InstanceType": "local", "InstanceCount": 1, "VolumeSizeInGB": 30},
        "StoppingCondition": {"MaxRuntimeInSeconds": 120},
        "HyperParameters": {
            "sagemaker_program": '"train_steps.py"',
            "sagemaker_submit_directory": f'"{SCRIPTS.as_uri()}"',
        },
        "DebugHookConfig": {"S3OutputPath": "out", "CollectionConfigurations": []},
    }
    req.update(extra)
    return req


def _builtin(params: dict[str, str], name: str = "LossNotDecreasing") -> dict[str, Any]:
    return {
        "RuleConfigurationName": name,
        "RuleEvaluatorImage": "img",
        "RuleParameters": {"rule_to_invoke": "LossNotDecreasing", **params},
    }


def _custom(tmp: Path, text: str | None, params: dict[str, str] | None = None, cls: str = "MyRule") -> dict[str, Any]:
    path = tmp / "my_rule.py"
    if text is not None:
        path.write_text(text)
    return {
        "RuleConfigurationName": "Mine", "RuleEvaluatorImage": "img", "InstanceType": "ml.m5.xlarge", "VolumeSizeInGB": 1,
        "RuleParameters": {"source_s3_uri": str(path), "rule_to_invoke": cls, **(params or {})},
    }  # fmt: skip


def _send(request: dict[str, Any]) -> Callable[[], Any]:
    def send() -> Any:
        from sagemaker_debugger_ext.local import LocalTrainingClient

        return LocalTrainingClient(settings={"StartMonitor": False}, region="us-west-2").create_training_job(**request)

    return send


_RULE_SRC = "from sagemaker_debugger_ext.rules import Rule\n\nclass MyRule(Rule):\n    def __init__(self, base_trial, threshold='1'):\n        super().__init__(base_trial)\n"

# (id, make(tmp) -> thunk, error type, field, value, allowed, needs no credentials)
ROWS: list[tuple[str, Make, type[Exception], str, str, str]] = [
    # --- hook and collection parameters, at construction (item 9) ---
    (
        "hook_save_interval_word",
        lambda t: lambda: sdx.DebuggerHookConfig(hook_parameters={"save_interval": "ten"}),
        ConfigValueError,
        "hook_parameters['save_interval']",
        "'ten'",
        "integer >= 1",
    ),
    (
        "hook_save_interval_negative",
        lambda t: lambda: sdx.DebuggerHookConfig(hook_parameters={"save_interval": "-1"}),
        ConfigValueError,
        "hook_parameters['save_interval']",
        "'-1'",
        "integer >= 1",
    ),
    (
        "hook_save_interval_zero",
        lambda t: lambda: sdx.DebuggerHookConfig(hook_parameters={"save_interval": "0"}),
        ConfigValueError,
        "hook_parameters['save_interval']",
        "'0'",
        "integer >= 1",
    ),
    (
        "hook_mode_save_interval",
        lambda t: lambda: sdx.DebuggerHookConfig(hook_parameters={"train.save_interval": "x"}),
        ConfigValueError,
        "train.save_interval",
        "'x'",
        "integer >= 1",
    ),
    (
        "hook_reductions",
        lambda t: lambda: sdx.DebuggerHookConfig(hook_parameters={"reductions": "median"}),
        ConfigValueError,
        "reductions",
        "'median'",
        "comma-separated list of min, max",
    ),
    (
        "hook_save_all",
        lambda t: lambda: sdx.DebuggerHookConfig(hook_parameters={"save_all": "maybe"}),
        ConfigValueError,
        "save_all",
        "'maybe'",
        "boolean",
    ),
    (
        "hook_include_workers",
        lambda t: lambda: sdx.DebuggerHookConfig(hook_parameters={"include_workers": "some"}),
        ConfigValueError,
        "include_workers",
        "'some'",
        "'one' or 'all'",
    ),
    (
        "collection_save_interval_zero",
        lambda t: lambda: sdx.CollectionConfig("weights", {"save_interval": "0"}),
        ConfigValueError,
        "CollectionConfig('weights').parameters['save_interval']",
        "'0'",
        "integer >= 1",
    ),
    (
        "collection_save_steps",
        lambda t: lambda: sdx.CollectionConfig("weights", {"save_steps": "1,two"}),
        ConfigValueError,
        "save_steps",
        "'two'",
        "integer >= 0",
    ),
    (
        "collection_save_histogram",
        lambda t: lambda: sdx.CollectionConfig("weights", {"save_histogram": "x"}),
        ConfigValueError,
        "save_histogram",
        "'x'",
        "boolean",
    ),
    # --- output addresses (item 6) ---
    (
        "hook_output_no_scheme_slash",
        lambda t: lambda: sdx.DebuggerHookConfig(s3_output_path="s3:/broken"),
        ConfigValueError,
        "DebuggerHookConfig.s3_output_path",
        "'s3:/broken'",
        "s3://bucket/",
    ),
    (
        "hook_output_other_scheme",
        lambda t: lambda: sdx.DebuggerHookConfig(s3_output_path="gs://b/x"),
        ConfigValueError,
        "DebuggerHookConfig.s3_output_path",
        "'gs://b/x'",
        "file:// URI or a local folder",
    ),
    (
        "hook_output_no_bucket",
        lambda t: lambda: sdx.DebuggerHookConfig(s3_output_path="s3:///x"),
        ConfigValueError,
        "DebuggerHookConfig.s3_output_path",
        "'s3:///x'",
        "bucket name",
    ),
    (
        "tensorboard_output",
        lambda t: lambda: sdx.TensorBoardOutputConfig("s3:/tb"),
        ConfigValueError,
        "TensorBoardOutputConfig.s3_output_path",
        "'s3:/tb'",
        "s3://bucket/",
    ),
    (
        "profiler_output",
        lambda t: lambda: sdx.ProfilerConfig(s3_output_path="http://host/x"),
        ConfigValueError,
        "ProfilerConfig.s3_output_path",
        "'http://host/x'",
        "s3://bucket/",
    ),
    (
        "rule_output",
        lambda t: lambda: sdx.Rule.sagemaker(rc.overfit(), s3_output_path="s3:rules"),
        ConfigValueError,
        "s3_output_path",
        "'s3:rules'",
        "s3://bucket/",
    ),
    (
        "file_uri_without_path",
        lambda t: lambda: sdx.DebuggerHookConfig(s3_output_path="file://"),
        ConfigValueError,
        "DebuggerHookConfig.s3_output_path",
        "'file://'",
        "file:// needs a path",
    ),
    (
        "estimator_output_path",
        lambda t: lambda: _est(output_path="s3:/broken"),
        ConfigValueError,
        "'output_path'",
        "'s3:/broken'",
        "s3://bucket/",
    ),
    # --- our Estimator at construction (item 9) ---
    (
        "estimator_instance_count_zero",
        lambda t: lambda: _est(instance_count=0),
        ConfigValueError,
        "'instance_count'",
        "got 0",
        "integer >= 1",
    ),
    (
        "estimator_instance_count_negative",
        lambda t: lambda: _est(instance_count=-2),
        ConfigValueError,
        "'instance_count'",
        "got -2",
        "integer >= 1",
    ),
    (
        "estimator_ml_instance_in_local_session",
        lambda t: lambda: _est(instance_type="ml.m5.xlarge"),
        ConfigValueError,
        "'instance_type'",
        "'ml.m5.xlarge'",
        "'local' or 'local_gpu'",
    ),
    (
        "estimator_duplicate_rule_names",
        lambda t: lambda: _est(rules=[sdx.Rule.sagemaker(rc.overfit()), sdx.Rule.sagemaker(rc.overfit())]),
        ConfigValueError,
        "rules[1].name",
        "'Overfit'",
        "unique rule names",
    ),
    # --- existing config cases ---
    (
        "collection_name_empty",
        lambda t: lambda: sdx.CollectionConfig(""),
        ConfigValueError,
        "CollectionConfig.name",
        "''",
        "non-empty string",
    ),
    (
        "hook_param_not_str",
        lambda t: lambda: sdx.DebuggerHookConfig(hook_parameters={"save_interval": 100}),
        ConfigTypeError,
        "hook_parameters['save_interval']",
        "100",
        "a string",
    ),
    (
        "hook_params_too_many",
        lambda t: lambda: sdx.DebuggerHookConfig(hook_parameters={f"k{i}": "v" for i in range(21)}),
        ConfigValueError,
        "hook_parameters",
        "21 entries",
        "at most 20",
    ),
    (
        "profiler_interval_negative",
        lambda t: lambda: sdx.ProfilerConfig(system_monitor_interval_millis=-500),
        ConfigValueError,
        "system_monitor_interval_millis",
        "-500",
        ">= 1",
    ),
    (
        "disable_profiler_not_bool",
        lambda t: lambda: sdx.ProfilerConfig(disable_profiler="yes"),
        ConfigTypeError,
        "disable_profiler",
        "'yes'",
        "a bool",
    ),
    (
        "rule_volume_negative",
        lambda t: lambda: sdx.Rule.custom("R", "img", "ml.m5.xlarge", -1),
        ConfigValueError,
        "volume_size_in_gb",
        "-1",
        ">= 0",
    ),
    (
        "unknown_builtin_rule",
        lambda t: lambda: sdx.Rule.sagemaker({"DebugRuleConfiguration": {"RuleConfigurationName": "NoSuchRule"}}),
        ConfigValueError,
        "RuleConfigurationName",
        "'NoSuchRule'",
        "one of",
    ),
    (
        "python_profiler_name",
        lambda t: lambda: sdx.PythonProfilingConfig(python_profiler="perf"),
        ConfigValueError,
        "python_profiler",
        "'perf'",
        "PythonProfiler.CPROFILE",
    ),
    # --- requests as SDK estimators send them, refused by the local client (items 6 and 9) ---
    (
        "rule_param_unknown_did_you_mean",
        lambda t: _send(_request(DebugRuleConfigurations=[_builtin({"num_step": "3"})])),
        LocalJobInputError,
        "RuleParameters['num_step']",
        "'3'",
        "did you mean 'num_steps'",
    ),
    (
        "rule_param_wrong_kind",
        lambda t: _send(_request(DebugRuleConfigurations=[_builtin({"num_steps": "three"})])),
        LocalJobInputError,
        "RuleParameters['num_steps']",
        "'three'",
        "an integer",
    ),
    (
        "rule_param_not_allowed_value",
        lambda t: _send(_request(DebugRuleConfigurations=[_builtin({"mode": "TRAINING"})])),
        LocalJobInputError,
        "RuleParameters['mode']",
        "'TRAINING'",
        "one of ['EVAL', 'TRAIN', 'GLOBAL']",
    ),
    (
        "rule_param_not_a_number",
        lambda t: _send(_request(DebugRuleConfigurations=[_builtin({"diff_percent": "lots"})])),
        LocalJobInputError,
        "RuleParameters['diff_percent']",
        "'lots'",
        "a number",
    ),
    (
        "custom_rule_source_missing",
        lambda t: _send(_request(DebugRuleConfigurations=[_custom(t, None)])),
        LocalJobInputError,
        "RuleParameters['source_s3_uri']",
        "my_rule.py",
        "existing Python file",
    ),
    (
        "custom_rule_syntax_error",
        lambda t: _send(_request(DebugRuleConfigurations=[_custom(t, "class MyRule(object)\n    pass\n")])),
        LocalJobInputError,
        "my_rule.py, line 1",
        "SyntaxError",
        "expected ':'",
    ),
    (
        "custom_rule_class_missing",
        lambda t: _send(_request(DebugRuleConfigurations=[_custom(t, _RULE_SRC, cls="Other")])),
        LocalJobInputError,
        "rule_to_invoke",
        "'Other'",
        "classes there: ['MyRule']",
    ),
    (
        "custom_rule_unknown_param",
        lambda t: _send(_request(DebugRuleConfigurations=[_custom(t, _RULE_SRC, {"treshold": "2"})])),
        LocalJobInputError,
        "RuleParameters['treshold']",
        "'2'",
        "did you mean 'threshold'",
    ),
    (
        "request_instance_count_zero",
        lambda t: _send(_request(ResourceConfig={"InstanceType": "local", "InstanceCount": 0, "VolumeSizeInGB": 1})),
        LocalJobInputError,
        "'instance_count'",
        "got 0",
        "integer >= 1",
    ),
    (
        "request_ml_instance_type",
        lambda t: _send(
            _request(ResourceConfig={"InstanceType": "ml.p3.2xlarge", "InstanceCount": 1, "VolumeSizeInGB": 1})
        ),
        LocalJobInputError,
        "'instance_type'",
        "'ml.p3.2xlarge'",
        "local mode",
    ),
    (
        "request_duplicate_rule_names",
        lambda t: _send(
            _request(
                DebugRuleConfigurations=[_builtin({}, "Same")],
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
        lambda t: _send(_request(DebugHookConfig={"S3OutputPath": "out", "HookParameters": {"save_interval": "ten"}})),
        LocalJobInputError,
        "HookParameters['save_interval']",
        "'ten'",
        "integer >= 1",
    ),
    (
        "request_collection_save_interval",
        lambda t: _send(
            _request(
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
        lambda t: _send(_request(DebugHookConfig={"S3OutputPath": "s3:/broken"})),
        LocalJobInputError,
        "DebugHookConfig.S3OutputPath",
        "'s3:/broken'",
        "s3://bucket/",
    ),
    (
        "request_output_other_scheme",
        lambda t: _send(_request(OutputDataConfig={"S3OutputPath": "gs://b/out"})),
        LocalJobInputError,
        "OutputDataConfig.S3OutputPath",
        "'gs://b/out'",
        "s3://bucket/",
    ),
    (
        "request_tensorboard_no_bucket",
        lambda t: _send(_request(TensorBoardOutputConfig={"S3OutputPath": "s3://"})),
        LocalJobInputError,
        "TensorBoardOutputConfig.S3OutputPath",
        "'s3://'",
        "bucket name",
    ),
]

# Rows run without AWS credentials: an s3:// address must fail before training.
NO_CREDENTIAL_ROWS: list[tuple[str, Make, type[Exception], str, str, str]] = [
    (
        "s3_output_without_credentials",
        lambda t: _send(_request(OutputDataConfig={"S3OutputPath": "s3://bucket/out"})),
        LocalJobInputError,
        "OutputDataConfig.S3OutputPath",
        "'s3://bucket/out'",
        "AWS credentials",
    ),
    (
        "s3_hook_without_credentials",
        lambda t: _send(_request(DebugHookConfig={"S3OutputPath": "s3://bucket/dbg"})),
        LocalJobInputError,
        "DebugHookConfig.S3OutputPath",
        "'s3://bucket/dbg'",
        "AWS credentials",
    ),
    (
        "s3_channel_without_credentials",
        lambda t: _send(
            _request(
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


def _no_job_started() -> None:
    from sagemaker_debugger_ext.local import LocalTrainingClient

    assert LocalTrainingClient().list_training_jobs()["TrainingJobSummaries"] == []


def _check_row(make: Make, error: type[Exception], field: str, value: str, allowed: str, tmp: Path) -> None:
    thunk = make(tmp)
    with pytest.raises(error) as info:
        thunk()
    message = str(info.value)
    assert isinstance(info.value, DebuggerExtError) and isinstance(info.value, (ValueError, TypeError))
    assert field in message, message
    assert value in message, message
    assert allowed in message, message
    _no_job_started()


@pytest.mark.parametrize(("case", "make", "error", "field", "value", "allowed"), ROWS, ids=[r[0] for r in ROWS])
def test_bad_input(
    case: str,
    make: Make,
    error: type[Exception],
    field: str,
    value: str,
    allowed: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The row's error names the field, the value and what is allowed; no job exists."""
    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    monkeypatch.chdir(tmp_path)
    _check_row(make, error, field, value, allowed, tmp_path)


@pytest.mark.parametrize(
    ("case", "make", "error", "field", "value", "allowed"), NO_CREDENTIAL_ROWS, ids=[r[0] for r in NO_CREDENTIAL_ROWS]
)
def test_s3_without_credentials_fails_before_training(
    case: str,
    make: Make,
    error: type[Exception],
    field: str,
    value: str,
    allowed: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No usable credentials: an s3:// output or channel is refused before the job starts."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SECURITY_TOKEN", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.chdir(tmp_path)
    _check_row(make, error, field, value, allowed, tmp_path)


def test_table_has_at_least_40_rows() -> None:
    """Acceptance: at least 40 bad inputs."""
    assert len(ROWS) + len(NO_CREDENTIAL_ROWS) >= 40


def test_one_error_names_every_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Several problems in one request come back together in one error."""
    monkeypatch.chdir(tmp_path)
    request = _request(
        ResourceConfig={"InstanceType": "local", "InstanceCount": 0, "VolumeSizeInGB": 1},
        DebugRuleConfigurations=[_builtin({"num_step": "3", "mode": "TRAINING"}), _custom(tmp_path, "class MyRule(\n")],
        DebugHookConfig={"S3OutputPath": "s3:/x", "HookParameters": {"save_interval": "0"}},
    )
    with pytest.raises(LocalJobInputError) as info:
        _send(request)()
    fields = [field for field, _ in info.value.problems]  # type: ignore[attr-defined]
    assert len(fields) == 6, info.value
    assert "5 problem" not in str(info.value) and "6 problem(s)" in str(info.value)
    _no_job_started()


def test_unknown_hook_keys_warn_listing_known_keys() -> None:
    """A misspelt hook or collection key is a warning naming the known keys (the hook ignores it)."""
    with pytest.warns(
        UserWarning, match=r"unknown key 'save_intervall' \(did you mean 'save_interval'\?\).*known keys: .*save_steps"
    ):
        sdx.DebuggerHookConfig(hook_parameters={"save_intervall": "5"})
    with pytest.warns(
        UserWarning, match=r"CollectionConfig\('w'\).parameters: unknown key 'include_regx'.*include_regex"
    ):
        sdx.CollectionConfig("w", {"include_regx": "a"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sdx.DebuggerHookConfig(hook_parameters={"save_interval": "5", "eval.save_steps": "1,2"})


def test_hook_off_with_rules_warns_rules_have_no_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """debugger_hook_config=False with Debugger rules: a warning that the rules will have no data."""
    from sagemaker_debugger_ext.local import LocalTrainingClient

    monkeypatch.chdir(tmp_path)
    request = _request(DebugRuleConfigurations=[_builtin({})])
    del request["DebugHookConfig"]
    client = LocalTrainingClient(settings={"StartMonitor": False}, region="us-west-2")
    # A second problem (InstanceCount 0) stops the job before it starts; the warning comes first.
    with (
        pytest.warns(UserWarning, match=r"Debugger rules \['LossNotDecreasing'\] will have no data"),
        pytest.raises(LocalJobInputError),
    ):
        client.create_training_job(**{**request, "ResourceConfig": {"InstanceType": "local", "InstanceCount": 0}})
    _no_job_started()


def test_cli_run_rejects_malformed_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`sagemaker-debugger-ext run SCRIPT --output s3:/broken` fails before starting a job."""
    from sagemaker_debugger_ext.cli import main

    monkeypatch.chdir(tmp_path)
    code = main(["run", str(SCRIPTS / "train_steps.py"), "--output", "s3:/broken"])
    captured = capsys.readouterr()
    assert code != 0
    assert "--output" in captured.err and "'s3:/broken'" in captured.err and "s3://bucket/" in captured.err
    _no_job_started()
