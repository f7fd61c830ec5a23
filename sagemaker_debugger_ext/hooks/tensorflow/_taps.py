"""Values that exist only inside Keras' traced step: gradients, layer inputs/outputs, the
batch's inputs, labels and predictions.

The hook wraps (per instance, never the class) the optimizer's ``apply``, each top-level
layer's ``call`` and the model's ``compute_metrics``. In eager code the values are saved at
once. In Keras' traced steps (TensorFlow backend) they are collected while the step is traced
and handed over by one ``tf.numpy_function`` at its end, in the step function that runs only
on steps that save (``_steps.py``). Taps traced outside a Keras step (a custom loop) put a
``tf.numpy_function`` behind a ``tf.cond`` on the hook's flag variable, so steps that save
nothing pay one branch; on the JAX backend a host callback hands the values over. Under
``MirroredStrategy`` only replica 0's values are kept (one worker file set).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from .._collections import Collection, CollectionKeys
from ._activations import activation_collections, activation_of
from ._graph import call_at_runtime, in_graph
from ._naming import gradient_name, layer_tensor_name, model_io_names
from ._steps import WRAPPED as _WRAPPED
from ._steps import replica_id, traced_step

__all__ = ["TapsMixin"]

# what a value caught by the taps can be saved into: the taps' own collections and ``all``
# (smdebug on TF >= 2.6 saved none of these values in fit: a collection of the user's never
# made it save one; docs/migration.md)
_CAUGHT_INTO = frozenset({
    CollectionKeys.GRADIENTS, CollectionKeys.LAYERS, CollectionKeys.INPUTS, CollectionKeys.OUTPUTS,
    CollectionKeys.RELU_OUTPUT, CollectionKeys.RELU_INPUT, CollectionKeys.TANH_INPUT, CollectionKeys.SIGMOID_INPUT,
    CollectionKeys.ALL,
})  # fmt: skip

_assign_variable = tf.raw_ops.AssignVariableOp


def _flat_tensors(value: Any) -> tuple[list[Any], bool]:
    """The tensors in ``value`` (nested structures flattened) and whether it was nested."""
    flat = [v for v in keras.tree.flatten(value) if keras.ops.is_tensor(v) or isinstance(v, np.ndarray)]
    return flat, not (keras.ops.is_tensor(value) or isinstance(value, np.ndarray))


def _jax_traced(values: Sequence[Any]) -> bool:
    """Whether ``values`` are JAX tracers (Keras' jitted step on the JAX backend)."""
    if keras.backend.backend() != "jax":
        return False
    import jax

    return any(isinstance(v, jax.core.Tracer) for v in values)


class TapsMixin:
    """The KerasHook's taps (needs ``_tap_save(name, array, collection)`` and ``_due``)."""

    _due: Any
    _flag: tf.Variable | None
    _flag_value: bool  # the flag's value, or the one it is made with
    _flag_states: tuple[tf.Tensor, tf.Tensor]
    _tap_lock: threading.Lock
    _tapped: set[str]
    _assign: Callable[[str, str], None]  # BaseHook's
    _write_for: Callable[..., None]  # BaseHook's
    _dirty: bool

    def _tap_save(
        self, name: str, array: Any, collection: str | None, private: bool = False, caught: bool = False
    ) -> None:  # pragma: no cover
        raise NotImplementedError

    def _save_caught(self, name: str, value: Any, private: bool) -> None:
        """Save a caught value into its due collections among ``_CAUGHT_INTO``."""
        if colls := self._caught_collections(name):
            self._write_for(name, value, colls, private)

    def _caught_collections(self, name: str) -> list[Collection]:
        """The due collections among ``_CAUGHT_INTO`` that a caught value ``name`` goes to,
        each listing ``name`` from now on."""
        colls = [c for c in self._due if c.name in _CAUGHT_INTO and c.matches(name)]
        for coll in colls:
            if name not in coll.tensor_names:
                coll.add_tensor_name(name)
                self._dirty = True
        return colls

    def _record_activation(self, names: Sequence[str], collections: Sequence[str]) -> bool:
        """List ``names`` in those of ``collections`` that are saved; whether any is."""
        saved = {c.name for c in getattr(self, "_to_save", ())} & set(collections)
        for cname in sorted(saved):
            for name in names:
                self._assign(name, cname)
        return bool(saved)

    # --- the runtime switch of taps traced outside a Keras step -----------------------------------
    def _taps_flag(self) -> tf.Variable:
        """The flag, made when the first such tap is traced (none in ``fit``: no switching)."""
        if self._flag is None:
            with tf.init_scope():
                self._flag = tf.Variable(self._flag_value, trainable=False, name="sagemaker_debugger_ext_taps",
                                         dtype=tf.bool)  # fmt: skip
                # made once: converting a Python bool at each switch costs more than the assignment
                self._flag_states = (tf.constant(False), tf.constant(True))
        return self._flag

    def _set_taps(self, on: bool) -> None:
        flag = self._flag
        if flag is None:
            self._flag_value = on
        elif on != self._flag_value:
            if not isinstance(flag, tf.distribute.DistributedValues):
                # the op itself: Variable.assign's Python is a large part of the step that
                # switches the taps (twice per saved step; docs/hook.md, "Measurements")
                _assign_variable(resource=flag.handle, value=self._flag_states[on])
            else:  # a distributed variable (MirroredStrategy) assigns all its components
                flag.assign(self._flag_states[on], read_value=False)
            self._flag_value = on

    def _tap(self, names: Sequence[str], collection: str | None, tensors: Sequence[Any]) -> Any:
        """Save ``tensors`` as ``names`` now (eager) or when the graph runs, into the hook's
        collections only (``caught``: never a collection of the user's, docs/migration.md).

        Nothing in the traced step waits on the tap: ``tf.function``'s automatic control
        dependencies run every stateful op (the tap's ``numpy_function``) before the call
        returns. Making the layer's output depend on the tap (an identity under a control
        dependency) would hold the next layer back until the branch had run (its cost:
        docs/hook.md, "Measurements behind the hook's design")."""
        if _jax_traced(tensors):  # the values arrive through a host callback when the step runs
            import jax

            names = list(names)

            def deliver_jax(*arrays: Any) -> None:
                for name, array in zip(names, arrays, strict=True):
                    self._tap_save(name, np.asarray(array), collection, caught=True)

            jax.debug.callback(deliver_jax, *tensors)
            return None
        if not in_graph():
            if any(isinstance(t, keras.KerasTensor) for t in tensors):  # symbolic build: no values
                return None
            for name, value in zip(names, tensors, strict=True):
                self._tap_save(name, value, collection, caught=True)
            return None
        step, when = traced_step(self), None
        if step is None:  # traced outside a Keras step (a custom loop): behind the flag
            when = self._taps_flag()
        elif not step.tapped:  # the plain variant of the step (see _steps.py)
            return None
        elif step.graph is tf.compat.v1.get_default_graph():
            step.collect(names, collection, tensors)  # handed over at the step's end
            return None
        names = list(names)

        def deliver(replica: np.ndarray, *arrays: np.ndarray) -> None:
            if int(replica) != 0:
                return
            for name, array in zip(names, arrays, strict=True):
                self._tap_save(name, array, collection, caught=True)

        return call_at_runtime(deliver, [replica_id(), *tensors], when=when)

    # --- gradients ------------------------------------------------------------------------
    def wrap_optimizer(self, optimizer: Any) -> Any:
        """Capture the gradients ``optimizer`` applies (collection ``gradients``) without
        changing the optimization; returns the same optimizer object."""
        if getattr(optimizer.apply, _WRAPPED, None) is not None:
            return optimizer
        original: Callable[..., Any] = optimizer.apply

        def apply(grads: Any, trainable_variables: Any = None) -> Any:
            grads = list(grads)
            variables = list(trainable_variables) if trainable_variables is not None else None
            if variables is None:  # Keras' own call path: apply_gradients(zip(...)) passes both
                return original(grads, trainable_variables)
            pairs = [(g, v) for g, v in zip(grads, variables, strict=False) if g is not None]
            result = original(grads, trainable_variables)
            # after the update in program order: the tap (stateful) would otherwise hold the
            # optimizer's variable updates back (automatic control dependencies); the gradient
            # tensors are the same values either way
            self._tap([gradient_name(v) for _, v in pairs], CollectionKeys.GRADIENTS, [g for g, _ in pairs])
            return result

        setattr(apply, _WRAPPED, original)
        optimizer.apply = apply
        if keras.backend.backend() == "jax":  # Keras' jitted JAX step calls stateless_apply
            original_stateless = optimizer.stateless_apply

            def stateless_apply(optimizer_variables: Any, grads: Any, trainable_variables: Any) -> Any:
                variables = list(getattr(optimizer, "_trainable_variables", None) or [])
                pairs = [(g, v) for g, v in zip(grads, variables, strict=False) if g is not None]
                self._tap([gradient_name(v) for _, v in pairs], CollectionKeys.GRADIENTS, [g for g, _ in pairs])
                return original_stateless(optimizer_variables, grads, trainable_variables)

            setattr(stateless_apply, _WRAPPED, original_stateless)
            optimizer.stateless_apply = stateless_apply
        self.optimizer = optimizer
        return optimizer

    # --- layers and model inputs/outputs --------------------------------------------------------
    def _wrap_layer(self, layer: Any) -> None:
        if getattr(layer.call, _WRAPPED, None) is not None:
            return
        original = layer.call
        lname = layer.name
        function, fused = activation_of(layer)
        if fused:
            self._wrap_activation(layer, function)

        def call(*args: Any, **kwargs: Any) -> Any:
            outputs = original(*args, **kwargs)
            ins, ins_nested = _flat_tensors(args[0] if args else next(iter(kwargs.values()), None))
            outs, outs_nested = _flat_tensors(outputs)
            names = [
                layer_tensor_name(lname, "input", i if ins_nested or len(ins) > 1 else None) for i in range(len(ins))
            ]
            out_names = [layer_tensor_name(lname, "output", i if outs_nested else None) for i in range(len(outs))]
            if function is not None:  # activation layers by class, as the PyTorch hook does
                if not fused:
                    self._record_activation(names, activation_collections(function, "input"))
                self._record_activation(out_names, activation_collections(function, "output"))
            self._tap([*names, *out_names], CollectionKeys.LAYERS, [*ins, *outs])
            return outputs

        setattr(call, _WRAPPED, original)
        layer.call = call

    def _wrap_activation(self, layer: Any, function: str | None) -> None:
        """Tap the input of ``layer``'s fused activation as ``<layer>/activation_inputs``
        (only when one of its activation collections is saved)."""
        name = layer_tensor_name(layer.name, "activation_input", None)
        if not self._record_activation([name], activation_collections(function, "input")):
            return
        original = layer.activation

        def activation(x: Any, *args: Any, **kwargs: Any) -> Any:
            self._tap([name], None, [x])
            return original(x, *args, **kwargs)

        setattr(activation, _WRAPPED, original)
        activation.__name__ = getattr(original, "__name__", "activation")
        layer.activation = activation

    def _wrap_model_io(self, model: Any) -> None:
        if getattr(model.compute_metrics, _WRAPPED, None) is not None:
            return
        original = model.compute_metrics

        def compute_metrics(x: Any, y: Any, y_pred: Any, sample_weight: Any = None, **kwargs: Any) -> Any:
            for prefix, coll, value in (("inputs", CollectionKeys.INPUTS, x), ("labels", CollectionKeys.OUTPUTS, y),
                                        ("predictions", CollectionKeys.OUTPUTS, y_pred)):  # fmt: skip
                if value is None:
                    continue
                flat, nested = _flat_tensors(value)
                self._tap(model_io_names(prefix, len(flat), nested), coll, flat)
            return original(x, y, y_pred, sample_weight, **kwargs)

        setattr(compute_metrics, _WRAPPED, original)
        model.compute_metrics = compute_metrics
