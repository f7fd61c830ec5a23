"""SHAP values of the XGBoost hook: ``average_shap/<feature>`` and ``full_shap/<feature>``.

Computed as smdebug.xgboost 1.0.34 computes them, from xgboost's own
``Booster.predict(train_data, pred_contribs=True)``: an ``(rows, features + 1)`` matrix
(``(rows, classes, features + 1)`` for multi-class), the last column being the bias.

- ``average_shap/<feature>``: the mean contribution of the feature over every axis but the
  last (a scalar); ``average_shap/bias`` is the mean bias.
- ``full_shap/<feature>``: the whole contribution matrix, under every feature's name. This
  repeats the matrix once per feature, as smdebug does; AWS's census notebook relies on it
  (``trial.tensor("full_shap/f0").value(step)[:, :-1]`` is the per-row matrix).

Feature names are the booster's ``feature_names`` or ``f0, f1, ...``. The built-in
collection regexes (``^average_shap/.*[^/bias]$``) leave out the ``bias`` tensors unless
the collection ``all`` is saved, exactly as in smdebug.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import xgboost as xgb

__all__ = ["ShapValues", "feature_names"]


def feature_names(model: xgb.Booster) -> list[str]:
    """The booster's feature names, or ``f0 .. f<n-1>`` when it has none (smdebug's rule)."""
    names = model.feature_names
    if names is None:
        return [f"f{i}" for i in range(model.num_features())]
    return list(names)


class ShapValues:
    """Lazily computed SHAP values of one boosting round.

    Args:
        model: the booster after the round.
        train_data: the data set the contributions are computed on.
    """

    def __init__(self, model: xgb.Booster, train_data: xgb.DMatrix) -> None:
        self._model = model
        self._data = train_data
        self._full: np.ndarray | None = None

    @property
    def full(self) -> np.ndarray:
        """``predict(train_data, pred_contribs=True)``, computed once."""
        if self._full is None:
            self._full = np.asarray(self._model.predict(self._data, pred_contribs=True))
        return self._full

    def names(self) -> list[str]:
        """Feature names followed by ``bias``, one per last-axis column."""
        return [*feature_names(self._model), "bias"]

    def write_full(self, save: Callable[[str, Any], None]) -> None:
        """Save the whole matrix as ``full_shap/<name>`` for every feature and the bias."""
        for name in self.names():
            save(f"full_shap/{name}", self.full)

    def write_average(self, save: Callable[[str, Any], None]) -> None:
        """Save each column's mean as ``average_shap/<name>``."""
        full = self.full
        average = np.mean(full, axis=tuple(range(full.ndim - 1)))
        for index, name in enumerate(self.names()):
            save(f"average_shap/{name}", average[index])
