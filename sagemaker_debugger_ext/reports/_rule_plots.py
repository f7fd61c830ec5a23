"""Plots of what a rule measured: the quantity its findings table shows, with its thresholds.

A built-in rule compares a quantity of a tensor with a threshold: VanishingGradient the mean
absolute gradient, AllZero the percent of zeros, FeatureImportanceOverweight the share of the
top features... The job report plots that same quantity over the steps, so the values in the
findings table are points of the plotted curve, and draws the rule's thresholds from its
parameters. For a rule whose quantity is not known here, the tensor is plotted as it is and
the findings' values get a plot of their own. ExplodingTensor's findings count the NaN/inf
values of a tensor at a step: its plots show the tensor (value or l2 norm), those steps marked.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from .._exceptions import DebuggerExtError
from ..render._figure import PlotData, Threshold
from ._plots import is_scalar_tensor, step_mode, tensor_series

__all__ = ["rule_plots"]

Series = dict[str, tuple[list[int], list[float]]]


@attrs.frozen(kw_only=True)
class _Quantity:
    """How to compute what a rule compares: a reduction of :func:`tensor_series` or a function of the value."""

    label: str
    reduction: str | None = None
    fn: Callable[[np.ndarray, Mapping[str, Any]], float] | None = None
    thresholds: tuple[str, ...] = ()


def _zero_percent(value: np.ndarray, _params: Mapping[str, Any]) -> float:
    return 100.0 * float(np.count_nonzero(value == 0)) / value.size if value.size else math.nan


_QUANTITIES: dict[str, _Quantity] = {
    "VanishingGradient": _Quantity(label="mean |gradient|", reduction="abs_mean", thresholds=("threshold",)),
    "TensorVariance": _Quantity(label="variance", reduction="variance", thresholds=("max_threshold", "min_threshold")),
    "AllZero": _Quantity(label="% of values that are zero", fn=_zero_percent, thresholds=("threshold",)),
    "LossNotDecreasing": _Quantity(label="loss"),
    "Overtraining": _Quantity(label="loss"),
}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _regexes(value: Any) -> list[str]:
    if isinstance(value, str):
        return [r.strip() for r in value.split(",") if r.strip()]
    return [str(r) for r in value or []]


def _raw_series(trial: Any, name: str, fn: Callable[[np.ndarray], float]) -> tuple[Series, set[int]]:
    """``fn`` of the tensor's value per step (per mode), and the steps where the value holds NaN/inf."""
    tensor = trial.tensor(name)
    series: Series = {}
    bad: set[int] = set()
    for step in tensor.steps():
        try:
            value = np.asarray(tensor.value(step))
        except DebuggerExtError:
            continue
        if np.issubdtype(value.dtype, np.inexact) and not np.isfinite(value).all():
            bad.add(int(step))
        xs, ys = series.setdefault(step_mode(trial, step), ([], []))
        xs.append(int(step))
        ys.append(fn(value))
    return series, bad


def _update_ratio(trial: Any, name: str, params: Mapping[str, Any]) -> tuple[Series, set[int]]:
    """||W_s - W_prev|| / (||W_prev|| + epsilon) between saved steps (TRAIN steps when there are some)."""
    eps = _number(params.get("epsilon")) or 1e-9
    tensor = trial.tensor(name)
    steps = [int(s) for s in tensor.steps()]
    train = [s for s in steps if step_mode(trial, s) == "TRAIN"]
    xs: list[int] = []
    ys: list[float] = []
    prev: np.ndarray | None = None
    for step in train or steps:
        try:
            now = np.asarray(tensor.value(step), dtype=np.float64).ravel()
        except DebuggerExtError:
            continue
        if prev is not None and prev.shape == now.shape:
            xs.append(step)
            ys.append(float(np.linalg.norm(now - prev) / (np.linalg.norm(prev) + eps)))
        prev = now
    return ({"TRAIN" if train else "GLOBAL": (xs, ys)} if xs else {}), set()


def _importance_share(trial: Any, params: Mapping[str, Any]) -> tuple[Series, list[str]]:
    """The share of the ``nfeatures`` largest importances per step, as FeatureImportanceOverweight computes it."""
    names: set[str] = set()
    for regex in _regexes(params.get("tensor_regex")) or [".*feature_importance/weight"]:
        names.update(trial.tensor_names(regex=[regex]))
    top_n = int(_number(params.get("nfeatures")) or 3)
    per_step: dict[int, dict[str, float]] = {}
    for name in sorted(names):
        tensor = trial.tensor(name)
        for step in tensor.steps():
            try:
                value = np.asarray(tensor.value(step), dtype=np.float64)
            except DebuggerExtError:
                continue
            if value.size == 1:
                per_step.setdefault(int(step), {})[name] = max(float(value.reshape(())), 0.0)
    xs: list[int] = []
    ys: list[float] = []
    for step in sorted(per_step):
        values = [per_step[step].get(n, 0.0) for n in names]
        total = sum(values)
        if total > 0:
            xs.append(step)
            ys.append(sum(sorted(values, reverse=True)[:top_n]) / total)
    return ({"GLOBAL": (xs, ys)} if xs else {}), sorted(names)


def _param_thresholds(params: Mapping[str, Any], keys: Sequence[str]) -> tuple[Threshold, ...]:
    out = []
    for key in keys:
        value = _number(params.get(key))
        if value is not None:
            out.append(Threshold(label=key, value=value))
    return tuple(out)


def _finding_thresholds(findings: Sequence[Mapping[str, Any]], tensor: str | None) -> tuple[Threshold, ...]:
    marks = []
    for f in findings:
        value = _number(f.get("threshold"))
        step = f.get("step")
        if value is not None and isinstance(step, int) and (tensor is None or f.get("tensor") == tensor):
            marks.append(Threshold(label="threshold at the step", value=value, step=step))
    return tuple(marks)


def _findings_plot(rule: str, findings: Sequence[Mapping[str, Any]], fired: tuple[int, ...]) -> PlotData | None:
    """The findings' values over steps (the table's value column), one series per tensor."""
    series: Series = {}
    for f in findings:
        value, step = _number(f.get("value")), f.get("step")
        if isinstance(step, int) and value is not None:
            xs, ys = series.setdefault(str(f.get("tensor") or rule), ([], []))
            xs.append(step)
            ys.append(value)
    if not series:
        return None
    return PlotData(
        title=f"{rule}: value in the findings table",
        ylabel="value",
        series=series,
        thresholds=_finding_thresholds(findings, None),
        fired_steps=fired,
        legend_title="tensor",
    )


def rule_plots(
    rule: str,
    params: Mapping[str, Any],
    trial: Any,
    names: Sequence[str],
    findings: Sequence[Mapping[str, Any]],
    fired: Sequence[int],
) -> list[PlotData]:
    """The plots of what ``rule`` measured on the tensors ``names``.

    Args:
        rule: the built-in rule's name (``rule_to_invoke``).
        params: its parameters (the resolved ones of its ``rule-report.json`` when there is one).
        trial: the job's trial.
        names: the flagged tensors (see :func:`~sagemaker_debugger_ext.reports.flagged_tensors`).
        findings: the ``Findings`` of its ``rule-report.json``.
        fired: the steps where it fired.

    Returns:
        One plot per tensor, of the quantity the rule compares (its findings' values lie on
        the curve) with the rule's thresholds; FeatureImportanceOverweight gives one plot of
        the top features' share; an unknown rule's tensors are plotted as they are, plus one
        plot of its findings' values.
    """
    fired_t = tuple(int(s) for s in fired)
    if rule == "FeatureImportanceOverweight":
        series, used = _importance_share(trial, params)
        top_n = int(_number(params.get("nfeatures")) or 3)
        return [
            PlotData(
                title=f"Share of the top {top_n} of {len(used)} feature importances",
                ylabel=f"top-{top_n} share",
                series=series,
                fired_steps=fired_t,
                legend_title="mode",
                thresholds=_param_thresholds(params, ("threshold",)),
            )
        ]
    quantity = _QUANTITIES.get(rule)
    plots: list[PlotData] = []
    for name in names:
        bad: set[int] = set()
        if rule == "WeightUpdateRatio":
            label = "update ratio"
            series, bad = _update_ratio(trial, name, params)
            thresholds = _param_thresholds(params, ("large_threshold", "small_threshold"))
        elif quantity is not None:
            label = quantity.label
            fn = quantity.fn
            if fn is not None:
                series, bad = _raw_series(trial, name, lambda v, fn=fn: fn(v, params))  # type: ignore[misc]
            else:
                series = tensor_series(trial, name, reduction=quantity.reduction)
            thresholds = _param_thresholds(params, quantity.thresholds) or _finding_thresholds(findings, name)
        else:  # ExplodingTensor and unknown rules: the tensor itself, NaN/inf steps marked
            label = "value" if is_scalar_tensor(trial, name) else "l2 norm"
            series = tensor_series(trial, name)
            thresholds = ()
        title = f"{name}: ||W_s - W_prev|| / ||W_prev||" if rule == "WeightUpdateRatio" else name
        plots.append(
            PlotData(
                title=title,
                ylabel=label,
                series=series,
                thresholds=thresholds,
                fired_steps=fired_t,
                legend_title="mode",
                tensor_nonfinite_steps=tuple(sorted(bad)),
            )
        )
    if quantity is None and rule not in ("WeightUpdateRatio", "ExplodingTensor"):
        extra = _findings_plot(rule, findings, fired_t)
        if extra is not None:
            plots.append(extra)
    return plots
