"""The XGBoost callback on real training: metrics, importances, labels, predictions, trees."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xgboost as xgb
from smdebug_reference import smdebug_json

import sagemaker_debugger_ext.xgboost as smx
from sagemaker_debugger_ext.hooks import TrainingContext
from sagemaker_debugger_ext.trials import create_trial

PARAMS = {"max_depth": 2, "eta": 0.3, "objective": "reg:squarederror", "seed": 0}


def _data() -> tuple[xgb.DMatrix, xgb.DMatrix]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 3))
    y = 2 * x[:, 0] - x[:, 1] + rng.normal(size=120) * 0.1
    return xgb.DMatrix(x[:90], label=y[:90]), xgb.DMatrix(x[90:], label=y[90:])


def _train(hook: smx.Hook, rounds: int) -> tuple[xgb.Booster, dict]:
    dtrain, dvalid = _data()
    evals: dict = {}
    booster = xgb.train(
        PARAMS,
        dtrain,
        num_boost_round=rounds,
        evals=[(dtrain, "train"), (dvalid, "validation")],
        evals_result=evals,
        callbacks=[hook],
        verbose_eval=False,
    )
    hook.close()
    return booster, evals


def test_all_collections_saved_with_right_values(tmp_path: Path) -> None:
    """Each due iteration has metrics, importances, labels, predictions, trees and hyperparameters."""
    _, dvalid = _data()
    hook = smx.Hook(
        out_dir=tmp_path,
        save_config=smx.SaveConfig(save_interval=3),
        validation_data=dvalid,
        hyperparameters=PARAMS,
        context=TrainingContext(),
        include_collections=["metrics", "feature_importance", "predictions", "labels", "trees", "hyperparameters"],
    )
    booster, evals = _train(hook, 7)
    trial = create_trial(str(tmp_path))
    value = lambda name, step: trial.tensor(name).value(step)
    assert trial.steps() == [0, 3, 6]
    for step in (0, 3, 6):
        assert float(value("train-rmse", step).reshape(-1)[0]) == pytest.approx(evals["train"]["rmse"][step])
        assert float(value("validation-rmse", step).reshape(-1)[0]) == pytest.approx(evals["validation"]["rmse"][step])
        np.testing.assert_allclose(value("labels", step), dvalid.get_label())
        np.testing.assert_allclose(
            value("predictions", step), booster.predict(dvalid, iteration_range=(0, step + 1)), rtol=1e-6
        )
        for itype in ("weight", "gain", "cover", "total_gain", "total_cover"):
            names = trial.tensor_names(regex=f"^feature_importance/{itype}/", step=step)
            assert names
            assert sum(float(value(n, step).reshape(-1)[0]) for n in names) == pytest.approx(1.0), itype
        assert set(value("trees/Tree", step).tolist()) == {step}
        assert len(value("trees/Node", step)) == len(value("trees/Cover", step)) == len(value("trees/ID", step))
        assert str(value("trees/ID", step)[0]) == f"{step}-0"
    assert float(value("hyperparameters/max_depth", 0).reshape(-1)[0]) == 2
    assert "train-rmse" in trial.tensor_names(collection="metrics")
    assert "labels" in trial.tensor_names(collection="labels")


def test_default_interval_is_ten_and_metrics_only(tmp_path: Path) -> None:
    """By default only metrics are saved, every 10 iterations."""
    _train(smx.Hook(out_dir=tmp_path, context=TrainingContext()), 12)
    trial = create_trial(str(tmp_path))
    assert trial.steps() == [0, 10]
    assert trial.tensor_names(step=10) == ["train-rmse", "validation-rmse"]


def test_create_from_json_file_keeps_interval_ten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From SageMaker's JSON, listed collections without parameters keep XGBoost's interval of 10."""
    cfg = tmp_path / "hook.json"
    cfg.write_text(
        json.dumps(
            {
                "LocalPath": str(tmp_path / "run"),
                "CollectionConfigurations": [{"CollectionName": "metrics"}, {"CollectionName": "feature_importance"}],
            }
        )
    )
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(cfg))
    monkeypatch.delenv("TRAINING_JOB_NAME", raising=False)
    hook = smx.create_from_json_file()
    _train(hook, 11)
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps() == [0, 10]
    assert trial.tensor_names(regex="^feature_importance/gain/", step=10)


def test_bad_validation_data_is_refused(tmp_path: Path) -> None:
    """validation_data that is neither a DMatrix nor (path, type) raises naming the field."""
    with pytest.raises(ValueError, match="validation_data"):
        smx.Hook(out_dir=tmp_path, validation_data=[1, 2, 3], context=TrainingContext())


def test_sklearn_style_metric_names_are_metrics(tmp_path: Path) -> None:
    """An eval set named like the sklearn API's ('validation_0') is still in the metrics collection."""
    dtrain, _ = _data()
    hook = smx.Hook(out_dir=tmp_path, save_config=smx.SaveConfig(save_interval=1), context=TrainingContext())
    xgb.train(PARAMS, dtrain, num_boost_round=2, evals=[(dtrain, "validation_0")], callbacks=[hook], verbose_eval=False)
    hook.close()
    trial = create_trial(str(tmp_path))
    assert trial.tensor_names(collection="metrics") == ["validation_0-rmse"]
    assert trial.steps() == [0, 1]


def test_tree_columns_equal_trees_to_dataframe() -> None:
    """trees/<column> values equal xgboost's own trees_to_dataframe() rows of that round."""
    pytest.importorskip("pandas")
    from sagemaker_debugger_ext.hooks.xgboost._trees import round_trees

    dtrain, _ = _data()
    booster = xgb.train(PARAMS, dtrain, num_boost_round=3)
    ref = booster.trees_to_dataframe()
    ref = ref[ref.Tree == 1].reset_index(drop=True)
    mine = round_trees(booster, 1)
    assert set(mine) == set(ref.columns)
    for col, values in mine.items():
        if values.dtype.kind in "fi":
            np.testing.assert_allclose(values.astype(float), ref[col].to_numpy(dtype=float), err_msg=col)
        else:
            assert [str(v) for v in values] == [str(v) for v in ref[col]], col


SMDEBUG_READER = """
import json, sys
from smdebug.trials import create_trial
trial = create_trial(sys.argv[1])
out = {"steps": trial.steps(), "metrics": trial.tensor_names(collection="metrics"), "values": {}}
for name in ("train-rmse", "predictions", "labels", "feature_importance/gain/f0", "trees/Cover", "trees/ID"):
    t = trial.tensor(name)
    out["values"][name] = {str(s): [str(v) for v in t.value(s).reshape(-1)] for s in t.steps()}
print(json.dumps(out))
"""


@pytest.mark.slow
def test_real_smdebug_reads_xgboost_output(tmp_path: Path, smdebug_python: Path) -> None:
    """smdebug 1.0.34's reader returns our XGBoost steps, metrics, predictions, labels, trees."""
    _, dvalid = _data()
    hook = smx.Hook(
        out_dir=tmp_path,
        save_config=smx.SaveConfig(save_interval=2),
        validation_data=dvalid,
        context=TrainingContext(),
        include_collections=["metrics", "feature_importance", "predictions", "labels", "trees"],
    )
    _train(hook, 3)
    got = smdebug_json(smdebug_python, SMDEBUG_READER, str(tmp_path))
    assert got["steps"] == [0, 2]
    assert got["metrics"] == ["train-rmse", "validation-rmse"]
    trial = create_trial(str(tmp_path))
    for name, per_step in got["values"].items():
        for step, values in per_step.items():
            ours = [str(v) for v in trial.tensor(name).value(int(step)).reshape(-1)]
            if name == "trees/ID":
                assert values == ours
            else:
                np.testing.assert_allclose(np.array(values, float), np.array(ours, float), rtol=1e-6, err_msg=name)


def test_losses_collection_holds_loss_metrics(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """rule_configs.loss_not_decreasing()'s bare 'losses' collection is valid for XGBoost and holds loss metrics."""
    cfg = tmp_path / "hook.json"
    cfg.write_text(
        json.dumps(
            {
                "LocalPath": str(tmp_path / "run"),
                "CollectionConfigurations": [
                    {"CollectionName": "losses", "CollectionParameters": {"save_interval": "1"}}
                ],
            }
        )
    )
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(cfg))
    monkeypatch.delenv("TRAINING_JOB_NAME", raising=False)
    hook = smx.create_from_json_file()
    dtrain, _ = _data()
    xgb.train(PARAMS, dtrain, num_boost_round=3, evals=[(dtrain, "train")], callbacks=[hook], verbose_eval=False)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor_names(collection="losses") == ["train-rmse"]
    assert trial.tensor("train-rmse").steps() == [0, 1, 2]
