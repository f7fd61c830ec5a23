"""Reductions for plots and the PNG rendering (no trial needed)."""

from __future__ import annotations

import numpy as np
import pytest

from sagemaker_debugger_ext._exceptions import ConfigValueError
from sagemaker_debugger_ext.reports import (
    REDUCTIONS,
    figure_png,
    plot_series,
    reduce_value,
)


@pytest.mark.parametrize(
    ("reduction", "expected"),
    [
        (None, 5.0),
        ("l2", 5.0),
        ("l1", 7.0),
        ("mean", -0.25),
        ("abs_mean", 1.75),
        ("min", -4.0),
        ("max", 3.0),
        ("sum", -1.0),
    ],
    ids=lambda v: str(v),
)
def test_reduce_value_of_matrix(reduction, expected):
    """Reductions treat the tensor as flattened: l2 is the Frobenius norm, not the spectral one."""
    value = np.array([[3.0, 0.0], [-4.0, 0.0]])
    assert reduce_value(value, reduction) == pytest.approx(expected)


def test_reduce_value_keeps_scalars():
    """A one-element value is plotted as it is when no reduction is asked."""
    assert reduce_value(np.array([[2.5]], dtype=np.float32), None) == 2.5
    assert reduce_value(-3, None) == -3.0


def test_reduce_value_rejects_unknown_reduction():
    """An unknown reduction names the field, the value and the allowed names."""
    with pytest.raises(ConfigValueError) as err:
        reduce_value(np.ones(3), "median")
    assert "'reduction'" in str(err.value) and "'median'" in str(err.value)
    assert all(name in str(err.value) for name in REDUCTIONS)


def test_plot_series_renders_png():
    """A plot of two modes renders to a non-trivial PNG."""
    fig = plot_series({"TRAIN": ([0, 1, 2], [3.0, 2.0, 1.0]), "EVAL": ([3], [1.5])}, title="loss", ylabel="loss")
    assert len(fig.axes[0].lines) == 2
    png = figure_png(fig)
    assert png.startswith(b"\x89PNG") and len(png) > 2000
