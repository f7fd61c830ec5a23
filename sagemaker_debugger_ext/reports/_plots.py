"""Series of a tensor over steps (its values, or one reduction per step) and their plots.

Plots use matplotlib's object API with the Agg canvas (no pyplot, no display needed).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._exceptions import ConfigValueError, DebuggerExtError, field_error_message
from ..render._figure import PlotData, draw_plot, figure_png

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "REDUCTIONS",
    "figure_png",
    "is_scalar_tensor",
    "plot_series",
    "plot_tensor",
    "reduce_value",
    "save_tensor_plot",
    "step_mode",
    "tensor_series",
]

# name -> (function of the flattened float64 array, smdebug reduction name, abs flag)
_REDUCERS: dict[str, tuple[Callable[[np.ndarray], float], str, bool]] = {
    "l2": (lambda a: float(np.sqrt(np.sum(a * a))), "l2", False),
    "l1": (lambda a: float(np.sum(np.abs(a))), "l1", False),
    "mean": (lambda a: float(np.mean(a)), "mean", False),
    "abs_mean": (lambda a: float(np.mean(np.abs(a))), "mean", True),
    "min": (lambda a: float(np.min(a)), "min", False),
    "max": (lambda a: float(np.max(a)), "max", False),
    "std": (lambda a: float(np.std(a)), "std", False),
    "variance": (lambda a: float(np.var(a)), "variance", False),
    "sum": (lambda a: float(np.sum(a)), "sum", False),
}
REDUCTIONS: tuple[str, ...] = tuple(_REDUCERS)
"""Reduction names accepted by :func:`tensor_series`; ``l1``/``l2`` are norms of the flattened tensor."""


def _check_reduction(reduction: str | None) -> None:
    if reduction is not None and reduction not in _REDUCERS:
        msg = field_error_message("reduction", f"one of {list(REDUCTIONS)}", reduction)
        raise ConfigValueError(msg, field="reduction", value=reduction)


def reduce_value(value: Any, reduction: str | None) -> float:
    """Reduce a tensor value to one float.

    Args:
        value: an array or scalar.
        reduction: a name from :data:`REDUCTIONS`; None keeps a one-element value as it
            is and takes the ``l2`` norm of a larger one.

    Returns:
        The reduced value.
    """
    _check_reduction(reduction)
    arr = np.asarray(value, dtype=np.float64).ravel()
    if reduction is None:
        if arr.size == 1:
            return float(arr[0])
        reduction = "l2"
    if arr.size == 0:
        return float("nan")
    return _REDUCERS[reduction][0](arr)


def step_mode(trial: Any, step: int) -> str:
    """The name of the mode of a global step (``GLOBAL`` when the trial does not know it)."""
    try:
        return str(getattr(trial.mode(step), "name", trial.mode(step)))
    except (DebuggerExtError, KeyError, ValueError):
        return "GLOBAL"


def tensor_series(trial: Any, name: str, *, reduction: str | None = None) -> dict[str, tuple[list[int], list[float]]]:
    """Return a tensor's values (scalars) or reductions over global steps, per mode.

    A step where only reductions were saved uses the saved reduction of the same name.

    Args:
        trial: a trial from ``create_trial``.
        name: a tensor name of the trial.
        reduction: see :func:`reduce_value`.

    Returns:
        ``{mode_name: (global_steps, values)}``, modes in the order they first appear.

    Raises:
        ConfigValueError: unknown tensor name or reduction.
    """
    _check_reduction(reduction)
    names = trial.tensor_names()
    if name not in names:
        shown = sorted(names)[:10]
        more = ", ..." if len(names) > 10 else ""
        msg = field_error_message("tensor", f"a tensor of the trial ({', '.join(shown)}{more})", name)
        raise ConfigValueError(msg, field="tensor", value=name)
    tensor = trial.tensor(name)
    series: dict[str, tuple[list[int], list[float]]] = {}
    for step in tensor.steps():
        try:
            y = reduce_value(tensor.value(step), reduction)
        except DebuggerExtError:
            _fn, op, absolute = _REDUCERS[reduction or "l2"]
            try:
                y = float(np.asarray(tensor.reduction_value(step, op, abs=absolute)))
            except DebuggerExtError:
                continue
        xs, ys = series.setdefault(step_mode(trial, step), ([], []))
        xs.append(int(step))
        ys.append(y)
    return series


def plot_series(
    series: dict[str, tuple[list[int], list[float]]],
    *,
    title: str,
    ylabel: str,
    ax: Any = None,
    legend_title: str | None = "mode",
) -> Figure:
    """Plot ``{label: (steps, values)}`` as one line per label; returns the figure.

    The y axis is logarithmic when the values span orders of magnitude (symmetric log when
    signs mix), and steps whose value is NaN or infinite are marked at the top edge: see
    :func:`~sagemaker_debugger_ext.render._figure.draw_plot`.
    """
    return draw_plot(PlotData(title=title, ylabel=ylabel, series=series, legend_title=legend_title), ax=ax)


def plot_tensor(trial: Any, name: str, *, reduction: str | None = None, ax: Any = None) -> Figure:
    """Plot a tensor over steps (see :func:`tensor_series`); returns the matplotlib figure.

    Raises:
        ConfigValueError: unknown tensor or reduction, or nothing to plot.

    .. versionadded:: 0.1
    """
    series = tensor_series(trial, name, reduction=reduction)
    if not series:
        wanted = f"saved values or a saved '{reduction or 'l2'}' reduction"
        msg = field_error_message("tensor", f"a tensor with {wanted} at some step", name)
        raise ConfigValueError(msg, field="tensor", value=name)
    ylabel = reduction or ("value" if is_scalar_tensor(trial, name) else "l2")
    return plot_series(series, title=name, ylabel=ylabel, ax=ax)


def is_scalar_tensor(trial: Any, name: str) -> bool:
    """Whether the tensor's last saved value has one element."""
    tensor = trial.tensor(name)
    steps = tensor.steps()
    if not steps:
        return True
    try:
        return bool(np.asarray(tensor.value(steps[-1])).size == 1)
    except DebuggerExtError:
        return False


def save_tensor_plot(trial: Any, name: str, out: str | Path, *, reduction: str | None = None) -> Path:
    """Write the plot of :func:`plot_tensor` to a PNG file and return its path.

    .. versionadded:: 0.1
    """
    path = Path(out)
    if path.suffix.lower() != ".png":
        msg = field_error_message("out", "a path ending in .png", str(out))
        raise ConfigValueError(msg, field="out", value=str(out))
    fig = plot_tensor(trial, name, reduction=reduction)
    path.write_bytes(figure_png(fig))
    return path
