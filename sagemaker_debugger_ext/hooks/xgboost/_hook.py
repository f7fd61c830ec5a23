"""The XGBoost hook: a ``TrainingCallback`` with smdebug.xgboost's tensor names.

Per saved iteration: metrics (``train-rmse``), ``feature_importance/<type>/<feature>``
(weight, gain, cover, total_gain, total_cover, each normalised to sum 1),
``predictions`` and ``labels`` (of ``validation_data``), ``trees/<column>`` and
``hyperparameters/<name>``. Default schedule: every 10 iterations.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Self

import numpy as np
import xgboost as xgb
from xgboost.callback import TrainingCallback

from ..._exceptions import HookConfigError, field_error_message
from ...modes import ModeKeys
from .._collections import XGBOOST_BUILTIN_REGEXES, CollectionKeys
from .._current import set_hook
from .._hook import BaseHook
from .._save_config import SaveConfig, SaveConfigMode
from ._shap import ShapValues
from ._trees import round_trees

__all__ = ["Hook"]

IMPORTANCE_TYPES = ("weight", "gain", "cover", "total_gain", "total_cover")


def _load_data(data: Any, field: str) -> xgb.DMatrix | None:
    if data is None or isinstance(data, xgb.DMatrix):
        return data
    if isinstance(data, tuple) and len(data) == 2 and all(isinstance(x, str) for x in data):
        path, content_type = os.path.expanduser(data[0]), data[1].lower().rsplit("/", 1)[-1]
        if content_type not in ("csv", "libsvm", "x-libsvm"):
            raise HookConfigError(field_error_message(f"{field}[1]", "'csv' or 'libsvm'", data[1]), field=field)
        if not os.path.isfile(path):
            raise HookConfigError(field_error_message(f"{field}[0]", "an existing local file", data[0]), field=field)
        uri = f"{path}?format=csv&label_column=0" if content_type == "csv" else f"{path}?format=libsvm"
        return xgb.DMatrix(uri)
    raise HookConfigError(
        field_error_message(field, "an xgboost.DMatrix or a (file path, 'csv'|'libsvm') tuple", data), field=field
    )


class Hook(BaseHook, TrainingCallback):
    """Saves XGBoost training data as smdebug.xgboost did; pass it in ``callbacks=[hook]``.

    Args:
        hyperparameters: saved as ``hyperparameters/<name>`` (collection ``hyperparameters``).
        train_data: the DMatrix (or ``(path, 'csv'|'libsvm')``) whose SHAP values are saved
            as ``average_shap/*`` and ``full_shap/*`` (see :mod:`._shap`).
        validation_data: the DMatrix whose ``predictions`` and ``labels`` are saved.

    .. versionadded:: 0.1.0
    """

    builtin_collections: ClassVar[Mapping[str, list[str]]] = XGBOOST_BUILTIN_REGEXES
    default_include_collections: ClassVar[tuple[str, ...]] = (CollectionKeys.METRICS,)
    default_save_values: ClassVar[Mapping[str, Any]] = {"save_interval": 10}

    def __init__(
        self,
        out_dir: str | os.PathLike[str] | None = None,
        export_tensorboard: bool = False,
        tensorboard_dir: str | os.PathLike[str] | None = None,
        dry_run: bool = False,
        reduction_config: Any = None,
        save_config: SaveConfig | SaveConfigMode | Mapping[ModeKeys, SaveConfigMode] | None = None,
        include_regex: Iterable[str] | None = None,
        include_collections: Iterable[str] | None = None,
        save_all: bool = False,
        include_workers: str = "one",
        hyperparameters: Mapping[str, Any] | None = None,
        train_data: Any = None,
        validation_data: Any = None,
        **kwargs: Any,
    ) -> None:
        BaseHook.__init__(
            self, out_dir, export_tensorboard, tensorboard_dir, dry_run, None, save_config,
            include_regex, include_collections, save_all, include_workers, **kwargs,
        )  # fmt: skip
        TrainingCallback.__init__(self)
        self.hyperparameters = dict(hyperparameters or {})
        self.train_data = _load_data(train_data, "train_data")
        self.validation_data = _load_data(validation_data, "validation_data")
        set_hook(self)  # smdebug.xgboost.get_hook() returns the hook created last

    @classmethod
    def hook_from_config(cls, json_config_path: str | os.PathLike[str] | None = None) -> Self:
        """smdebug.xgboost's other name for :meth:`create_from_json_file`, kept because the
        SageMaker XGBoost 1.x images call it (``Hook.hook_from_config(json_config_path)``) and
        scripts copied from them do."""
        return cls.create_from_json_file(json_config_path)

    def after_iteration(self, model: xgb.Booster, epoch: int, evals_log: Mapping[str, Any]) -> bool:
        """Called by xgboost after each boosting round; never asks to stop training."""
        if self._disabled or self._closed:
            return False
        with self._guard():
            self._start_step(at=int(epoch))
            if self._due:
                self._save_iteration(model, int(epoch), evals_log)
            self._end_step()
        return False

    def after_training(self, model: xgb.Booster) -> xgb.Booster:
        """Called by xgboost at the end: waits for the last iterations' files and writes the
        collections JSON (the hook stays open)."""
        with self._guard():
            self._flush_writes()  # every iteration readable once xgboost.train() returns
            if self._prepared:
                self.export_collections()
        return model

    def close(self) -> None:
        """Write what is pending (scalars saved after ``xgboost.train()`` returned too), then
        close as every hook does.

        A scalar saved after training joins the last iteration's step when that step saved
        nothing else (smdebug writes it there); when the last step's files are already on
        disk, it is written at the next step number instead of rewriting them.
        """
        clock = self._clock
        if not self._closed and self._prepared and self._saves.scalars and not clock.open and clock.step >= 0:
            if self.last_saved_step == clock.step:
                clock.advance(mode=clock.step_mode)
            else:
                clock.open = True
        super().close()

    def _to_numpy(self, value: Any) -> tuple[np.ndarray, str | None]:
        """Scalars (metrics, importances, hyperparameters) become shape ``(1,)``, as smdebug stores them."""
        array, dtype = super()._to_numpy(value)
        return (array.reshape(1) if array.ndim == 0 else array), dtype

    def _due_named(self, name: str) -> bool:
        return any(c.name == name for c in self._due) or any(c.name == CollectionKeys.ALL for c in self._due)

    def _save_iteration(self, model: xgb.Booster, epoch: int, evals_log: Mapping[str, Any]) -> None:
        for pname, pvalue in self.hyperparameters.items():
            self._save_for_tensor(f"hyperparameters/{pname}", pvalue)
        for data_name, metrics in evals_log.items():
            for metric_name, history in metrics.items():
                value = history[-1]
                value = value[0] if isinstance(value, tuple) else value
                name = f"{data_name}-{metric_name}"
                self._assign(name, CollectionKeys.METRICS)  # also names smdebug's regex misses
                self._save_for_tensor(name, np.float64(value))
        if self.validation_data is not None:
            if self._due_named(CollectionKeys.PREDICTIONS):
                self._save_for_tensor("predictions", model.predict(self.validation_data))
            if self._due_named(CollectionKeys.LABELS):
                self._save_for_tensor("labels", self.validation_data.get_label())
        tree_booster = _booster_type(model) in ("gbtree", "dart")
        if tree_booster and self._due_named(CollectionKeys.FEATURE_IMPORTANCE):
            for itype in IMPORTANCE_TYPES:
                scores = {k: float(np.sum(v)) for k, v in model.get_score(importance_type=itype).items()}
                total = sum(scores.values()) or 1.0
                for feature, score in scores.items():
                    self._save_for_tensor(f"feature_importance/{itype}/{feature}", np.float64(score / total))
        if tree_booster and self._due_named(CollectionKeys.TREES):
            for column, values in round_trees(model, epoch).items():
                self._save_for_tensor(f"trees/{column}", values)
        self._save_shap(model)

    def _save_shap(self, model: xgb.Booster) -> None:
        full, average = self._due_named(CollectionKeys.FULL_SHAP), self._due_named(CollectionKeys.AVERAGE_SHAP)
        if not (full or average) or self.train_data is None:
            return
        shap = ShapValues(model, self.train_data)
        if full:
            shap.write_full(self._save_for_tensor)
        if average:
            shap.write_average(self._save_for_tensor)


def _booster_type(model: xgb.Booster) -> str:
    try:
        return str(json.loads(model.save_config())["learner"]["gradient_booster"]["name"])
    except (KeyError, ValueError):
        return "gbtree"
