"""Hyperparameters of the SageMaker XGBoost algorithm container: names, types, ranges.

The table follows the container's published validation (aws/sagemaker-xgboost-container,
``algorithm_mode/hyperparameter_validation.py``): ``num_round`` is required, values arrive
as strings and are parsed to the declared type, aliases (``learning_rate`` for ``eta``, ...)
are replaced by their key, and any other name is an error. ``silent`` exists up to the 1.0
images only, as in the container. Errors are :class:`LocalJobInputError` naming
``HyperParameters.<name>``, the value and what is allowed.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ..._exceptions import LocalJobInputError, field_error_message

__all__ = ["validate_hyperparameters"]

_MAXIMIZE = ("accuracy", "auc", "aucpr", "balanced_accuracy", "f1", "f1_binary", "f1_macro", "map", "ndcg",
             "precision", "r2", "recall", "precision_macro", "precision_micro", "recall_macro", "recall_micro")  # fmt: skip
_MINIMIZE = ("aft-nloglik", "cox-nloglik", "error", "gamma-deviance", "gamma-nloglik", "interval-regression-accuracy",
             "logloss", "mae", "mape", "merror", "mlogloss", "mphe", "mse", "poisson-nloglik", "rmse", "rmsle",
             "tweedie-nloglik")  # fmt: skip
METRICS = _MAXIMIZE + _MINIMIZE
OBJECTIVES = ("binary:logistic", "binary:logitraw", "binary:hinge", "count:poisson", "multi:softmax", "multi:softprob",
              "rank:pairwise", "rank:ndcg", "rank:map", "reg:linear", "reg:squarederror", "reg:logistic", "reg:gamma",
              "reg:pseudohubererror", "reg:squaredlogerror", "reg:absoluteerror", "reg:tweedie", "survival:aft",
              "survival:cox")  # fmt: skip
UPDATERS = ("grow_colmaker", "distcol", "grow_histmaker", "grow_skmaker", "sync", "refresh", "prune",
            "grow_quantile_histmaker", "shotgun", "coord_descent")  # fmt: skip
ALIASES = {"learning_rate": "eta", "min_split_loss": "gamma", "reg_lambda": "lambda", "reg_alpha": "alpha"}
# Hyperparameters the container reads itself; they are not passed to xgboost.train's params.
CONTAINER_ONLY = ("num_round", "csv_weights", "early_stopping_rounds", "save_model_on_termination",
                  "_tuning_objective_metric", "_kfold", "_num_cv_round", "use_dask_gpu_training")  # fmt: skip
UNSUPPORTED = {"_kfold": "cross-validation", "_num_cv_round": "cross-validation", "use_dask_gpu_training": "Dask"}


@attrs.frozen
class _Hp:
    """One hyperparameter: ``parse`` turns the string into its value or raises ValueError;
    ``allowed`` says what is allowed, for messages."""

    name: str
    parse: Callable[[str], Any]
    allowed: str


def _number(kind: type, low: float | None, high: float | None, low_open: bool, high_open: bool) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        value = float(text) if kind is float else int(text)
        if kind is float and not math.isfinite(value):
            raise ValueError(text)
        if low is not None and (value < low or (low_open and value == low)):
            raise ValueError(text)
        if high is not None and (value > high or (high_open and value == high)):
            raise ValueError(text)
        return value

    return parse


def _bounds(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f" in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f" {'>' if low_open else '>='} {low:g}"
    return f" {'<' if high_open else '<='} {high:g}" if high is not None else ""


def _int(name: str, low: float | None = None, high: float | None = None, *, low_open: bool = False) -> _Hp:
    return _Hp(name, _number(int, low, high, low_open, False), "an integer" + _bounds(low, high, low_open, False))


def _float(name: str, low: float | None = None, high: float | None = None, *, low_open: bool = False,
           high_open: bool = False) -> _Hp:  # fmt: skip
    return _Hp(
        name, _number(float, low, high, low_open, high_open), "a number" + _bounds(low, high, low_open, high_open)
    )


def _choice(name: str, values: tuple[str, ...]) -> _Hp:
    def parse(text: str) -> str:
        if text not in values:
            raise ValueError(text)
        return text

    return _Hp(name, parse, f"one of {list(values)}")


def _metric_list(text: str) -> list[str]:
    metrics = [m.strip() for m in text.split(",")]
    for metric in metrics:
        name, _, threshold = metric.partition("@")
        if threshold:
            if name not in ("error", "ndcg", "map"):
                raise ValueError(metric)
            float(threshold)
        elif metric not in METRICS:
            raise ValueError(metric)
    return metrics


def _updater_list(text: str) -> list[str]:
    values = [u.strip() for u in text.split(",")]
    if not all(v in UPDATERS for v in values):
        raise ValueError(text)
    return values


def _literal(kind: type) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        value = json.loads(text.replace("(", "[").replace(")", "]"))
        if not isinstance(value, list):
            raise TypeError(text)
        return tuple(value) if kind is tuple else value

    return parse


_TABLE = (
    _int("num_round", 1), _int("csv_weights", 0, 1), _int("early_stopping_rounds", 1),
    _choice("booster", ("gbtree", "gblinear", "dart")), _int("verbosity", 0, 3), _int("nthread", 1),
    _float("eta", 0, 1), _float("gamma", 0), _int("max_depth", 0), _float("min_child_weight", 0),
    _float("max_delta_step", 0), _float("subsample", 0, 1, low_open=True),
    _float("colsample_bytree", 0, 1, low_open=True), _float("colsample_bylevel", 0, 1, low_open=True),
    _float("colsample_bynode", 0, 1, low_open=True), _float("lambda", 0), _float("alpha", 0),
    _choice("tree_method", ("auto", "exact", "approx", "hist", "gpu_hist")),
    _float("sketch_eps", 0, 1, low_open=True, high_open=True), _float("scale_pos_weight", 0, low_open=True),
    _Hp("updater", _updater_list, f"a comma-separated list of {list(UPDATERS)}"),
    _choice("dsplit", ("row", "col")), _int("refresh_leaf", 0, 1), _choice("process_type", ("default", "update")),
    _choice("grow_policy", ("depthwise", "lossguide")), _int("max_leaves", 0), _int("max_bin", 0),
    _choice("predictor", ("auto", "cpu_predictor", "gpu_predictor")),
    _Hp("monotone_constraints", _literal(tuple), "a tuple of -1, 0 and 1, such as '(1,-1)'"),
    _Hp("interaction_constraints", _literal(list), "a nested list of feature indices, such as '[[0,1],[2]]'"),
    _choice("sample_type", ("uniform", "weighted")), _choice("normalize_type", ("tree", "forest")),
    _float("rate_drop", 0, 1), _int("one_drop", 0, 1), _float("skip_drop", 0, 1), _float("lambda_bias", 0, 1),
    _float("tweedie_variance_power", 1, 2, low_open=True, high_open=True), _choice("objective", OBJECTIVES),
    _int("num_class", 2), _float("base_score", 0), _int("_kfold", 2), _int("_num_cv_round", 1),
    _Hp("_tuning_objective_metric", str, "'<channel>:<metric>', such as 'validation:auc'"),
    _Hp("eval_metric", _metric_list, f"a comma-separated list of {list(METRICS)} (or error@t, ndcg@t, map@t)"),
    _int("seed", -(2**31), 2**31 - 1), _int("num_parallel_tree", 1),
    _choice("save_model_on_termination", ("true", "false")),
    _choice("aft_loss_distribution", ("normal", "logistic", "extreme")), _float("aft_loss_distribution_scale", 0),
    _choice("deterministic_histogram", ("true", "false")), _choice("sampling_method", ("uniform", "gradient_based")),
    _int("prob_buffer_row", 1, low_open=True), _choice("use_dask_gpu_training", ("true", "false")),
)  # fmt: skip
_SILENT = _int("silent", 0, 1)


def _table(version: str) -> dict[str, _Hp]:
    table = {hp.name: hp for hp in _TABLE}
    if version.startswith(("0.", "1.0")):
        table["silent"] = _SILENT
    return table


def _text(value: str) -> str:
    """The string the container receives: JSON-quoted strings (framework estimators) unquoted."""
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        return decoded if isinstance(decoded, str) else value
    return value


def _bad(name: str, allowed: str, value: Any) -> LocalJobInputError:
    return LocalJobInputError(field_error_message(f"HyperParameters.{name}", allowed, value))


def _check_dependencies(hps: Mapping[str, Any]) -> None:
    objective = hps.get("objective")
    if objective in ("multi:softmax", "multi:softprob") and "num_class" not in hps:
        raise _bad("num_class", f"set (an integer >= 2) when objective is {objective!r}", None)
    if "num_class" in hps and not str(objective or "").startswith("multi:"):
        raise _bad("num_class", "left out unless objective is 'multi:softmax' or 'multi:softprob'", hps["num_class"])
    metrics = hps.get("eval_metric") or []
    if "auc" in metrics and not str(objective or "").startswith(("binary:", "rank:")):
        raise _bad(
            "eval_metric", "without 'auc' unless objective is a 'binary:' or 'rank:' objective", ",".join(metrics)
        )
    if "aft-nloglik" in metrics and objective != "survival:aft":
        raise _bad("eval_metric", "without 'aft-nloglik' unless objective is 'survival:aft'", ",".join(metrics))


def validate_hyperparameters(raw: Mapping[str, str], version: str) -> dict[str, Any]:
    """Parse and check the algorithm's hyperparameters as the container does.

    Args:
        raw: ``HyperParameters`` of the request (strings); ``sagemaker_*`` keys are ignored.
        version: the image's version (``0.90-2``, ``1.0-1``, ``1.7-1``, ...).

    Returns:
        The parsed values under their canonical names (aliases replaced).

    Raises:
        LocalJobInputError: a missing ``num_round``, an unknown name (with a suggestion), a
            value that does not parse or is out of range, or inconsistent values.
    """
    table = _table(version)
    parsed: dict[str, Any] = {}
    for key, value in sorted(raw.items()):
        if key.startswith("sagemaker_"):
            continue
        name = ALIASES.get(key, key)
        spec = table.get(name)
        if spec is None:
            close = difflib.get_close_matches(key, [*table, *ALIASES], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            msg = f"'HyperParameters.{key}' is not a hyperparameter of the SageMaker XGBoost algorithm {version}{hint}"
            raise LocalJobInputError(msg)
        if name in UNSUPPORTED:
            msg = f"'HyperParameters.{key}' ({UNSUPPORTED[name]}) is not supported by local mode's XGBoost algorithm"
            raise LocalJobInputError(msg)
        text = _text(str(value))
        try:
            parsed[name] = spec.parse(text)
        except (ValueError, TypeError):
            raise _bad(key, spec.allowed, text) from None
    if "num_round" not in parsed:
        raise _bad("num_round", "set: the SageMaker XGBoost algorithm requires it (an integer >= 1)", None)
    _check_dependencies(parsed)
    return parsed
