"""Remote path against moto's SageMaker: create, describe, attach, profiler updates, rule summary."""

from __future__ import annotations

from typing import Any

import pytest
from estimator_harness import ESTIMATOR_ARGS, make_session

import sagemaker_debugger_ext as ours

rc = ours.rule_configs


def _remote_estimator(session: Any, **kwargs: Any) -> ours.Estimator:
    return ours.Estimator(**ESTIMATOR_ARGS, sagemaker_session=session, **kwargs)


def test_fit_creates_job_and_describe_echoes_debugger_keys(aws: None) -> None:
    """fit(wait=False) on ml.m5.xlarge creates the job in moto; DescribeTrainingJob echoes the Debugger keys."""
    session = make_session(forward=True)
    est = _remote_estimator(
        session,
        rules=[ours.Rule.sagemaker(rc.vanishing_gradient()), ours.ProfilerRule.sagemaker(rc.ProfilerReport())],
        tensorboard_output_config=ours.TensorBoardOutputConfig("s3://tb/out"),
        profiler_config=ours.ProfilerConfig(system_monitor_interval_millis=500),
    )
    est.fit(wait=False, job_name="remote-job")
    (sent,) = session.sagemaker_client.created
    described = session.sagemaker_client._client.describe_training_job(TrainingJobName="remote-job")
    # moto models these three Debugger members (not ProfilerConfig / ProfilerRuleConfigurations)
    for key in ("DebugHookConfig", "DebugRuleConfigurations", "TensorBoardOutputConfig"):
        assert described[key] == sent[key], key
    assert sent["ProfilerConfig"] == {
        "S3OutputPath": "s3://sagemaker-us-west-2-123456789012/",
        "DisableProfiler": False,
        "ProfilingIntervalInMilliseconds": 500,
    }
    assert described["DebugHookConfig"]["CollectionConfigurations"][0]["CollectionName"] == "gradients"


def test_attach_restores_debugger_configs(aws: None) -> None:
    """attach() rebuilds hook, TensorBoard and profiler configs, so the path helpers work."""
    session = make_session(forward=True)
    est = _remote_estimator(
        session, tensorboard_output_config=ours.TensorBoardOutputConfig("s3://tb/out"), output_path="s3://out/base/"
    )
    est.fit(wait=False, job_name="attach-job")
    attached = ours.Estimator.attach("attach-job", sagemaker_session=session)
    assert isinstance(attached.debugger_hook_config, ours.DebuggerHookConfig)
    assert attached.latest_job_debugger_artifacts_path() == "s3://out/base/attach-job/debug-output"
    assert attached.latest_job_tensorboard_artifacts_path() == "s3://tb/out/attach-job/tensorboard-output"
    assert attached.latest_job_profiler_artifacts_path() is None  # moto does not echo ProfilerConfig


def test_configs_from_description_restores_profiler() -> None:
    """A DescribeTrainingJob answer with ProfilerConfig restores an equivalent ProfilerConfig."""
    from sagemaker_debugger_ext.estimator._support import configs_from_description

    params = configs_from_description(
        {
            "DebugHookConfig": {"S3OutputPath": "s3://o/", "CollectionConfigurations": [{"CollectionName": "losses"}]},
            "ProfilerConfig": {
                "S3OutputPath": "s3://p/",
                "ProfilingIntervalInMilliseconds": 500,
                "DisableProfiler": False,
            },
        }
    )
    assert params["debugger_hook_config"] == ours.DebuggerHookConfig(
        "s3://o/", collection_configs=[ours.CollectionConfig("losses")]
    )
    assert params["profiler_config"]._to_request_dict() == {
        "S3OutputPath": "s3://p/",
        "DisableProfiler": False,
        "ProfilingIntervalInMilliseconds": 500,
    }
    assert "tensorboard_output_config" not in params
    assert params["disable_profiler"] is False


def _sdk_and_ours(action: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    import sagemaker.estimator

    payloads = []
    for cls in (sagemaker.estimator.Estimator, ours.Estimator):
        session = make_session(forward=True)
        est = cls(**ESTIMATOR_ARGS, sagemaker_session=session, output_path="s3://out/", disable_profiler=True)
        est.fit(wait=False, job_name=f"upd-{cls.__module__.split('.')[0].replace('_', '-')}")
        action(est, cls)
        payloads.append(
            [{k: v for k, v in u.items() if k != "TrainingJobName"} for u in session.sagemaker_client.updated]
        )
    return payloads[0], payloads[1]


@pytest.mark.parametrize(
    "case",
    ["enable_default", "update_interval", "update_rules", "disable_framework_metrics", "update_framework_profile"],
)
def test_profiler_update_payloads_match_sdk(case: str, aws: None) -> None:
    """enable_default_profiling / update_profiler send the SDK's UpdateTrainingJob payloads."""
    import sagemaker.debugger as d

    def act(est: Any, cls: type) -> None:
        ns = d if cls.__module__.startswith("sagemaker.") else ours
        if case == "enable_default":
            est.enable_default_profiling()
        elif case == "update_interval":
            est.update_profiler(system_monitor_interval_millis=1000)
        elif case == "update_rules":
            est.update_profiler(rules=[ns.ProfilerRule.sagemaker(ns.rule_configs.CPUBottleneck(threshold=80))])
        elif case == "disable_framework_metrics":
            est.update_profiler(disable_framework_metrics=True)
        else:
            est.update_profiler(framework_profile_params=ns.FrameworkProfile(start_step=2), s3_output_path="s3://p/")

    sdk, mine = _sdk_and_ours(act)
    assert mine == sdk
    assert len(mine) == 1


def test_update_profiler_errors_match_sdk(aws: None) -> None:
    """update_profiler's error cases raise ValueError as in the SDK."""
    session = make_session(forward=True)
    est = _remote_estimator(session, output_path="s3://out/")
    est.fit(wait=False, job_name="upd-errors")
    with pytest.raises(ValueError, match="Please provide profiler config"):
        est.update_profiler()
    with pytest.raises(ValueError, match="disable_framework_metrics"):
        est.update_profiler(framework_profile_params=ours.FrameworkProfile(), disable_framework_metrics=True)
    with pytest.raises(ValueError, match="ProfilerRule"):
        est.update_profiler(rules=[ours.Rule.sagemaker(rc.vanishing_gradient())])


def test_disable_profiling_payload(aws: None) -> None:
    """disable_profiling sends {'ProfilerConfig': {'DisableProfiler': True}}."""
    session = make_session(forward=True)
    est = _remote_estimator(session, output_path="s3://out/")
    est.fit(wait=False, job_name="disable-prof")
    try:
        est.disable_profiling()
    except ValueError as exc:  # moto may report the profiler as already disabled
        assert "already disabled" in str(exc)
    else:
        assert session.sagemaker_client.updated == [
            {"TrainingJobName": "disable-prof", "ProfilerConfig": {"DisableProfiler": True}}
        ]


def test_rule_job_summary_lists_rule_statuses(aws: None) -> None:
    """rule_job_summary() returns debug then profiler rule statuses from DescribeTrainingJob (a list)."""
    session = make_session(forward=True)
    est = _remote_estimator(session, rules=[ours.Rule.sagemaker(rc.vanishing_gradient())])
    est.fit(wait=False, job_name="summary-job")
    summary = est.rule_job_summary()
    assert isinstance(summary, list)
    described = session.sagemaker_client._client.describe_training_job(TrainingJobName="summary-job")
    assert summary == (described.get("DebugRuleEvaluationStatuses") or []) + (
        described.get("ProfilerRuleEvaluationStatuses") or []
    )
