"""Bad inputs to the config objects and our Estimator, found at construction: each row asserts
the error type, that the message names the field, the value and what is allowed, and that no
job was created. Requests as SDK estimators send them: ``test_local_bad_requests.py``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from bad_input_helpers import (
    SCRIPTS,
    Row,
    check_row,
    est,
    no_job_started,
    rc,
    rows_parametrized,
)

import sagemaker_debugger_ext as sdx
from sagemaker_debugger_ext._exceptions import ConfigTypeError, ConfigValueError

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ROWS: list[Row] = [
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
        lambda t: lambda: est(output_path="s3:/broken"),
        ConfigValueError,
        "'output_path'",
        "'s3:/broken'",
        "s3://bucket/",
    ),
    # --- our Estimator at construction (item 9) ---
    (
        "estimator_instance_count_zero",
        lambda t: lambda: est(instance_count=0),
        ConfigValueError,
        "'instance_count'",
        "got 0",
        "integer >= 1",
    ),
    (
        "estimator_instance_count_negative",
        lambda t: lambda: est(instance_count=-2),
        ConfigValueError,
        "'instance_count'",
        "got -2",
        "integer >= 1",
    ),
    (
        "estimator_ml_instance_in_local_session",
        lambda t: lambda: est(instance_type="ml.m5.xlarge"),
        ConfigValueError,
        "'instance_type'",
        "'ml.m5.xlarge'",
        "'local' or 'local_gpu'",
    ),
    (
        "estimator_duplicate_rule_names",
        lambda t: lambda: est(rules=[sdx.Rule.sagemaker(rc.overfit()), sdx.Rule.sagemaker(rc.overfit())]),
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
]


@rows_parametrized(ROWS)
def test_bad_input(row: Row, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The row's error names the field, the value and what is allowed; no job exists."""
    check_row(row, tmp_path, monkeypatch)


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
    no_job_started()


def test_table_has_at_least_25_rows() -> None:
    """Acceptance: at least 40 bad inputs, with test_local_bad_requests.py's (at least 15)."""
    assert len(ROWS) >= 25
