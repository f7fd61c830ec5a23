"""The census notebook's built-in-algorithm XGBoost job, end to end in local mode.

A census-like binary task (synthetic CSV channels, label first, no header), the SageMaker
XGBoost algorithm image with no entry point, the notebook's Debugger rules, then the trial
analysis the notebook does (``average_shap/f1``, ``full_shap/f0``, feature importance, trees).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

ROLE = "arn:aws:iam::123456789012:role/local"
FEATURES = 6
HPS = {"max_depth": "5", "eta": "0.2", "gamma": "4", "min_child_weight": "6", "subsample": "0.7", "silent": "0",
       "objective": "binary:logistic", "num_round": "12"}  # fmt: skip
COLLECTIONS = ("metrics", "feature_importance", "full_shap", "average_shap", "trees")
FINAL = {"NoIssuesFound", "IssuesFound"}


@pytest.fixture(autouse=True)
def _quiet_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")


def _census_like(folder: Path) -> dict[str, Path]:
    """Train/validation CSVs: label (income > 50K) first, then numeric features, no header."""
    rng = np.random.default_rng(7)
    out = {}
    for name, rows in (("train", 400), ("validation", 120)):
        x = rng.normal(size=(rows, FEATURES))
        margin = 1.5 * x[:, 0] + x[:, 1] - 0.5 * x[:, 2] + rng.normal(size=rows) * 0.5
        table = np.column_stack([(margin > 0.8).astype(int), x])
        path = folder / f"{name}.csv"
        np.savetxt(path, table, delimiter=",", fmt="%.5f")
        out[name] = path
    return out


def _rules(module: Any) -> list[Any]:
    rule, configs = module.Rule, module.rule_configs
    return [
        rule.sagemaker(
            configs.loss_not_decreasing(), rule_parameters={"collection_names": "metrics", "num_steps": "4"}
        ),
        rule.sagemaker(configs.overtraining()),
        rule.sagemaker(configs.overfit()),
        rule.sagemaker(configs.tree_depth()),
        rule.sagemaker(configs.class_imbalance()),
        rule.sagemaker(configs.feature_importance_overweight()),
        rule.sagemaker(configs.create_xgboost_report()),
    ]


def _hook_config(module: Any) -> Any:
    configs = [module.CollectionConfig(name=n, parameters={"save_interval": "2"}) for n in COLLECTIONS]
    return module.DebuggerHookConfig(collection_configs=configs)


def _check_job(estimator: Any, data: dict[str, Path], output: Path) -> None:
    import tarfile

    from sagemaker_debugger_ext.trials import create_trial

    job = estimator.latest_training_job
    assert job.describe()["TrainingJobStatus"] == "Completed"
    summary = job.rule_job_summary()
    statuses = {s["RuleConfigurationName"]: s["RuleEvaluationStatus"] for s in summary}
    assert set(statuses) == {"LossNotDecreasing", "Overtraining", "Overfit", "TreeDepth", "ClassImbalance",
                             "FeatureImportanceOverweight", "CreateXgboostReport"}  # fmt: skip
    assert set(statuses.values()) <= FINAL, summary
    trial = create_trial(estimator.latest_job_debugger_artifacts_path())
    names = trial.tensor_names()
    assert {f"average_shap/f{i}" for i in range(FEATURES)} <= set(names)
    assert {f"full_shap/f{i}" for i in range(FEATURES)} <= set(names)
    assert {"train-logloss", "validation-logloss", "trees/Feature", "trees/Node"} <= set(names)
    assert any(n.startswith("feature_importance/cover/") for n in names)
    assert trial.tensor("average_shap/f1").steps() == list(range(0, 12, 2))
    shap_values = trial.tensor("full_shap/f0").value(trial.last_complete_step)
    rows = len(data["train"].read_text().splitlines())
    assert shap_values.shape == (rows, FEATURES + 1)
    full_10 = trial.tensor("full_shap/f0").value(10)
    averages = [float(np.asarray(trial.tensor(f"average_shap/f{i}").value(10)).reshape(-1)[0]) for i in range(FEATURES)]
    np.testing.assert_allclose(averages, full_10[:, :FEATURES].mean(axis=0), rtol=1e-4, atol=1e-6)
    # The schedule of feature_importance and trees depends on which rule's collection config wins:
    # the SDK estimator collects them in a set (order varies between runs), so use the last step
    # each was saved at. Importances exist for the features the trees use so far (as smdebug's
    # get_score()), and each saved step's weights sum to 1.
    weights = trial.tensor_names(regex="^feature_importance/weight/")
    last = max(step for n in weights for step in trial.tensor(n).steps())
    total = sum(
        float(np.asarray(trial.tensor(n).value(last)).reshape(-1)[0])
        for n in weights
        if last in trial.tensor(n).steps()
    )
    assert total == pytest.approx(1.0)
    tree_step = trial.tensor("trees/Tree").steps()[-1]
    assert set(trial.tensor("trees/Tree").value(tree_step).tolist()) == {tree_step}
    model = Path(job.describe()["ModelArtifacts"]["S3ModelArtifacts"].removeprefix("file://"))
    with tarfile.open(model) as tar:
        assert "xgboost-model" in tar.getnames()
    report = output / job.name / "rule-output" / "CreateXgboostReport" / "xgboost_report.html"
    assert report.stat().st_size > 0


def test_census_builtin_algorithm_with_our_estimator(tmp_path: Path) -> None:
    """Our Estimator, the algorithm image, the notebook's rules: Completed, final statuses, SHAP readable."""
    import sagemaker
    from sagemaker.inputs import TrainingInput

    import sagemaker_debugger_ext as ext
    from sagemaker_debugger_ext.local import LocalSession

    data = _census_like(tmp_path)
    estimator = ext.Estimator(
        image_uri=sagemaker.image_uris.retrieve("xgboost", "us-east-1", "0.90-2"), role=ROLE, instance_count=1,
        instance_type="local", hyperparameters=HPS, output_path=(tmp_path / "out").as_uri(), max_run=1800,
        sagemaker_session=LocalSession(settings={"StartMonitor": False}),
        debugger_hook_config=_hook_config(ext), rules=_rules(ext),
    )  # fmt: skip
    estimator.fit({c: TrainingInput(p.as_uri(), content_type="csv") for c, p in data.items()}, wait=True, logs=False)
    _check_job(estimator, data, tmp_path / "out")


@pytest.mark.parametrize("configs", ["sagemaker.debugger", "sagemaker_debugger_ext"])
def test_census_builtin_algorithm_with_sdk_estimator(tmp_path: Path, configs: str) -> None:
    """sagemaker.estimator.Estimator (the notebook's class) with our LocalSession, the SDK's or our config objects."""
    import importlib

    import sagemaker
    from sagemaker.estimator import Estimator
    from sagemaker.inputs import TrainingInput

    from sagemaker_debugger_ext.local import LocalSession

    data = _census_like(tmp_path)
    estimator = Estimator(
        image_uri=sagemaker.image_uris.retrieve("xgboost", "us-east-1", "1.2-1"), role=ROLE, instance_count=1,
        instance_type="local", hyperparameters={k: v for k, v in HPS.items() if k != "silent"},
        output_path=(tmp_path / "out").as_uri(), max_run=1800,
        sagemaker_session=LocalSession(settings={"StartMonitor": False}),
        debugger_hook_config=_hook_config(importlib.import_module(configs)),
        rules=_rules(importlib.import_module(configs)),
    )  # fmt: skip
    estimator.fit({c: TrainingInput(p.as_uri(), content_type="text/csv") for c, p in data.items()}, wait=True,
                  logs=False)  # fmt: skip
    _check_job(estimator, data, tmp_path / "out")
