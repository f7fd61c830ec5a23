"""build_debugger_request: pure, deterministic, SDK defaulting rules."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import sagemaker_debugger_ext as sdx
from sagemaker_debugger_ext import request
from sagemaker_debugger_ext._exceptions import ConfigStateError, UnsupportedRegionError

rc = sdx.rule_configs


def _build(**kwargs: Any) -> request.DebuggerRequest:
    base: dict[str, Any] = {
        "rules": None,
        "debugger_hook_config": None,
        "tensorboard_output_config": None,
        "profiler_config": None,
        "disable_profiler": False,
        "output_path": "s3://out/",
        "region": "us-west-2",
        "job_name": "job",
        "detailed_profiler_rule_name": "DetailedProfilerProcessingJobConfig-x",
    }
    base.update(kwargs)
    return request.build_debugger_request(**base)


def test_defaults() -> None:
    """No inputs: default hook with empty collections and the default profiler config."""
    assert _build().to_request() == {
        "DebugHookConfig": {"S3OutputPath": "s3://out/", "CollectionConfigurations": []},
        "ProfilerConfig": {"S3OutputPath": "s3://out/", "DisableProfiler": False},
    }


def test_collection_merge_order_and_dedup() -> None:
    """Rules' collections in order, then the hook's; equal ones dropped, same-name different params kept."""
    hook = sdx.DebuggerHookConfig(
        collection_configs=[
            sdx.CollectionConfig("weights", {"save_interval": "500"}),
            sdx.CollectionConfig("weights", {"save_interval": "1"}),
            sdx.CollectionConfig("a"),
            sdx.CollectionConfig("a", {}),
        ]
    )
    rules = [sdx.Rule.sagemaker(rc.weight_update_ratio()), sdx.Rule.sagemaker(rc.vanishing_gradient())]
    merged = request.merge_collections(rules, hook)
    assert [(c.name, c.parameters) for c in merged] == [
        ("weights", {"save_interval": "500"}),
        ("gradients", {"save_interval": "500"}),
        ("weights", {"save_interval": "1"}),
        ("a", None),
        ("a", {}),
    ]


def test_inputs_not_modified() -> None:
    """The builder never modifies its inputs."""
    hook = sdx.DebuggerHookConfig(collection_configs=[sdx.CollectionConfig("x")])
    rule = sdx.Rule.sagemaker(rc.loss_not_decreasing(), actions=rc.StopTraining())
    prof = sdx.ProfilerConfig(profile_params=sdx.Profiler())
    before = copy.deepcopy((hook, rule, prof))
    _build(rules=[rule], debugger_hook_config=hook, profiler_config=prof)
    assert (hook, rule, prof) == before


def test_detailed_profiler_rule_added_for_profile_params() -> None:
    """profile_params without ProfilerRules adds the detailed-profiler processing rule."""
    out = _build(profiler_config=sdx.ProfilerConfig(profile_params=sdx.Profiler())).to_request()
    (rule,) = out["ProfilerRuleConfigurations"]
    assert rule == {
        "RuleConfigurationName": "DetailedProfilerProcessingJobConfig-x",
        "RuleEvaluatorImage": "895741380848.dkr.ecr.us-west-2.amazonaws.com/detailed-profiler-processing:latest",
        "InstanceType": "ml.m5.4xlarge",
        "VolumeSizeInGB": 128,
        "RuleParameters": {"rule_to_invoke": "DetailedProfilerProcessing"},
    }


def test_unsupported_region_and_conflicts() -> None:
    """Unsupported region drops the hook; a real hook there, or disable_profiler conflicts, raise."""
    out = _build(region="eu-south-2").to_request()
    assert out == {"ProfilerConfig": {"DisableProfiler": True}}
    with pytest.raises(UnsupportedRegionError, match="eu-south-2"):
        _build(region="eu-south-2", debugger_hook_config=sdx.DebuggerHookConfig())
    with pytest.raises(ConfigStateError):
        _build(disable_profiler=True, profiler_config=sdx.ProfilerConfig())


def test_local_source_resolver_is_injected() -> None:
    """A custom rule's local source is replaced by the resolver's URI; s3:// sources are kept."""
    local = sdx.Rule.custom("L", "img", "ml.m5.xlarge", 5, source="rule.py", rule_to_invoke="L")
    remote = sdx.Rule.custom("R", "img", "ml.m5.xlarge", 5, source="s3://b/r.py", rule_to_invoke="R")
    out = _build(rules=[local, remote], source_uri=lambda rule, src: f"s3://up/{rule.name}/{src}").to_request()
    sources = [r["RuleParameters"]["source_s3_uri"] for r in out["DebugRuleConfigurations"]]
    assert sources == ["s3://up/L/rule.py", "s3://b/r.py"]


def test_checkpointing_with_distribution_disables_hook() -> None:
    """SDK frameworks drop the hook for distributed jobs with checkpointing; rules are still sent."""
    common = {"checkpoint_s3_uri": "s3://c/", "checkpoint_local_path": "/opt/ml/checkpoints"}
    assert request.checkpointing_disables_hook(framework_name="pytorch", instance_count=2, **common)
    assert request.checkpointing_disables_hook(
        framework_name="tensorflow", instance_count=1, distribution={"mpi": {}}, **common
    )
    assert not request.checkpointing_disables_hook(framework_name="pytorch", instance_count=1, **common)
    assert not request.checkpointing_disables_hook(framework_name="xgboost", instance_count=2, **common)
    assert not request.checkpointing_disables_hook(
        framework_name="pytorch", instance_count=2, checkpoint_s3_uri=None, checkpoint_local_path="/x"
    )
    out = _build(rules=[sdx.Rule.sagemaker(rc.vanishing_gradient())], hook_disabled_by_checkpointing=True).to_request()
    assert "DebugHookConfig" not in out
    assert out["DebugRuleConfigurations"][0]["RuleConfigurationName"] == "VanishingGradient"
