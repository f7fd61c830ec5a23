"""Loss series shared by the loss rules: evaluation passes, window means, XGBoost metric names.

An *evaluation pass* is a maximal run of consecutive saved EVAL steps of the trial (the
model's weights do not change inside it). A pass is judged once, at its last saved step;
whether a step is the last is known for certain only once the trial has a later step or
training ended, so :func:`ends_pass` waits for that: live and offline evaluation of the
same data see the same passes.
"""

from __future__ import annotations

import re
from typing import Any

from ...exceptions import NoMoreData, StepUnavailable
from ...modes import ModeKeys

__all__ = ["ends_pass", "lower_is_better", "mean", "metric_kind", "pass_steps"]

_TRAIN_PREFIXES = ("train",)
_VAL_PREFIXES = ("validation", "valid", "val", "eval", "test")
# XGBoost evaluation metrics that are losses (lower is better), as the hooks' "losses" collection
_LOSS_METRIC = re.compile(
    r"(rmse|rmsle|mae|mape|mphe|logloss|mlogloss|error|merror|[a-z]+-nloglik|gamma-deviance|tweedie-nloglik.*)(@.*)?"
)


def metric_kind(name: str) -> tuple[str, str] | None:
    """('training'|'validation', metric) for XGBoost-style names like ``validation-logloss``.

    Names of this package's XGBoost hook and of SageMaker's XGBoost container
    (``<channel>-<metric>``, channels ``train`` and ``validation``; also ``valid``,
    ``val``, ``eval``, ``test``).
    """
    head, sep, metric = name.rpartition("/")[-1].partition("-")
    if not sep or not metric:
        return None
    if head.lower() in _TRAIN_PREFIXES:
        return "training", metric
    if head.lower() in _VAL_PREFIXES:
        return "validation", metric
    return None


def lower_is_better(metric: str) -> bool:
    """Whether an XGBoost metric is a loss (``logloss``, ``rmse``, ``error@0.6``, ...)."""
    return _LOSS_METRIC.fullmatch(metric) is not None


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _mode(trial: Any, step: int) -> ModeKeys:
    m = trial.mode(step)
    return ModeKeys.GLOBAL if m is None else ModeKeys(int(m))


def pass_steps(trial: Any, step: int) -> list[int]:
    """Saved global steps of the evaluation pass that contains ``step``, up to ``step``."""
    steps = [s for s in trial.steps(show_incomplete_steps=True) if s <= step]
    run: list[int] = []
    for s in reversed(steps):
        if _mode(trial, s) is not ModeKeys.EVAL:
            break
        run.append(s)
    return run[::-1]


def next_saved_step(trial: Any, step: int) -> int | None:
    """The trial's first saved step after ``step``, waiting until it is known; None when training ended first."""
    try:
        trial.wait_for_steps([step + 1])
    except StepUnavailable:
        pass
    except NoMoreData:
        return None
    later = [s for s in trial.steps(show_incomplete_steps=True) if s > step]
    return later[0] if later else None


def ends_pass(trial: Any, step: int) -> bool:
    """Whether EVAL step ``step`` is the last saved step of its evaluation pass."""
    nxt = next_saved_step(trial, step)
    return nxt is None or _mode(trial, nxt) is not ModeKeys.EVAL


def eval_passes(trial: Any, upto: int) -> list[list[int]]:
    """Every evaluation pass (saved global steps) that ended before ``upto``'s pass, oldest first."""
    passes: list[list[int]] = []
    run: list[int] = []
    for s in trial.steps(show_incomplete_steps=True):
        if s > upto:
            break
        if _mode(trial, s) is ModeKeys.EVAL:
            run.append(s)
        elif run:
            passes.append(run)
            run = []
    return passes
