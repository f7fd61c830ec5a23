"""Differential tests: our Estimator's CreateTrainingJob request equals SDK v2's (reference §2.3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from estimator_harness import build_request, normalise

import sagemaker_debugger_ext as ours


def _sdk_ns() -> Any:
    import sagemaker.debugger as d

    return d


Scenario = Callable[[Any, Path], dict[str, Any]]

X_OUT = "s3://my-bucket/explicit-output"


def _rc(d: Any) -> Any:
    return d.rule_configs


SCENARIOS: dict[str, tuple[Scenario, str]] = {
    # name: (kwargs factory(d, src), region)
    "g5_defaults": (lambda d, src: {}, "us-west-2"),
    "a_builtin_rule": (lambda d, src: {"rules": [d.Rule.sagemaker(_rc(d).vanishing_gradient())]}, "us-west-2"),
    "b_two_builtin_rules_customised": (
        lambda d, src: {
            "rules": [
                d.Rule.sagemaker(
                    _rc(d).loss_not_decreasing(),
                    name="MyLoss",
                    container_local_output_path="/opt/ml/processing/out",
                    s3_output_path="s3://rules/out",
                    rule_parameters={"num_steps": "20"},
                    collections_to_save=[d.CollectionConfig("losses", {"save_interval": "10"})],
                ),
                d.Rule.sagemaker(_rc(d).weight_update_ratio()),
            ]
        },
        "us-west-2",
    ),
    "builtin_rule_parameters_only": (
        lambda d, src: {"rules": [d.Rule.sagemaker(_rc(d).exploding_tensor(), rule_parameters={"only_nan": "True"})]},
        "us-west-2",
    ),
    "builtin_rule_collections_only": (
        lambda d, src: {
            "rules": [
                d.Rule.sagemaker(
                    _rc(d).all_zero(),
                    collections_to_save=[d.CollectionConfig("weights"), d.CollectionConfig("biases", {})],
                )
            ]
        },
        "us-west-2",
    ),
    "builtin_rule_other_trials": (
        lambda d, src: {
            "rules": [
                d.Rule.sagemaker(
                    _rc(d).similar_across_runs(), other_trials_s3_input_paths=["s3://b/other/debug-output"]
                )
            ]
        },
        "us-west-2",
    ),
    "xgboost_report_rule": (lambda d, src: {"rules": [d.Rule.sagemaker(_rc(d).create_xgboost_report())]}, "us-west-2"),
    "c_custom_rule_local_source": (
        lambda d, src: {
            "rules": [
                d.Rule.custom(
                    name="CustomGradientRule",
                    image_uri="111122223333.dkr.ecr.us-west-2.amazonaws.com/rule:1",
                    instance_type="ml.t3.medium",
                    volume_size_in_gb=30,
                    source=str(src),
                    rule_to_invoke="CustomGradientRule",
                    other_trials_s3_input_paths=["s3://b/t1", "s3://b/t2"],
                    rule_parameters={"threshold": "20.0"},
                    collections_to_save=[d.CollectionConfig("gradients", {"save_interval": "5"})],
                )
            ]
        },
        "us-west-2",
    ),
    "c2_custom_rule_s3_source": (
        lambda d, src: {
            "rules": [
                d.Rule.custom(
                    "S3Rule",
                    "111122223333.dkr.ecr.us-west-2.amazonaws.com/rule:1",
                    "ml.m5.xlarge",
                    10,
                    source="s3://code/rule.py",
                    rule_to_invoke="S3Rule",
                )
            ]
        },
        "us-west-2",
    ),
    "custom_rule_no_source": (
        lambda d, src: {
            "rules": [
                d.Rule.custom("ImageRule", "111122223333.dkr.ecr.us-west-2.amazonaws.com/rule:1", "ml.m5.xlarge", 10)
            ]
        },
        "us-west-2",
    ),
    "i_action_list": (
        lambda d, src: {
            "rules": [
                d.Rule.sagemaker(
                    _rc(d).loss_not_decreasing(),
                    actions=_rc(d).ActionList(
                        _rc(d).StopTraining(), _rc(d).Email("abc@abc.com"), _rc(d).SMS("+1234567890")
                    ),
                )
            ]
        },
        "us-west-2",
    ),
    "i2_bare_stop_training": (
        lambda d, src: {"rules": [d.Rule.sagemaker(_rc(d).overfit(), actions=_rc(d).StopTraining())]},
        "us-west-2",
    ),
    "stop_training_explicit_prefix": (
        lambda d, src: {
            "rules": [
                d.Rule.sagemaker(_rc(d).overtraining(), actions=_rc(d).ActionList(_rc(d).StopTraining("my-prefix")))
            ]
        },
        "us-west-2",
    ),
    "d_explicit_hook_config": (
        lambda d, src: {
            "debugger_hook_config": d.DebuggerHookConfig(
                s3_output_path="s3://hook/out",
                container_local_output_path="/opt/ml/output/tensors",
                hook_parameters={"save_interval": "100", "include_workers": "all"},
                collection_configs=[
                    d.CollectionConfig("weights", {"save_interval": "50"}),
                    d.CollectionConfig("losses"),
                ],
            ),
            "rules": [d.Rule.sagemaker(_rc(d).vanishing_gradient())],
        },
        "us-west-2",
    ),
    "d2_hook_without_s3_union": (
        lambda d, src: {
            "debugger_hook_config": d.DebuggerHookConfig(
                collection_configs=[
                    d.CollectionConfig("weights", {"save_interval": "10"}),
                    d.CollectionConfig("gradients", {"save_interval": "500"}),
                ]
            ),
            "rules": [d.Rule.sagemaker(_rc(d).weight_update_ratio()), d.Rule.sagemaker(_rc(d).vanishing_gradient())],
        },
        "us-west-2",
    ),
    "hook_only_empty_collections": (
        lambda d, src: {"debugger_hook_config": d.DebuggerHookConfig(collection_configs=[])},
        "us-west-2",
    ),
    "g4_hook_true": (lambda d, src: {"debugger_hook_config": True}, "us-west-2"),
    "g_hook_false": (lambda d, src: {"debugger_hook_config": False}, "us-west-2"),
    "g2_hook_false_with_rule": (
        lambda d, src: {"debugger_hook_config": False, "rules": [d.Rule.sagemaker(_rc(d).vanishing_gradient())]},
        "us-west-2",
    ),
    "e_tensorboard": (
        lambda d, src: {
            "tensorboard_output_config": d.TensorBoardOutputConfig(
                "s3://tb/out", container_local_output_path="/opt/ml/output/tensorboard"
            )
        },
        "us-west-2",
    ),
    "tensorboard_with_rule": (
        lambda d, src: {
            "tensorboard_output_config": d.TensorBoardOutputConfig("s3://tb/out"),
            "rules": [d.Rule.sagemaker(_rc(d).dead_relu())],
        },
        "us-west-2",
    ),
    "f_profiler_interval": (
        lambda d, src: {"profiler_config": d.ProfilerConfig(system_monitor_interval_millis=500)},
        "us-west-2",
    ),
    "f_profiler_interval_and_report": (
        lambda d, src: {
            "profiler_config": d.ProfilerConfig(system_monitor_interval_millis=500),
            "rules": [d.ProfilerRule.sagemaker(_rc(d).ProfilerReport())],
        },
        "us-west-2",
    ),
    "f2_profiler_rules_with_params": (
        lambda d, src: {
            "rules": [
                d.ProfilerRule.sagemaker(
                    _rc(d).CPUBottleneck(threshold=90), name="MyCPU", instance_type="ml.m5.xlarge", volume_size_in_gb=50
                ),
                d.ProfilerRule.sagemaker(_rc(d).StepOutlier()),
                d.ProfilerRule.sagemaker(_rc(d).ProfilerReport(CPUBottleneck_threshold=90)),
            ]
        },
        "us-west-2",
    ),
    "f3_framework_profile_default": (
        lambda d, src: {"profiler_config": d.ProfilerConfig(framework_profile_params=d.FrameworkProfile())},
        "us-west-2",
    ),
    "framework_profile_custom_configs": (
        lambda d, src: {
            "profiler_config": d.ProfilerConfig(
                s3_output_path="s3://prof/out",
                framework_profile_params=d.FrameworkProfile(
                    detailed_profiling_config=d.DetailedProfilingConfig(start_step=10, num_steps=2),
                    dataloader_profiling_config=d.DataloaderProfilingConfig(
                        start_unix_time=1700000000, duration=30, metrics_regex="Data.*"
                    ),
                    python_profiling_config=d.PythonProfilingConfig(python_profiler=d.PythonProfiler.PYINSTRUMENT),
                ),
            )
        },
        "us-west-2",
    ),
    "framework_profile_step_range": (
        lambda d, src: {
            "profiler_config": d.ProfilerConfig(
                framework_profile_params=d.FrameworkProfile(start_step=3, num_steps=2, file_max_size=100)
            )
        },
        "us-west-2",
    ),
    "f4_profiler_v2_params": (
        lambda d, src: {"profiler_config": d.ProfilerConfig(profile_params=d.Profiler(cpu_profiling_duration=1800))},
        "us-west-2",
    ),
    "profiler_v2_with_user_profiler_rule": (
        lambda d, src: {
            "profiler_config": d.ProfilerConfig(profile_params=d.Profiler()),
            "rules": [d.ProfilerRule.sagemaker(_rc(d).LowGPUUtilization())],
        },
        "us-west-2",
    ),
    "profiler_v2_with_rules_empty": (
        lambda d, src: {"profiler_config": d.ProfilerConfig(profile_params=d.Profiler()), "rules": []},
        "us-west-2",
    ),
    "g3_disable_profiler": (lambda d, src: {"disable_profiler": True}, "us-west-2"),
    "profiler_config_disabled_flag_false": (
        lambda d, src: {"profiler_config": d.ProfilerConfig(disable_profiler=True)},
        "us-west-2",
    ),
    "disable_profiler_both": (
        lambda d, src: {
            "disable_profiler": True,
            "profiler_config": d.ProfilerConfig(s3_output_path="s3://p/x", disable_profiler=True),
        },
        "us-west-2",
    ),
    "profiler_explicit_s3": (
        lambda d, src: {"profiler_config": d.ProfilerConfig(s3_output_path="s3://prof/out")},
        "us-west-2",
    ),
    "custom_profiler_rule": (
        lambda d, src: {
            "rules": [
                d.ProfilerRule.custom(
                    "MyProfRule",
                    "111122223333.dkr.ecr.us-west-2.amazonaws.com/prof:1",
                    "ml.m5.xlarge",
                    20,
                    source="s3://code/prof.py",
                    rule_to_invoke="MyProfRule",
                    rule_parameters={"threshold": 5},
                )
            ]
        },
        "us-west-2",
    ),
    "j3_trn_instance": (
        lambda d, src: {"instance_type": "ml.trn1.2xlarge", "rules": [d.Rule.sagemaker(_rc(d).vanishing_gradient())]},
        "us-west-2",
    ),
    "j_unsupported_region_defaults": (lambda d, src: {"output_path": X_OUT}, "ap-southeast-3"),
    "unsupported_region_hook_false": (
        lambda d, src: {"output_path": X_OUT, "debugger_hook_config": False},
        "ap-southeast-3",
    ),
    "g6_rules_empty": (lambda d, src: {"rules": []}, "us-west-2"),
    "explicit_output_path": (
        lambda d, src: {"output_path": X_OUT, "rules": [d.Rule.sagemaker(_rc(d).tensor_variance())]},
        "us-west-2",
    ),
    "china_region_rule": (
        lambda d, src: {"output_path": X_OUT, "rules": [d.Rule.sagemaker(_rc(d).class_imbalance())]},
        "cn-north-1",
    ),
    "govcloud_region_rule": (
        lambda d, src: {"output_path": X_OUT, "rules": [d.Rule.sagemaker(_rc(d).confusion())]},
        "us-gov-west-1",
    ),
}


@pytest.fixture
def rule_source(tmp_path: Path) -> Path:
    """A local custom rule source file."""
    path = tmp_path / "custom_rule.py"
    path.write_text("class CustomGradientRule: pass\n")
    return path


def _ours_ns() -> Any:
    return ours


@pytest.mark.parametrize("name", sorted(SCENARIOS), ids=sorted(SCENARIOS))
def test_request_matches_sdk(name: str, aws: None, rule_source: Path) -> None:
    """The SDK's request, ours with our objects, ours with SDK objects and the SDK's with our objects are equal."""
    import sagemaker.estimator

    factory, region = SCENARIOS[name]
    sdk = normalise(build_request(sagemaker.estimator.Estimator, factory(_sdk_ns(), rule_source), region=region))
    with_ours = normalise(build_request(ours.Estimator, factory(_ours_ns(), rule_source), region=region))
    with_sdk_objects = normalise(build_request(ours.Estimator, factory(_sdk_ns(), rule_source), region=region))
    assert with_ours == sdk
    assert with_sdk_objects == sdk
    sdk_with_ours = normalise(
        build_request(sagemaker.estimator.Estimator, factory(_ours_ns(), rule_source), region=region)
    )
    assert sdk_with_ours == sdk


def test_scenario_table_covers_reference_rows() -> None:
    """At least 30 differential scenarios exist."""
    assert len(SCENARIOS) >= 30
