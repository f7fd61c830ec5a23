"""ModelTrainer.with_debugger: the CreateTrainingJob on the wire carries exactly SDK v2's Debugger fields.

The reference is ``../golden/v2_estimator_debugger_fields.json``, recorded from the real SDK v2
``Estimator`` (``record_v2_golden.py`` says how). Here, under SDK v3, the same configs (ours, and
``sagemaker.core.debugger``'s) go through ``sagemaker_debugger_ext.train.ModelTrainer``; the body
botocore is about to send is captured (``before-send``) and nothing leaves the process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from sagemaker.core.helper.session_helper import Session
from sagemaker.core.shapes import OutputDataConfig
from sagemaker.core.training.configs import Compute
from sagemaker.core.utils.utils import SageMakerClient

import sagemaker_debugger_ext as sdx
from sagemaker_debugger_ext.exceptions import ConfigStateError, ConfigTypeError, ConfigValueError
from sagemaker_debugger_ext.train import ModelTrainer

GOLDEN = json.loads((Path(__file__).parent.parent / "golden" / "v2_estimator_debugger_fields.json").read_text())
INPUTS = GOLDEN["inputs"]


class _Captured(Exception):
    pass


@pytest.fixture(autouse=True)
def _no_role_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAGEMAKER_VALIDATE_ROLE", "false")


def _trainer(**kwargs: Any) -> ModelTrainer:
    session = Session(boto_session=boto3.Session(region_name=INPUTS["region"]), default_bucket="golden-bucket")
    return ModelTrainer(
        training_image=INPUTS["image_uri"],
        role=INPUTS["role"],
        sagemaker_session=session,
        compute=Compute(instance_type=INPUTS["instance_type"], instance_count=1),
        output_data_config=OutputDataConfig(s3_output_path=INPUTS["output_path"]),
        base_job_name="golden",
        **kwargs,
    )


def _wire_body(trainer: ModelTrainer) -> dict[str, Any]:
    """The CreateTrainingJob body ``trainer.train()`` sends, parsed with its key order kept."""
    body: dict[str, bytes] = {}

    def grab(request: Any, **_: Any) -> None:
        body["json"] = request.body
        raise _Captured

    client = SageMakerClient(session=trainer.sagemaker_session.boto_session, region_name=None).get_client("sagemaker")
    client.meta.events.register("before-send.sagemaker.CreateTrainingJob", grab, unique_id="test-capture")
    try:
        with pytest.raises(_Captured):
            trainer.train(wait=False, logs=False)
    finally:
        client.meta.events.unregister("before-send.sagemaker.CreateTrainingJob", unique_id="test-capture")
    return json.loads(body["json"])


def _normalised(fields: dict[str, Any]) -> str:
    """JSON of the Debugger fields, key order kept; CollectionConfigurations sorted (SDK v2 emits a set)."""
    out = json.loads(json.dumps(fields))
    hook = out.get("DebugHookConfig")
    if hook and "CollectionConfigurations" in hook:
        hook["CollectionConfigurations"].sort(key=lambda c: c["CollectionName"])
    return json.dumps(out)


def _debugger_fields(body: dict[str, Any]) -> dict[str, Any]:
    keys = ("DebugHookConfig", "DebugRuleConfigurations", "TensorBoardOutputConfig", "ProfilerConfig",
            "ProfilerRuleConfigurations")  # fmt: skip
    return {key: body[key] for key in keys if key in body}


def _configs(d: Any) -> dict[str, Any]:
    """``with_debugger`` arguments built from ``d``: our package or ``sagemaker.core.debugger`` (the same names)."""
    return {
        "rules": [
            d.Rule.sagemaker(d.rule_configs.vanishing_gradient()),
            d.ProfilerRule.sagemaker(d.rule_configs.ProfilerReport()),
        ],
        "debugger_hook_config": d.DebuggerHookConfig(
            collection_configs=[d.CollectionConfig(name="weights", parameters={"save_interval": "5"})]
        ),
        "profiler_config": d.ProfilerConfig(system_monitor_interval_millis=500),
    }


def _ours() -> dict[str, Any]:
    return _configs(sdx)


def _sdk_core() -> dict[str, Any]:
    from sagemaker.core import debugger as core

    return _configs(core)


@pytest.mark.parametrize("configs", [_ours, _sdk_core], ids=["ours", "sagemaker.core.debugger"])
def test_wire_debugger_fields_equal_sdk_v2_estimator(configs: Any) -> None:
    """Same objects, same Debugger fields as SDK v2's Estimator, in the same key order, DisableProfiler false included."""
    body = _wire_body(_trainer().with_debugger(**configs()))
    ours = _debugger_fields(body)
    assert _normalised(ours) == _normalised(GOLDEN["fields"])
    assert ours["ProfilerConfig"]["DisableProfiler"] is False
    assert list(ours) == list(GOLDEN["fields"])  # no field more, none less


def test_sagemaker_core_alone_would_drop_disable_profiler_false() -> None:
    """The reason the wire is fixed up: sagemaker-core's serialiser drops the falsy DisableProfiler."""
    from sagemaker.core.shapes import ProfilerConfig
    from sagemaker.core.utils.utils import serialize

    assert serialize(ProfilerConfig(s3_output_path="s3://b/o", disable_profiler=False)) == {"S3OutputPath": "s3://b/o"}


def test_request_args_carry_the_debugger_fields() -> None:
    """``_create_training_job_args``: shape kwargs by default, the exact v2 dicts in boto3 (pipeline) form."""
    trainer = _trainer().with_debugger(**_ours())
    boto3_args = trainer._create_training_job_args(boto3=True)
    assert _normalised(_debugger_fields(boto3_args)) == _normalised(GOLDEN["fields"])
    args = trainer._create_training_job_args()
    assert args["profiler_config"]["profiling_interval_in_milliseconds"] == 500
    assert args["debug_rule_configurations"][0]["rule_configuration_name"] == "VanishingGradient"


def test_without_with_debugger_the_request_is_the_sdks() -> None:
    """No with_debugger: ModelTrainer's request, without any Debugger key."""
    body = _wire_body(_trainer())
    assert _debugger_fields(body) == {}


def test_stop_training_action_names_the_job() -> None:
    """An action's default prefix is the job name sent in the same request."""
    rule = sdx.Rule.sagemaker(
        sdx.rule_configs.exploding_tensor(), actions=sdx.rule_configs.ActionList(sdx.rule_configs.StopTraining())
    )
    body = _wire_body(_trainer().with_debugger(rules=[rule]))
    action_json = body["DebugRuleConfigurations"][0]["RuleParameters"]["action_json"]
    assert f'\\"training_job_prefix\\": \\"{body["TrainingJobName"]}\\"' in action_json


def test_bad_arguments_are_refused_by_name() -> None:
    trainer = _trainer()
    with pytest.raises(ConfigTypeError, match="'rules'"):
        trainer.with_debugger(rules="VanishingGradient")
    with pytest.raises(ConfigTypeError, match="'disable_profiler'"):
        trainer.with_debugger(disable_profiler="yes")
    with pytest.raises(ConfigValueError, match="'backend'.*'service'.*got 'cloud'"):
        trainer.with_debugger(backend="cloud")


def test_backend_from_the_v2_estimators_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """No backend argument: the variable the v2 Estimator's debugger_backend reads decides, named in errors."""
    monkeypatch.setenv("SAGEMAKER_DEBUGGER_EXT_DEBUGGER_BACKEND", "Elsewhere")
    with pytest.raises(ConfigValueError, match="'SAGEMAKER_DEBUGGER_EXT_DEBUGGER_BACKEND'.*got 'Elsewhere'"):
        _trainer().with_debugger()
    monkeypatch.setenv("SAGEMAKER_DEBUGGER_EXT_DEBUGGER_BACKEND", "service")
    body = _wire_body(_trainer().with_debugger(**_ours()))
    assert _normalised(_debugger_fields(body)) == _normalised(GOLDEN["fields"])


def test_tensorboard_configured_twice_is_refused() -> None:
    from sagemaker.core.training.configs import TensorBoardOutputConfig

    trainer = _trainer().with_tensorboard_output_config(TensorBoardOutputConfig(s3_output_path="s3://b/tb"))
    trainer.with_debugger(tensorboard_output_config=sdx.TensorBoardOutputConfig(s3_output_path="s3://b/tb2"))
    with pytest.raises(ConfigStateError, match="TensorBoard output is configured twice"):
        trainer._create_training_job_args()


def test_disable_profiler_sends_only_the_flag() -> None:
    body = _wire_body(_trainer().with_debugger(disable_profiler=True))
    assert body["ProfilerConfig"] == {"DisableProfiler": True}
    assert "ProfilerRuleConfigurations" not in body


def test_local_container_mode_is_refused_with_the_way_to_run_locally() -> None:
    """ModelTrainer's Docker local mode drops Debugger: with_debugger says to use local_session instead."""
    from sagemaker.train.model_trainer import Mode

    trainer = ModelTrainer(training_image=INPUTS["image_uri"], training_mode=Mode.LOCAL_CONTAINER)
    trainer.with_debugger(rules=[sdx.Rule.sagemaker(sdx.rule_configs.vanishing_gradient())])
    with pytest.raises(ConfigStateError, match="LOCAL_CONTAINER mode runs Docker and drops Debugger.*local_session"):
        trainer._create_training_job_args()


def test_pipeline_session_step_arguments_carry_the_v2_fields() -> None:
    """With a PipelineSession the SDK serialises the request itself (no TrainingJob.create): same fields."""
    from sagemaker.core.workflow.pipeline_context import PipelineSession

    session = PipelineSession(boto_session=boto3.Session(region_name=INPUTS["region"]), default_bucket="golden-bucket")
    trainer = ModelTrainer(
        training_image=INPUTS["image_uri"],
        role=INPUTS["role"],
        sagemaker_session=session,
        compute=Compute(instance_type=INPUTS["instance_type"], instance_count=1),
        output_data_config=OutputDataConfig(s3_output_path=INPUTS["output_path"]),
        base_job_name="golden",
    ).with_debugger(**_ours())
    args = trainer._create_training_job_args()
    assert _normalised(_debugger_fields(args)) == _normalised(GOLDEN["fields"])
    assert not any(key.startswith(("debug_", "profiler_")) for key in args)


def test_rules_that_will_see_too_little_are_warned_before_training() -> None:
    """Local mode's before-training warnings, as the v2 Estimator's jobs give them: the rule's collection
    saves every 500 steps (its own default) and the hyperparameters say the job runs 50."""
    from sagemaker_debugger_ext.exceptions import RuleCoverageWarning

    trainer = _trainer(hyperparameters={"steps": 50}).with_debugger(
        rules=[sdx.Rule.sagemaker(sdx.rule_configs.loss_not_decreasing())]
    )
    with pytest.warns(RuleCoverageWarning, match=r"Rule LossNotDecreasing: collection 'losses' saves every 500 steps "
                      r"and the job runs about 50 steps \(steps=50\)"):  # fmt: skip
        _wire_body(trainer)


def test_overfit_without_an_evaluation_phase_in_the_entry_script_is_warned(tmp_path: Path) -> None:
    """The entry script of SourceCode (a local folder) is read for an evaluation phase, as for v2 entry points."""
    from moto import mock_aws
    from sagemaker.core.training.configs import SourceCode

    from sagemaker_debugger_ext.exceptions import RuleCoverageWarning

    (tmp_path / "train.py").write_text("for step in range(10):\n    train(step)\n")
    with mock_aws():
        boto3.client("s3", region_name=INPUTS["region"]).create_bucket(
            Bucket="golden-bucket", CreateBucketConfiguration={"LocationConstraint": INPUTS["region"]}
        )
        trainer = _trainer(source_code=SourceCode(source_dir=str(tmp_path), entry_script="train.py"))
        trainer.with_debugger(rules=[sdx.Rule.sagemaker(sdx.rule_configs.overfit())])
        with pytest.warns(RuleCoverageWarning, match="Rule Overfit compares TRAIN and EVAL losses"):
            _wire_body(trainer)
