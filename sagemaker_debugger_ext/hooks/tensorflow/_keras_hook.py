"""The Keras hook (smdebug.tensorflow's ``KerasHook``) on Keras 3.

A ``keras.callbacks.Callback``: every train/test/predict batch is a step (global step shared,
one step count per mode: ``fit`` TRAIN, its validation and ``evaluate`` EVAL, ``predict``
PREDICT). At a batch's end the hook saves Keras' logs (``loss``/``val_loss`` in ``losses``,
the other metrics in ``metrics``), the layers' variables (``<layer>/weights/<var>:0`` in
``weights``/``biases``) and, in TRAIN, the optimizer's variables. Values that exist only
inside the traced step come through taps (``_taps.py``): gradients, layer inputs/outputs,
model inputs/labels/predictions.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import keras
import numpy as np
import tensorflow as tf

from ...modes import ModeKeys
from .._arena import CopyArena
from .._collections import TF_BUILTIN_REGEXES, CollectionKeys
from .._context import TrainingContext
from .._hook import BaseHook
from . import _singleton
from ._context import context_from_environ
from ._graph import call_at_runtime, in_graph
from ._naming import model_io_names, optimizer_variable_name, weight_name
from ._steps import StepFunctionsMixin
from ._tape import TapeMixin
from ._taps import TapsMixin
from ._variables import VariableReader, tf_variable

__all__ = ["KerasHook"]

_LOSS_KEYS = frozenset({"loss", "val_loss"})
_OPTIMIZER_STATE = frozenset({"iteration:0", "learning_rate:0"})  # an optimizer's variables that are not slots
_ACTIVATION_COLLECTIONS = (CollectionKeys.RELU_OUTPUT, CollectionKeys.RELU_INPUT, CollectionKeys.TANH_INPUT,
                           CollectionKeys.SIGMOID_INPUT)  # fmt: skip  # filled by the layer taps (_activations)
_TAPPED = (CollectionKeys.GRADIENTS, CollectionKeys.LAYERS, CollectionKeys.INPUTS, CollectionKeys.OUTPUTS)


class KerasHook(TapsMixin, StepFunctionsMixin, TapeMixin, BaseHook, keras.callbacks.Callback):
    """Saves a Keras model's tensors while it trains; pass it in ``callbacks=[hook]``.

    Same constructor as ``smdebug.tensorflow.KerasHook``. Default collections: ``metrics``,
    ``losses``, ``sm_metrics`` (smdebug's). Gradients: ``hook.wrap_optimizer(optimizer)``
    (done automatically for ``model.optimizer`` at ``fit``) or ``hook.wrap_tape(tape)``.

    .. versionadded:: 0.1.0
    """

    copy_arena = CopyArena  # cheaper saved steps, measured (see hooks/_arena.py)
    reductions_keep_colon_index = True  # smdebug's TensorFlow hooks: smdebug/reductions/mean/dense/kernel:0
    builtin_collections: ClassVar[Mapping[str, list[str]]] = TF_BUILTIN_REGEXES
    default_include_collections: ClassVar[tuple[str, ...]] = (
        CollectionKeys.METRICS, CollectionKeys.LOSSES, CollectionKeys.SM_METRICS,
    )  # fmt: skip

    def _context_from_environ(self) -> TrainingContext:
        return context_from_environ(os.environ)  # TF_CONFIG's cluster too

    def _init_adapter(self) -> None:
        keras.callbacks.Callback.__init__(self)
        self.optimizer: Any = None
        self._flag: tf.Variable | None = None
        self._flag_value = False
        self._tap_lock = threading.Lock()
        self._tapped: set[str] = set()
        self._logged: set[str] = set()  # log keys saved in this step
        self._installed: set[int] = set()
        self._in_fit = False
        self._jax = keras.backend.backend() == "jax"
        self._weights: list[tuple[str, Any]] | None = None
        self._opt_vars: list[tuple[str, Any]] | None = None
        self._opt_owner: Any = None
        self._opt_count = 0  # len(optimizer.variables) when _opt_vars was made (slots appear at build)
        self._registered: Any = None  # register_model's model (its variables in custom loops)
        self._variable_reader = VariableReader()
        self._variables_delivered = False  # the step's hand-over read the variables (_steps.py)
        self._step_functions: dict[str, tuple[Any, Any, Any]] = {}
        self._init_tape()
        _singleton.set_hook(self)

    # --- Keras callback API -----------------------------------------------------------------------
    def on_train_begin(self, logs: Mapping[str, Any] | None = None) -> None:
        self._in_fit = True
        self._on_mode_begin(ModeKeys.TRAIN)

    def on_test_begin(self, logs: Mapping[str, Any] | None = None) -> None:
        self._on_mode_begin(ModeKeys.EVAL)

    def on_predict_begin(self, logs: Mapping[str, Any] | None = None) -> None:
        self._on_mode_begin(ModeKeys.PREDICT)

    def on_train_batch_begin(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._on_batch_begin(ModeKeys.TRAIN)

    def on_test_batch_begin(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._on_batch_begin(ModeKeys.EVAL)

    def on_predict_batch_begin(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._on_batch_begin(ModeKeys.PREDICT)

    def on_train_batch_end(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._on_batch_end(batch, logs)

    def on_test_batch_end(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._on_batch_end(batch, logs)

    def on_predict_batch_end(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._on_batch_end(batch, logs)

    def on_epoch_end(self, epoch: int, logs: Mapping[str, Any] | None = None) -> None:
        """The epoch's logs (``val_*``, and ``batch`` = the epoch) go into the last step, as
        smdebug (names that step already holds are kept); the step is then written."""
        if self._disabled or self._closed or not self._clock.open:
            return
        with self._guard():
            self._save_logs({**(logs or {}), "batch": epoch}, epoch_end=True)
            self._end_step()

    def on_train_end(self, logs: Mapping[str, Any] | None = None) -> None:
        self._in_fit = False
        self._finish_mode()

    def on_test_end(self, logs: Mapping[str, Any] | None = None) -> None:
        if not self._in_fit:  # fit's validation: the epoch's logs still go into this step
            self._finish_mode()

    def on_predict_end(self, logs: Mapping[str, Any] | None = None) -> None:
        self._finish_mode()

    # --- steps --------------------------------------------------------------------------------------
    def _on_mode_begin(self, mode: ModeKeys) -> None:
        if self._disabled or self._closed:
            return
        with self._guard():
            self.set_mode(mode)
            model = self.model
            if model is not None:
                self._install(model)
                optimizer = getattr(model, "optimizer", None)
                if optimizer is not None and self._wants(CollectionKeys.GRADIENTS):
                    self.wrap_optimizer(optimizer)  # compile() may have given the model a new one
                self._make_step_functions(model, mode)

    def _on_batch_begin(self, mode: ModeKeys) -> None:
        if not (self._trace_taps or self._flag_value) and self._quiet_step(mode):
            return  # nothing to switch: the plain step function is in place, no flag is on
        if not (self._disabled or self._closed):
            self._guarded(self._begin_batch, mode)  # every step: no context manager unless never_crash
        elif self._trace_taps:  # stopped saving (never_crash) in a saved step: the model's own graph
            self._plain_step_functions()

    def _begin_batch(self, mode: ModeKeys) -> None:
        self.set_mode(mode)
        self._start_step()
        self._tapped.clear()
        self._logged.clear()
        self._variables_delivered = False
        due = bool(self._due)
        self._use_step_function(mode, due)
        self._set_taps(due)

    def _on_batch_end(self, batch: int, logs: Mapping[str, Any] | None) -> None:
        if self._disabled or self._closed or not self._due:
            return
        with self._guard():
            if self._jax:  # the step's host callbacks (tapped values) have all run
                import jax

                jax.effects_barrier()
            if logs is not None:
                logs = {**logs, "batch": batch}  # smdebug saves the batch index as a metric
            self._save_logs(logs)
            model = self.model
            if model is not None and not self._variables_delivered:
                variables = self._model_weights(model)
                if self._clock.step_mode == ModeKeys.TRAIN:
                    variables = variables + self._optimizer_variables(model)
                self._save_variables(variables)

    def _save_variables(self, variables: list[tuple[str, Any]]) -> None:
        """Save the due ones of ``variables``, read together (one TensorFlow call, not two
        eager ops per variable)."""
        due = self._due
        todo = [
            (name, var, colls)
            for name, var in variables
            if name not in self._tapped and (colls := [c for c in self._collections_of(name) if c in due])
        ]  # a tape inside the step (wrap_tape in train_step) saved some already
        if not todo:
            return
        values = self._variable_reader.read([var for _, var, _ in todo])
        for (name, _, colls), value in zip(todo, values, strict=True):
            self._write_for(name, value, colls)

    def _step_variables(self, model: Any, method: str) -> list[tuple[str, tf.Variable]]:
        """The variables a traced Keras step hands over at its end, as the batch's end would
        read them (the model's weights, in training also the optimizer's), instead of one more
        TensorFlow call there; none (read at the batch's end) under a distribution strategy,
        with several steps per call, or for variables that are not plain TensorFlow ones."""
        if tf.distribute.has_strategy() or getattr(model, "steps_per_execution", 1) != 1:
            return []
        pairs = self._model_weights(model)
        if method == "train_step":
            pairs = pairs + self._optimizer_variables(model)
        plain = [(name, tf_variable(var)) for name, var in pairs]
        if any(var is None for _, var in plain):
            return []
        return plain

    def _finish_mode(self) -> None:
        if self._disabled or self._closed:
            return
        with self._guard():
            self._end_step()
            self._set_taps(False)
            self._plain_step_functions()

    # --- what a step saves ----------------------------------------------------------------------------
    def _save_logs(self, logs: Mapping[str, Any] | None, epoch_end: bool = False) -> None:
        """Keras' logs as smdebug saved them: shape ``(1,)``; batch values float32, epoch
        values float64, ``batch`` int64."""
        if not logs:
            return
        for key, value in logs.items():
            if key == "outputs":  # predict: the batch's predictions
                flat, nested = tf.nest.flatten(value), not isinstance(value, np.ndarray | tf.Tensor)
                for name, item in zip(model_io_names("predictions", len(flat), nested), flat, strict=True):
                    self._tap_save(name, item, CollectionKeys.OUTPUTS)
                continue
            if epoch_end and key in self._logged:
                continue
            self._logged.add(key)
            coll = CollectionKeys.LOSSES if key in _LOSS_KEYS else CollectionKeys.METRICS
            # smdebug saves the validation logs (val_loss, val_<metric>) with losses/metrics but
            # lists them in neither: its collections file is written before the first epoch ends
            validation = epoch_end and key.startswith("val_")
            if not validation:
                self._assign(key, coll)
            dtype = np.int64 if key == "batch" else np.float64 if epoch_end else np.float32
            value = np.asarray(keras.ops.convert_to_numpy(value), dtype=dtype).reshape(1)
            if epoch_end:  # always saved (smdebug's force_save), into its collections
                colls = [c for c in self._collections_of(key) if c in self._to_save]
                if validation:
                    colls += [c for c in self._to_save if c.name == coll and c not in colls]
                if colls:
                    self._write_for(key, value, colls)
            else:
                self._save_for_tensor(key, value)

    def _tap_save(
        self, name: str, value: Any, collection: str | None, private: bool = False, caught: bool = False
    ) -> None:
        """Save a tapped value (first replica, once per step) if one of its collections is due
        (``private``: an array of TensorFlow's handed to a ``tf.numpy_function``, kept
        without a copy: it holds the tensor's buffer, which TensorFlow never changes while it
        is shared; a variable's update writes a new buffer then). ``caught``: a value of the
        taps (gradients of a wrapped optimizer, layer and model inputs/outputs), saved only
        into the collections it was caught for and ``all``, never a regex of the user's."""
        self._tap_once(name, collection, self._save_caught if caught else self._save_for_tensor, name, value, private)

    def _tap_once(self, name: str, collection: str | None, save: Any, *args: Any) -> None:
        """Run ``save(*args)`` for the tapped value ``name`` if this step has not stored it yet
        and a collection is due (``collection``: the one it was tapped for, assigned first)."""
        if self._disabled or not self._clock.open or not self._due:
            return
        with self._tap_lock:
            if name in self._tapped:
                return
            self._tapped.add(name)
            if collection is not None:
                self._assign(name, collection)
            self._guarded(save, *args)

    def _model_weights(self, model: Any) -> list[tuple[str, Any]]:
        if self._weights is None:
            self._weights = [(weight_name(layer.name, v), v) for layer in model.layers for v in layer.weights]
        return self._weights

    def _optimizer_variables(self, model: Any) -> list[tuple[str, Any]]:
        opt = getattr(model, "optimizer", None) or self.optimizer
        if opt is None:
            return []
        if self._opt_vars is None or self._opt_owner is not opt or self._opt_count != len(opt.variables):
            self._opt_owner, self._opt_count = opt, len(opt.variables)  # compile() may give another optimizer
            pairs = [(optimizer_variable_name(opt, v), v) for v in opt.variables]
            if CollectionKeys.OPTIMIZER_VARIABLES not in self.include_collections:
                # slot variables (Adam's momentum/velocity: the model's size twice over) only
                # when optimizer_variables is asked for by name (docs/migration.md)
                pairs = [(n, v) for n, v in pairs if n.rsplit("/", 1)[-1] in _OPTIMIZER_STATE]
            self._opt_vars = pairs
            for name, _ in self._opt_vars:
                self._assign(name, CollectionKeys.OPTIMIZER_VARIABLES)
        return self._opt_vars

    def _to_numpy(self, value: Any) -> tuple[np.ndarray, str | None]:
        if isinstance(value, np.ndarray):
            return value, None
        if isinstance(value, tf.Variable | tf.Tensor) or hasattr(value, "path") or keras.ops.is_tensor(value):
            tf_value = isinstance(value, tf.Variable | tf.Tensor) or (
                hasattr(value, "path") and hasattr(value, "numpy")
            )
            array = np.asarray(value.numpy() if tf_value else keras.ops.convert_to_numpy(value))
            if array.dtype.name == "bfloat16":
                array = array.astype(np.float32)
            return array, None
        return super()._to_numpy(value)

    # --- installing the taps on a model ------------------------------------------------------------------
    def _wants(self, *collections: str) -> bool:
        """Whether the taps of ``collections`` are installed: only when one of them (or
        ``all``) is included. A collection of the user's (an ``include_regex``) matches what
        smdebug saved in ``fit`` from TF 2.6 on: weights, biases, logs, optimizer variables
        when asked for; not gradients and layer inputs/outputs (docs/migration.md)."""
        names = set(self.include_collections)
        return CollectionKeys.ALL in names or bool(names & set(collections))

    def register_model(self, model: Any) -> None:
        """Hook ``model``'s layers now (smdebug's ``register_model``): custom training loops
        (``wrap_tape``) then save what ``fit`` saves for it, e.g. layer inputs and outputs when
        ``layers`` is included (``fit`` does this itself). Checks the collections as a first step does."""
        self.set_model(model)
        self._registered = model
        self._guarded(self._install, model)

    def _install(self, model: Any) -> None:
        if id(model) in self._installed:
            return
        self._installed.add(id(model))
        if not self._prepared:
            self._prepare()
        self._weights = None
        if self._wants(CollectionKeys.LAYERS, *_ACTIVATION_COLLECTIONS):
            for layer in model.layers:
                self._wrap_layer(layer)
        if self._wants(CollectionKeys.INPUTS, CollectionKeys.OUTPUTS):
            self._wrap_model_io(model)
        if self._wants(*_TAPPED, *_ACTIVATION_COLLECTIONS):
            self._wrap_steps(model)  # TensorFlow: made again at each mode's begin (_steps.py)
            if keras.backend.backend() != "tensorflow":
                for kind in ("train", "test", "predict"):  # retrace with the taps in place
                    if getattr(model, f"{kind}_function", None) is not None:
                        getattr(model, f"make_{kind}_function")(force=True)

    # --- save_tensor / save_scalar inside tf.function ------------------------------------------------------
    def save_tensor(
        self, tensor_name: str, tensor_value: Any, collections_to_write: str | Iterable[str] = "default"
    ) -> Any:
        """Save a value (also a symbolic tensor inside ``tf.function``: saved when the graph runs)."""
        if in_graph() and tf.is_tensor(tensor_value):
            colls = collections_to_write if isinstance(collections_to_write, str) else list(collections_to_write)
            return call_at_runtime(lambda arr: BaseHook.save_tensor(self, tensor_name, arr, colls), [tensor_value])
        return BaseHook.save_tensor(self, tensor_name, tensor_value, collections_to_write)

    def save_scalar(self, name: str, value: Any, sm_metric: bool = False, timestamp: float | None = None) -> Any:
        """Save ``scalar/<name>`` (also inside ``tf.function``); ``sm_metric`` also lists it in ``sm_metrics``."""
        if in_graph() and tf.is_tensor(value):
            return call_at_runtime(lambda arr: self.save_scalar(name, arr, sm_metric, timestamp), [value])
        BaseHook.save_scalar(self, name, value, sm_metric, timestamp)
        if sm_metric:
            coll = self.collection_manager.get(CollectionKeys.SM_METRICS)
            if "scalar/" + name not in coll.tensor_names:
                coll.add_tensor_name("scalar/" + name)
                self._dirty = True
        return None

    def close(self) -> None:
        """Write the last step and finish the run (also done at interpreter exit)."""
        self._set_taps(False)
        self._plain_step_functions()
        self._close_tape()
        super().close()
        _singleton.forget(self)
