"""SHAP values of the XGBoost hook: smdebug's names and shapes, xgboost's pred_contribs values."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
import xgboost as xgb

import sagemaker_debugger_ext.xgboost as smx
from sagemaker_debugger_ext.trials import create_trial

SMDEBUG_PYTHON = Path(__file__).resolve().parents[2] / ".venv-smdebug" / "bin" / "python"


def _binary(rows: int = 80, features: int = 4, names: list[str] | None = None) -> xgb.DMatrix:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(rows, features))
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(float)
    return xgb.DMatrix(x, label=y, feature_names=names)


def _train(params: dict, dtrain: xgb.DMatrix, hook: smx.Hook, rounds: int) -> xgb.Booster:
    booster = xgb.train(params, dtrain, num_boost_round=rounds, evals=[(dtrain, "train")], callbacks=[hook],
                        verbose_eval=False)  # fmt: skip
    hook.close()
    return booster


def _contribs(booster: xgb.Booster, data: xgb.DMatrix, step: int) -> np.ndarray:
    return np.asarray(booster.predict(data, pred_contribs=True, iteration_range=(0, step + 1)))


def test_average_and_full_shap_names_shapes_and_values(tmp_path: Path) -> None:
    """average_shap/f<i> is the column mean of pred_contribs; full_shap/f<i> is the whole matrix."""
    dtrain = _binary()
    hook = smx.Hook(out_dir=tmp_path, save_config=smx.SaveConfig(save_interval=2), train_data=dtrain,
                    include_collections=["average_shap", "full_shap"])  # fmt: skip
    booster = _train({"objective": "binary:logistic", "max_depth": 3, "seed": 0}, dtrain, hook, 5)
    trial = create_trial(str(tmp_path))
    features = [f"f{i}" for i in range(4)]
    shap_names = {f"{kind}/{f}" for kind in ("average_shap", "full_shap") for f in features}
    assert set(trial.tensor_names()) == shap_names | {"train-logloss"}  # metrics: always included, as in smdebug
    assert set(trial.tensor_names(collection="average_shap")) == {f"average_shap/{f}" for f in features}
    assert trial.steps() == [0, 2, 4]
    for step in (0, 2, 4):
        expected = _contribs(booster, dtrain, step)
        for index, name in enumerate(features):
            full = trial.tensor(f"full_shap/{name}").value(step)
            assert full.shape == (80, 5)
            np.testing.assert_allclose(full, expected, rtol=1e-5, atol=1e-6)
            average = trial.tensor(f"average_shap/{name}").value(step)
            assert average.shape == (1,)  # as smdebug's own test_hook_shap asserts
            assert float(np.asarray(average).reshape(-1)[0]) == pytest.approx(
                float(expected[:, index].mean()), abs=1e-5
            )
    full = trial.tensor("full_shap/f0").value(4)  # the census notebook's use: the rows sum to the margin
    np.testing.assert_allclose(full.sum(axis=1), booster.predict(dtrain, output_margin=True), rtol=1e-4, atol=1e-4)


def test_bias_saved_only_with_all_and_named_features_kept(tmp_path: Path) -> None:
    """The bias column is in no built-in collection (smdebug's regex), so only save_all saves it."""
    dtrain = _binary(names=["age", "hours", "gain", "loss"])
    hook = smx.Hook(out_dir=tmp_path, save_config=smx.SaveConfig(save_steps=[1]), train_data=dtrain,
                    save_all=True)  # fmt: skip
    booster = _train({"objective": "binary:logistic", "max_depth": 2, "seed": 0}, dtrain, hook, 2)
    trial = create_trial(str(tmp_path))
    shap_names = set(trial.tensor_names(regex="shap/"))
    assert shap_names == {
        f"{k}/{f}" for k in ("average_shap", "full_shap") for f in ("age", "hours", "gain", "loss", "bias")
    }
    expected = _contribs(booster, dtrain, 1)
    bias = float(np.asarray(trial.tensor("average_shap/bias").value(1)).reshape(-1)[0])
    assert bias == pytest.approx(float(expected[:, -1].mean()), abs=1e-6)
    assert "average_shap/bias" not in trial.tensor_names(collection="average_shap")


def test_multiclass_shap_has_a_class_axis(tmp_path: Path) -> None:
    """multi:softprob contributions are (rows, classes, features + 1); averages are per feature."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(60, 3))
    dtrain = xgb.DMatrix(x, label=rng.integers(0, 3, size=60))
    hook = smx.Hook(out_dir=tmp_path, save_config=smx.SaveConfig(save_steps=[0]), train_data=dtrain,
                    include_collections=["average_shap", "full_shap"])  # fmt: skip
    booster = _train({"objective": "multi:softprob", "num_class": 3, "max_depth": 2}, dtrain, hook, 1)
    trial = create_trial(str(tmp_path))
    expected = _contribs(booster, dtrain, 0)
    assert trial.tensor("full_shap/f2").value(0).shape == (60, 3, 4)
    average = float(np.asarray(trial.tensor("average_shap/f2").value(0)).reshape(-1)[0])
    assert average == pytest.approx(float(expected[:, :, 2].mean()), abs=1e-6)


def test_no_train_data_no_shap_and_training_unharmed(tmp_path: Path) -> None:
    """Without train_data the SHAP collections stay empty and the other collections are saved."""
    dtrain = _binary()
    hook = smx.Hook(out_dir=tmp_path, save_config=smx.SaveConfig(save_interval=1),
                    include_collections=["average_shap", "full_shap", "metrics"])  # fmt: skip
    _train({"objective": "binary:logistic", "max_depth": 2}, dtrain, hook, 2)
    names = create_trial(str(tmp_path)).tensor_names()
    assert names == ["train-logloss"]


def test_train_data_from_csv_tuple(tmp_path: Path) -> None:
    """train_data=(path, 'csv') (label first, as smdebug documents) gives f0.. names for the other columns."""
    rng = np.random.default_rng(3)
    table = np.column_stack([rng.integers(0, 2, size=40), rng.normal(size=(40, 2))])
    csv = tmp_path / "train.csv"
    np.savetxt(csv, table, delimiter=",", fmt="%.6f")
    table = np.loadtxt(csv, delimiter=",")  # the values as written, so splits match row for row
    dtrain = xgb.DMatrix(table[:, 1:], label=table[:, 0])
    hook = smx.Hook(out_dir=tmp_path / "out", save_config=smx.SaveConfig(save_steps=[0]), train_data=(str(csv), "csv"),
                    include_collections=["average_shap"])  # fmt: skip
    booster = _train({"objective": "binary:logistic", "max_depth": 2}, dtrain, hook, 1)
    trial = create_trial(str(tmp_path / "out"))
    assert trial.tensor_names() == ["average_shap/f0", "average_shap/f1", "train-logloss"]
    expected = _contribs(booster, dtrain, 0)
    got = float(np.asarray(trial.tensor("average_shap/f1").value(0)).reshape(-1)[0])
    assert got == pytest.approx(float(expected[:, 1].mean()), abs=1e-5)


_ORACLE = """
import json, sys
import numpy as np
from smdebug.trials import create_trial
t = create_trial(sys.argv[1])
out = {"names": sorted(t.tensor_names()), "steps": t.steps(),
       "avg_f1": {str(s): float(np.asarray(t.tensor("average_shap/f1").value(s)).reshape(-1)[0]) for s in t.steps()},
       "full_f0_shape": list(t.tensor("full_shap/f0").value(t.steps()[-1]).shape),
       "scalar_shapes": [list(t.tensor(n).value(0).shape) for n in ("average_shap/f1", "train-logloss")],
       "full_f0_sum": float(t.tensor("full_shap/f0").value(t.steps()[-1]).sum()),
       "collection": sorted(t.collection("average_shap").tensor_names)}
print(json.dumps(out))
"""


@pytest.mark.skipif(not SMDEBUG_PYTHON.exists(), reason="the smdebug 1.0.34 venv (.venv-smdebug) is not built")
def test_differential_smdebug_reads_the_same_shap(tmp_path: Path) -> None:
    """Real smdebug 1.0.34's trial reads our SHAP output with the names, steps and values we read."""
    dtrain = _binary()
    hook = smx.Hook(out_dir=tmp_path / "out", save_config=smx.SaveConfig(save_interval=2), train_data=dtrain,
                    include_collections=["average_shap", "full_shap", "metrics"])  # fmt: skip
    _train({"objective": "binary:logistic", "max_depth": 3, "seed": 0}, dtrain, hook, 5)
    proc = subprocess.run([str(SMDEBUG_PYTHON), "-c", _ORACLE, str(tmp_path / "out")], capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    trial = create_trial(str(tmp_path / "out"))
    last = trial.steps()[-1]
    ours = {
        "names": sorted(trial.tensor_names()),
        "steps": trial.steps(),
        "avg_f1": {
            str(s): float(np.asarray(trial.tensor("average_shap/f1").value(s)).reshape(-1)[0]) for s in trial.steps()
        },
        "full_f0_shape": list(trial.tensor("full_shap/f0").value(last).shape),
        "scalar_shapes": [list(trial.tensor(n).value(0).shape) for n in ("average_shap/f1", "train-logloss")],
        "full_f0_sum": float(trial.tensor("full_shap/f0").value(last).sum()),
        "collection": sorted(trial.collection("average_shap").tensor_names),
    }
    assert theirs == ours
    assert ours["collection"] == [f"average_shap/f{i}" for i in range(4)]
    assert ours["scalar_shapes"] == [[1], [1]]  # smdebug's make_numpy_array: a scalar is saved as (1,)
