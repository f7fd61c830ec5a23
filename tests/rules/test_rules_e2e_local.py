"""Every built-in rule, end to end, in local-mode jobs on real training runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagemaker_debugger_ext import (
    CollectionConfig,
    DebuggerHookConfig,
    Estimator,
    Rule,
    rule_configs,
)

pytestmark = pytest.mark.slow

CASES = Path(__file__).resolve().parents[2] / "benchmarks" / "rule_cases"

TORCH_COLLECTIONS = {
    "weights": None, "gradients": None, "losses": None, "biases": None,
    "relu_output": ".*relu_output", "relu_input": ".*relu_input",
    "input_image": ".*Net_input_0", "input_sequence": ".*embedding0_input_0",
}  # fmt: skip
XGB_COLLECTIONS = {
    "metrics": None,
    "feature_importance": None,
    "trees": None,
    "labels": None,
    "predictions": None,
    "hyperparameters": None,
}


def _estimator(
    tmp_path: Path, script: str, hps: dict[str, str], collections: dict[str, str | None], rules: list[Rule]
) -> Estimator:
    colls = [
        CollectionConfig(name=n, parameters={"save_interval": "1", **({"include_regex": r} if r else {})})
        for n, r in collections.items()
    ]
    return Estimator(
        entry_point=script,
        source_dir=str(CASES),
        image_uri="local-python",
        role="arn:aws:iam::000000000000:role/test",
        instance_count=1,
        instance_type="local",
        hyperparameters=hps,
        output_path=(tmp_path / "out").as_uri(),
        debugger_hook_config=DebuggerHookConfig(hook_parameters={"save_interval": "1"}, collection_configs=colls),
        rules=rules,
    )


def _summary(est: Estimator) -> dict[str, dict[str, str]]:
    return {r["RuleConfigurationName"]: r for r in est.latest_training_job.rule_job_summary()}


def test_pytorch_job_runs_every_deep_learning_rule(tmp_path: Path, smdebug_runs: Path) -> None:
    """A PyTorch job whose ReLUs die at step 6 carries 18 rules: the right ones fire, none errors."""
    rc = rule_configs
    rules = [
        Rule.sagemaker(rc.vanishing_gradient()),
        Rule.sagemaker(rc.exploding_tensor()),
        Rule.sagemaker(rc.weight_update_ratio()),
        Rule.sagemaker(
            rc.all_zero(), rule_parameters={"collection_names": "relu_output"}
        ),  # ReLU outputs, by module class
        Rule.sagemaker(rc.dead_relu()),
        Rule.sagemaker(rc.tensor_variance(), rule_parameters={"collection_names": "weights", "max_threshold": "1e6"}),
        Rule.sagemaker(rc.unchanged_tensor(), rule_parameters={"collection_names": "weights"}),
        Rule.sagemaker(rc.loss_not_decreasing(), rule_parameters={"num_steps": "2"}),
        Rule.sagemaker(rc.overfit()),
        Rule.sagemaker(rc.overtraining()),
        Rule.sagemaker(rc.poor_weight_initialization()),
        Rule.sagemaker(rc.saturated_activation()),
        Rule.sagemaker(rc.stalled_training_rule(), rule_parameters={"threshold": "600"}),
        Rule.sagemaker(rc.class_imbalance()),
        Rule.sagemaker(rc.confusion()),
        Rule.sagemaker(rc.check_input_images(), rule_parameters={"regex": ".*Net_input_0"}),
        Rule.sagemaker(rc.nlp_sequence_ratio()),
        Rule.sagemaker(rc.similar_across_runs(), other_trials_s3_input_paths=[str(smdebug_runs / "sample_run")]),
    ]
    est = _estimator(
        tmp_path,
        "torch_case.py",
        {"scenario": "mlp", "fault": "dead", "onset": "6", "steps": "12"},
        TORCH_COLLECTIONS,
        rules,
    )
    est.fit(wait=True, logs=False)
    summary = _summary(est)
    assert len(summary) == 18
    statuses = {name: s["RuleEvaluationStatus"] for name, s in summary.items()}
    assert statuses["VanishingGradient"] == statuses["DeadRelu"] == statuses["AllZero"] == "IssuesFound", statuses
    assert "at step 6 " in summary["DeadRelu"]["StatusDetails"]
    assert statuses["ExplodingTensor"] == "NoIssuesFound", statuses
    assert not [n for n, s in statuses.items() if s not in ("IssuesFound", "NoIssuesFound")], summary
    job = est.latest_training_job.name
    assert (tmp_path / "out" / job / "rule-output" / "DeadRelu" / "rule-report.md").exists()


def test_xgboost_job_runs_xgboost_rules_and_report(tmp_path: Path) -> None:
    """An XGBoost job whose trees cannot split: TreeDepth fires, the classification rules run, the HTML report is written."""
    rc = rule_configs
    rules = [
        Rule.sagemaker(rc.tree_depth()),
        Rule.sagemaker(rc.feature_importance_overweight()),
        Rule.sagemaker(rc.create_xgboost_report()),
        Rule.sagemaker(rc.class_imbalance(), rule_parameters={"samples": "100"}),
        Rule.sagemaker(rc.confusion(), rule_parameters={"min_diag": "0.5", "max_off_diag": "0.5"}),
    ]
    est = _estimator(tmp_path, "xgb_case.py", {"fault": "shallow", "rounds": "6"}, XGB_COLLECTIONS, rules)
    est.fit(wait=True, logs=False)
    statuses = {name: s["RuleEvaluationStatus"] for name, s in _summary(est).items()}
    assert statuses["TreeDepth"] == "IssuesFound", statuses
    assert statuses["CreateXgboostReport"] == "NoIssuesFound", statuses
    assert set(statuses) == {
        "TreeDepth",
        "FeatureImportanceOverweight",
        "CreateXgboostReport",
        "ClassImbalance",
        "Confusion",
    }
    assert not [n for n, s in statuses.items() if s not in ("IssuesFound", "NoIssuesFound")], statuses
    report = (
        tmp_path / "out" / est.latest_training_job.name / "rule-output" / "CreateXgboostReport" / "xgboost_report.html"
    )
    assert "data:image/png;base64," in report.read_text()
