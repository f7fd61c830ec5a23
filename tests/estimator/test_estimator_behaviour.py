"""Estimator behaviour: training_job_request, deliberate differences from the SDK, validation."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import attrs
import pytest
from estimator_harness import ESTIMATOR_ARGS, IMAGE, ROLE, build_request, make_session, normalise

import sagemaker_debugger_ext as ours
from sagemaker_debugger_ext._exceptions import (
    ConfigValueError,
    RequestValidationError,
    UnsupportedRegionError,
)

rc = ours.rule_configs


def _estimator(session: Any = None, **kwargs: Any) -> ours.Estimator:
    return ours.Estimator(**{**ESTIMATOR_ARGS, "sagemaker_session": session or make_session(), **kwargs})


def test_training_job_request_equals_fit_request_and_changes_nothing(aws: None, tmp_path: Path) -> None:
    """training_job_request() returns fit()'s request, uploads nothing and leaves the estimator as it was."""
    import boto3

    source = tmp_path / "my_rule.py"
    source.write_text("# rule\n")
    custom = ours.Rule.custom(
        "MyRule",
        "111122223333.dkr.ecr.us-west-2.amazonaws.com/r:1",
        "ml.m5.xlarge",
        10,
        source=str(source),
        rule_to_invoke="MyRule",
    )
    est = _estimator(rules=[custom, ours.Rule.sagemaker(rc.vanishing_gradient())], hyperparameters={"lr": "0.1"})
    watched = (
        "output_path",
        "_current_job_name",
        "_hyperparameters",
        "rules",
        "debugger_hook_config",
        "profiler_config",
        "latest_training_job",
        "debugger_rule_configs",
        "profiler_rule_configs",
        "uploaded_code",
        "jobs",
    )
    before = copy.deepcopy({k: getattr(est, k) for k in watched})
    request = est.training_job_request(job_name="req-job")
    after = {k: getattr(est, k) for k in watched}
    assert after == before
    assert request["TrainingJobName"] == "req-job"
    s3 = boto3.client("s3", region_name="us-west-2")
    assert "Contents" not in s3.list_objects_v2(Bucket="sagemaker-us-west-2-123456789012")
    est.fit(wait=False, job_name="req-job")
    (sent,) = est.sagemaker_session.sagemaker_client.created
    assert normalise(sent) == normalise(request)
    keys = s3.list_objects_v2(Bucket="sagemaker-us-west-2-123456789012")["Contents"]
    assert [k["Key"].split("/")[-1] for k in keys] == ["my_rule.py"]


def test_user_objects_are_not_mutated_by_fit(aws: None) -> None:
    """Our config objects (and SDK ones passed in) compare equal before and after fit (the SDK mutates them)."""
    import sagemaker.debugger as d

    hook = ours.DebuggerHookConfig(collection_configs=[ours.CollectionConfig("weights")])
    rule = ours.Rule.sagemaker(rc.loss_not_decreasing(), actions=rc.ActionList(rc.StopTraining()))
    prof = ours.ProfilerConfig(system_monitor_interval_millis=500)
    sdk_hook = d.DebuggerHookConfig(collection_configs=[d.CollectionConfig("biases")])
    before = (copy.deepcopy(hook), copy.deepcopy(rule), copy.deepcopy(prof), copy.deepcopy(vars(sdk_hook)))
    action_params = dict(rule.actions.actions[0].action_parameters)
    _estimator(rules=[rule], debugger_hook_config=hook, profiler_config=prof).fit(wait=False, job_name="m1")
    _estimator(debugger_hook_config=sdk_hook).fit(wait=False, job_name="m2")
    assert (hook, rule, prof) == before[:3]
    assert vars(sdk_hook) == before[3]
    assert rule.actions.actions[0].action_parameters == action_params


def test_collection_order_is_deterministic(aws: None) -> None:
    """CollectionConfigurations: rules' collections in rule order, then the hook's, duplicates dropped."""
    hook = ours.DebuggerHookConfig(
        collection_configs=[ours.CollectionConfig("z"), ours.CollectionConfig("gradients", {"save_interval": "500"})]
    )
    request = build_request(
        ours.Estimator,
        {
            "debugger_hook_config": hook,
            "rules": [ours.Rule.sagemaker(rc.weight_update_ratio()), ours.Rule.sagemaker(rc.vanishing_gradient())],
        },
    )
    names = [c["CollectionName"] for c in request["DebugHookConfig"]["CollectionConfigurations"]]
    assert names == ["weights", "gradients", "z"]


def test_path_helpers_return_none_instead_of_crashing(aws: None) -> None:
    """With no hook, no TensorBoard config and profiling off, the path helpers return None (SDK: AttributeError)."""
    import sagemaker.estimator

    sdk = sagemaker.estimator.Estimator(**ESTIMATOR_ARGS, sagemaker_session=make_session(), debugger_hook_config=False)
    sdk.fit(wait=False, job_name="p-sdk")
    with pytest.raises(AttributeError):
        sdk.latest_job_debugger_artifacts_path()
    est = _estimator(debugger_hook_config=False, disable_profiler=True)
    est.fit(wait=False, job_name="p-ours")
    assert est.latest_job_debugger_artifacts_path() is None
    assert est.latest_job_tensorboard_artifacts_path() is None
    assert est.latest_job_profiler_artifacts_path() is None


def test_path_helpers_after_fit(aws: None) -> None:
    """Paths are <base>/<job>/debug-output, tensorboard-output and profiler-output."""
    est = _estimator(tensorboard_output_config=ours.TensorBoardOutputConfig("s3://tb/base/"))
    est.fit(wait=False, job_name="paths")
    bucket = "s3://sagemaker-us-west-2-123456789012"
    assert est.latest_job_debugger_artifacts_path() == f"{bucket}/paths/debug-output"
    assert est.latest_job_tensorboard_artifacts_path() == "s3://tb/base/paths/tensorboard-output"
    assert est.latest_job_profiler_artifacts_path() == f"{bucket}/paths/profiler-output"


def test_bare_email_action_works(aws: None) -> None:
    """A bare Email action serialises like a bare StopTraining (SDK: AttributeError at fit)."""
    import sagemaker.debugger as d
    import sagemaker.estimator

    with pytest.raises(AttributeError):
        build_request(
            sagemaker.estimator.Estimator,
            {"rules": [d.Rule.sagemaker(d.rule_configs.overfit(), actions=d.rule_configs.Email("abc@abc.com"))]},
        )
    request = build_request(
        ours.Estimator, {"rules": [ours.Rule.sagemaker(rc.overfit(), actions=rc.Email("abc@abc.com"))]}
    )
    params = request["DebugRuleConfigurations"][0]["RuleParameters"]
    assert params["action_json"] == '{\\"endpoint\\": \\"abc@abc.com\\", \\"name\\": \\"email\\"}'


def test_service_model_violation_rejected_before_any_network_call() -> None:
    """An invalid request raises RequestValidationError naming every member path, and nothing is sent."""
    import boto3
    import sagemaker

    sent: list[str] = []
    boto_session = boto3.Session(region_name="us-west-2")
    boto_session.events.register("before-send", lambda request, **_: sent.append(request.url))
    session = sagemaker.Session(boto_session=boto_session)
    est = _estimator(session, output_path="s3://b/out", max_run=0, tags=[{"Key": "bad#key", "Value": "v"}])
    with pytest.raises(RequestValidationError) as info:
        est.fit(wait=False, job_name="bad-request")
    paths = [path for path, _ in info.value.problems]
    assert "StoppingCondition.MaxRuntimeInSeconds" in paths
    assert "Tags[0].Key" in paths
    assert "StoppingCondition.MaxRuntimeInSeconds" in str(info.value)
    assert sent == []


def test_invalid_job_name_rejected_at_training_job_request(aws: None) -> None:
    """An invalid job name is named in the RequestValidationError."""
    with pytest.raises(RequestValidationError, match="TrainingJobName"):
        _estimator(output_path="s3://b/o").training_job_request(job_name="bad_name!")


def test_more_than_20_rules_rejected_at_construction(aws: None) -> None:
    """More than 20 Debugger rules is a ConfigValueError when the estimator is built."""
    rules = [ours.Rule.sagemaker(rc.all_zero(), name=f"R{i}") for i in range(21)]
    with pytest.raises(ConfigValueError, match="at most 20 Debugger rules"):
        _estimator(rules=rules)


def test_unknown_region_rejected_at_training_job_request(aws: None) -> None:
    """A region without the Debugger image is named in an UnsupportedRegionError."""
    est = _estimator(make_session("mars-north-1"), output_path="s3://b/o", rules=[ours.Rule.sagemaker(rc.all_zero())])
    with pytest.raises(UnsupportedRegionError, match="mars-north-1"):
        est.training_job_request(job_name="mars")


def test_non_empty_dict_hook_rejected(aws: None) -> None:
    """debugger_hook_config accepts None/True/False/{} or a config object; other dicts are a TypeError."""
    with pytest.raises(TypeError, match="debugger_hook_config"):
        _estimator(debugger_hook_config={"S3OutputPath": "s3://x"})


def test_local_instance_without_session_uses_our_local_session() -> None:
    """instance_type='local' builds sagemaker_debugger_ext's LocalSession (or says clearly why not)."""
    from sagemaker_debugger_ext._exceptions import LocalModeError

    try:
        est = ours.Estimator(image_uri=IMAGE, role=ROLE, instance_count=1, instance_type="local")
    except LocalModeError as exc:
        assert "sagemaker_debugger_ext.local" in str(exc)
    else:
        assert type(est.sagemaker_session).__module__.startswith("sagemaker_debugger_ext.local")


def test_configs_are_mutable_like_the_sdks_and_validated_on_assignment() -> None:
    """Config objects can be written (SDK estimators do it in fit()); assignments are validated."""
    from sagemaker_debugger_ext._exceptions import ConfigTypeError

    hook = ours.DebuggerHookConfig()
    hook.s3_output_path = "s3://x"
    assert hook._to_request_dict() == {"S3OutputPath": "s3://x"}
    with pytest.raises(ConfigTypeError, match="s3_output_path"):
        hook.s3_output_path = 5  # type: ignore[assignment]
    assert attrs.evolve(hook, s3_output_path="s3://y").s3_output_path == "s3://y"
    assert hook.s3_output_path == "s3://x"


def test_bare_sms_action_works(aws: None) -> None:
    """A bare SMS action is serialised as one action dict."""
    request = build_request(
        ours.Estimator, {"rules": [ours.Rule.sagemaker(rc.overfit(), actions=rc.SMS("+15551234567"))]}
    )
    params = request["DebugRuleConfigurations"][0]["RuleParameters"]
    assert params["action_json"] == '{\\"endpoint\\": \\"+15551234567\\", \\"name\\": \\"sms\\"}'


def test_rule_equality_includes_collections_and_actions() -> None:
    """Rules differing only in collections or actions are unequal (the SDK's __eq__ ignores both)."""
    import sagemaker.debugger as d

    base = rc.vanishing_gradient()
    assert d.Rule.sagemaker(base, collections_to_save=[d.CollectionConfig("x")]) == d.Rule.sagemaker(base)
    assert ours.Rule.sagemaker(base, collections_to_save=[ours.CollectionConfig("x")]) != ours.Rule.sagemaker(base)
    assert ours.Rule.sagemaker(base, actions=rc.StopTraining()) != ours.Rule.sagemaker(base)
    assert ours.Rule.sagemaker(base, actions=rc.StopTraining()) == ours.Rule.sagemaker(base, actions=rc.StopTraining())


def test_collection_config_compares_false_with_other_types() -> None:
    """CollectionConfig == 'x' is False (the SDK raises TypeError)."""
    import sagemaker.debugger as d

    with pytest.raises(TypeError):
        _ = d.CollectionConfig("a") == "a"
    assert (ours.CollectionConfig("a") == "a") is False


def test_estimator_attributes_keep_user_values_after_fit(aws: None) -> None:
    """After fit the estimator's debugger attributes still hold what was passed (the SDK replaces them)."""
    import sagemaker.estimator

    sdk = sagemaker.estimator.Estimator(**ESTIMATOR_ARGS, sagemaker_session=make_session())
    sdk.fit(wait=False, job_name="attrs-sdk")
    assert sdk.debugger_hook_config is not None and sdk.profiler_config is not None
    est = _estimator()
    est.fit(wait=False, job_name="attrs-ours")
    assert est.debugger_hook_config is None and est.profiler_config is None
    assert est.latest_job_debugger_artifacts_path() == "s3://sagemaker-us-west-2-123456789012/attrs-ours/debug-output"


def test_pipeline_session_fit_returns_step_arguments(aws: None) -> None:
    """With a PipelineSession, fit() returns the step arguments (validated), sending nothing."""
    import boto3
    from sagemaker.workflow.pipeline_context import PipelineSession

    session = PipelineSession(boto_session=boto3.Session(region_name="us-west-2"))
    est = _estimator(session, output_path="s3://b/out", rules=[ours.Rule.sagemaker(rc.overfit())])
    from sagemaker.workflow.utilities import execute_job_functions

    step_args = est.fit()
    execute_job_functions(step_args)
    request = session.context.args
    assert request["DebugRuleConfigurations"][0]["RuleConfigurationName"] == "Overfit"
    assert request["DebugHookConfig"] == {"S3OutputPath": "s3://b/out", "CollectionConfigurations": []}


def test_reassigned_sdk_rules_are_converted(aws: None) -> None:
    """sagemaker.debugger rules assigned to estimator.rules after construction are still used."""
    import sagemaker.debugger as d

    est = _estimator()
    est.rules = [d.Rule.sagemaker(d.rule_configs.overfit())]
    request = est.training_job_request(job_name="reassigned")
    assert request["DebugRuleConfigurations"][0]["RuleConfigurationName"] == "Overfit"


def test_training_job_request_with_entry_point_names_the_code_and_uploads_nothing(aws: None, tmp_path: Path) -> None:
    """With an entry point, training_job_request() names the code's S3 tarball without uploading it."""
    import boto3

    script = tmp_path / "train.py"
    script.write_text("print('training')\n")
    est = _estimator(entry_point=str(script), output_path="s3://sagemaker-us-west-2-123456789012/out")
    request = est.training_job_request(job_name="code-job")
    hps = request["HyperParameters"]
    assert (
        hps["sagemaker_submit_directory"] == '"s3://sagemaker-us-west-2-123456789012/code-job/source/sourcedir.tar.gz"'
    )
    assert hps["sagemaker_program"] == '"train.py"'
    s3 = boto3.client("s3", region_name="us-west-2")
    assert all("Contents" not in s3.list_objects_v2(Bucket=b["Name"]) for b in s3.list_buckets()["Buckets"])
