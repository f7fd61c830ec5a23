"""Issue 19, faults: rules that did nothing (XGBoost Overfit/Overtraining, TensorVariance and
CheckInputImages at defaults), compared EVAL steps (UnchangedTensor), or judged a mode
picked from data not yet written (LossNotDecreasing)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sagemaker_debugger_ext.hooks._collections import XGBOOST_BUILTIN_REGEXES
from sagemaker_debugger_ext.modes import ModeKeys
from sagemaker_debugger_ext.rules._result import EvaluationStatus
from sagemaker_debugger_ext.rules._run_rule import RunRequest, run_rule
from sagemaker_debugger_ext.rules.builtin import LossNotDecreasing, Overfit, Overtraining, UnchangedTensor

# collections as this package's XGBoost hook writes them, and as SageMaker's XGBoost container
# (smdebug) does when only the "metrics" collection is saved
HOOK_COLLECTIONS = {"losses": XGBOOST_BUILTIN_REGEXES["losses"], "metrics": XGBOOST_BUILTIN_REGEXES["metrics"]}
CONTAINER_COLLECTIONS = {"metrics": ["^[a-zA-z]+-[a-zA-z0-9]+$"]}


def _xgb_steps(val_from: int, rounds: int = 12) -> tuple[dict[int, Any], dict[int, Any]]:
    """Boosting rounds (GLOBAL mode): train logloss falls; validation follows until ``val_from``, then rises."""
    steps, modes = {}, {}
    for s in range(rounds):
        val = 0.62 - 0.03 * s if s < val_from else 0.62 - 0.03 * val_from + 0.02 * (s - val_from)
        steps[s] = {
            "train-logloss": np.float64(0.6 - 0.03 * s),
            "validation-logloss": np.float64(val),
            "validation-auc": np.float64(0.7 + 0.01 * s),  # higher is better: never a loss
        }
        modes[s] = (ModeKeys.GLOBAL, s)
    return steps, modes


@pytest.mark.parametrize("collections", [HOOK_COLLECTIONS, CONTAINER_COLLECTIONS], ids=["hook", "container"])
def test_overfit_compares_xgboost_train_and_validation_metrics(
    make_trial: Callable[..., Any], fires: Callable[..., Any], collections: dict[str, list[str]]
) -> None:
    """GLOBAL-only XGBoost trials: validation-logloss vs train-logloss per round (was: 0 steps evaluated)."""
    steps, modes = _xgb_steps(val_from=4)
    rule = Overfit(make_trial(steps, modes=modes, collections=collections))
    # round 6: train 0.42, validation 0.54: (0.54 - 0.42) / 0.42 > 0.1; round 5: 0.52 vs 0.45 = 0.156 > 0.1
    assert fires(rule) == 5
    assert rule.steps_evaluated == 6  # rounds 0-5; fires() stops at the first firing
    assert all(f.tensor == "validation-logloss" for f in rule.findings)
    healthy = list(range(12))
    steps = {
        s: {"train-logloss": np.float64(0.6 - 0.03 * s), "validation-logloss": np.float64(0.61 - 0.03 * s)}
        for s in healthy
    }
    quiet = Overfit(make_trial(steps, modes={s: (ModeKeys.GLOBAL, s) for s in healthy}, collections=collections))
    assert fires(quiet) is None
    assert quiet.steps_evaluated == 12


@pytest.mark.parametrize("collections", [HOOK_COLLECTIONS, CONTAINER_COLLECTIONS], ids=["hook", "container"])
def test_overtraining_on_xgboost_validation_metric(
    make_trial: Callable[..., Any], fires: Callable[..., Any], collections: dict[str, list[str]]
) -> None:
    """The validation logloss stops improving at round 4: fires patience_validation rounds later."""
    steps, modes = _xgb_steps(val_from=4)
    rule = Overtraining(make_trial(steps, modes=modes, collections=collections), patience_validation="3")
    assert fires(rule) == 7
    assert rule.findings[0].tensor == "validation-logloss"


def test_xgboost_hook_data_is_evaluated(tmp_path: Path, fires: Callable[..., Any]) -> None:
    """Real data of this package's XGBoost hook: Overfit and Overtraining evaluate every round."""
    xgb = pytest.importorskip("xgboost")
    import sagemaker_debugger_ext.xgboost as smd
    from sagemaker_debugger_ext.trials import create_trial

    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 5))
    y = (x[:, 0] + rng.standard_normal(300) > 0).astype(np.float64)
    hook = smd.Hook(
        out_dir=str(tmp_path / "out"),
        save_config=smd.SaveConfig(save_interval=1),
        include_collections=["losses", "metrics"],
    )
    dtrain, dval = xgb.DMatrix(x[:200], label=y[:200]), xgb.DMatrix(x[200:], label=y[200:])
    params = {"objective": "binary:logistic", "max_depth": 6, "eta": 0.5, "nthread": 1, "seed": 0}
    xgb.train(
        params,
        dtrain,
        num_boost_round=10,
        evals=[(dtrain, "train"), (dval, "validation")],
        callbacks=[hook],
        verbose_eval=False,
    )
    hook.close()
    trial = create_trial(str(tmp_path / "out"))
    overfit = Overfit(trial)
    assert fires(overfit) is not None  # deep trees on 200 noisy rows: validation loss pulls away
    assert overfit.steps_evaluated > 0
    overtraining = Overtraining(create_trial(str(tmp_path / "out")))
    fires(overtraining)
    assert overtraining.steps_evaluated == 10


def test_unchanged_tensor_ignores_eval_steps(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """Weights saved at EVAL steps 50 and 60 equal TRAIN step 40's: not 'unchanged' (was: fired at 60)."""
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    steps = {s: {"net.0.weight": w + s} for s in (0, 10, 20, 30, 40)}
    steps.update({50: {"net.0.weight": w + 40}, 60: {"net.0.weight": w + 40}, 63: {"net.0.weight": w + 63}})
    modes = {s: (ModeKeys.TRAIN, s) for s in (0, 10, 20, 30, 40)}
    modes.update({50: (ModeKeys.EVAL, 0), 60: (ModeKeys.EVAL, 10), 63: (ModeKeys.TRAIN, 50)})
    assert fires(UnchangedTensor(make_trial(steps, modes=modes), tensor_regex=".*weight")) is None
    # frozen over three TRAIN steps still fires
    steps[63] = {"net.0.weight": w + 40}
    frozen = dict(steps)
    frozen[30] = {"net.0.weight": w + 40}
    assert fires(UnchangedTensor(make_trial(frozen, modes=modes), tensor_regex=".*weight")) == 63


def test_loss_not_decreasing_same_verdict_live_and_offline(
    make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """A flat TRAIN loss, then later EVAL passes with falling losses. The data a live rule sees at
    step 12 and the finished data give the same verdict (was: TRAIN live, EVAL offline)."""
    steps, modes = {}, {}
    for g in range(20):
        steps[g], modes[g] = {"loss": np.float32(0.5)}, (ModeKeys.TRAIN, g)
    for i, g in enumerate(range(20, 30)):
        steps[g], modes[g] = {"loss": np.float32(1.0 - 0.05 * i)}, (ModeKeys.EVAL, i)
    full = make_trial(steps, modes=modes, collections={"losses": ["loss"]})
    live_view = make_trial({g: v for g, v in steps.items() if g <= 12}, modes=modes, collections={"losses": ["loss"]})
    offline, live = LossNotDecreasing(full), LossNotDecreasing(live_view)
    assert fires(offline) == fires(live) == 10
    assert offline.fired_steps[:1] == live.fired_steps[:1] == [10]


def _run(trial_dir: Path, tmp_path: Path, rule: str, params: dict[str, str]) -> Any:
    req = RunRequest(
        trial_path=str(trial_dir),
        rule_name=rule,
        parameters={"rule_to_invoke": rule, **params},
        output_dir=tmp_path / "out" / rule,
        poll_interval=0.05,
    )
    return run_rule(req)


def test_tensor_variance_at_defaults_says_what_to_set(trial_dir: Callable[..., Path], tmp_path: Path) -> None:
    """rule_configs.tensor_variance() (no parameters) ends NoIssuesFound naming what to set (was: Error)."""
    root = trial_dir(
        {s: {"Net_fc1.weight": np.arange(9, dtype=np.float32).reshape(3, 3) * s} for s in range(3)},
        collections={"weights": [".*weight"]},
    )
    outcome = _run(root, tmp_path, "TensorVariance", {})
    assert outcome.status is EvaluationStatus.NO_ISSUES_FOUND
    assert "max_threshold" in outcome.details and "collection_names" in outcome.details
    fired = _run(root, tmp_path, "TensorVariance", {"collection_names": "weights", "max_threshold": "0.5"})
    assert fired.status is EvaluationStatus.ISSUES_FOUND


def test_check_input_images_default_regex_names_the_pytorch_input(
    trial_dir: Callable[..., Path], tmp_path: Path
) -> None:
    """At defaults (MXNet's input name) a PyTorch trial's details say which regex to set; with it, the rule judges."""
    imgs = np.random.default_rng(0).uniform(0, 1, (256, 3, 4, 4)).astype(np.float32)
    root = trial_dir({s: {"Net_input_0": imgs} for s in range(3)}, collections={"input_image": [".*Net_input_0"]})
    outcome = _run(root, tmp_path, "CheckInputImages", {})
    assert outcome.status is EvaluationStatus.NO_ISSUES_FOUND
    assert "'.*<ModelClass>_input_0'" in outcome.details
    assert _run(root, tmp_path, "CheckInputImages", {"regex": ".*Net_input_0"}).status is EvaluationStatus.ISSUES_FOUND
