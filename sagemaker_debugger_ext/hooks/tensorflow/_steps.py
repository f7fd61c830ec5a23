"""Keras' traced step functions, made twice: with the hook's taps and without (TensorFlow).

The hook wraps the model's ``train_step``/``test_step``/``predict_step`` (per instance) and
makes each of the model's step functions (``model.train_function`` ...) twice:

- a *tapped* one: the taps traced inside the step (layer inputs and outputs, gradients, the
  batch's inputs, labels and predictions) and, at the step's end, the values of the model's
  variables (in training also the optimizer's) go to the hook through one
  ``tf.numpy_function`` at the step's end;
- a *plain* one, traced without any of them: the model's own graph.

At each batch's begin the hook puts the tapped function in place when something is due at
that step, else the plain one, so steps that save nothing run the model's own graph and no
variable is switched. A function is traced when it is first called, and it is called only
on steps of its kind: the plain one (also when it is retraced, for a new input shape) on a
step that saves nothing, the tapped one on a step that saves. Taps in graphs nested in a
step (a ``tf.cond`` branch, a loop body, an inner ``tf.function``) cannot hand their tensors
out of that graph and make a call of their own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from ...modes import ModeKeys
from ._device_reductions import save_reduced, split_for_device
from ._graph import call_at_runtime, in_graph

__all__ = ["StepFunctionsMixin", "StepTaps", "traced_step"]

WRAPPED = "_sagemaker_debugger_ext_original"
_KINDS = {ModeKeys.TRAIN: "train", ModeKeys.EVAL: "test", ModeKeys.PREDICT: "predict"}
_tracing = threading.local()  # .steps: the StepTaps of the steps being traced on this thread


class StepTaps:
    """A Keras step while it is traced: whether it gets the taps, and those collected."""

    __slots__ = ("graph", "hook", "names", "tapped", "tensors")

    def __init__(self, hook: Any, graph: Any, tapped: bool) -> None:
        self.hook, self.graph, self.tapped = hook, graph, tapped
        self.names: list[tuple[str, str | None]] = []
        self.tensors: list[Any] = []

    def collect(self, names: Sequence[str], collection: str | None, tensors: Sequence[Any]) -> None:
        """Hand ``tensors`` over at the step's end as ``names``."""
        self.names.extend((name, collection) for name in names)
        self.tensors.extend(tensors)


def _tracing_steps() -> list[StepTaps]:
    steps: list[StepTaps] | None = getattr(_tracing, "steps", None)
    if steps is None:
        steps = _tracing.steps = []
    return steps


def traced_step(hook: Any) -> StepTaps | None:
    """The innermost step of ``hook``'s model being traced on this thread, if any."""
    for step in reversed(_tracing_steps()):
        if step.hook is hook:
            return step
    return None


def replica_id() -> Any:
    """This replica's number in the traced step (0 outside a distribution strategy)."""
    ctx = tf.distribute.get_replica_context()
    rid = 0 if ctx is None else ctx.replica_id_in_sync_group
    return tf.cast(rid, tf.int32) if tf.is_tensor(rid) else tf.constant(int(rid), tf.int32)


class StepFunctionsMixin:
    """The KerasHook's plain and tapped step functions (needs ``_tap_save``)."""

    _trace_taps = False  # whether a step traced now is the tapped variant
    #: bytes the traced steps handed to the host so far (values, or only their reductions)
    handed_over_bytes = 0
    _step_functions: dict[str, tuple[Any, Any, Any]]  # kind -> (model, plain, tapped)
    _variables_delivered: bool

    def _tap_save(
        self, name: str, array: Any, collection: str | None, private: bool = False, caught: bool = False
    ) -> None:  # pragma: no cover
        raise NotImplementedError

    def _step_variables(self, model: Any, method: str) -> list[tuple[str, tf.Variable]]:  # pragma: no cover
        raise NotImplementedError

    def _wrap_steps(self, model: Any) -> None:
        """Wrap ``model``'s step methods (TensorFlow backend; once per model)."""
        if keras.backend.backend() != "tensorflow":
            return
        for kind in _KINDS.values():
            method = f"{kind}_step"
            original = getattr(model, method, None)
            if original is not None and getattr(original, WRAPPED, None) is None:
                setattr(model, method, self._step_wrapper(model, original, method))

    def _step_wrapper(self, model: Any, original: Callable[[Any], Any], method: str) -> Callable[[Any], Any]:
        def step(data: Any) -> Any:
            if not in_graph():
                return original(data)
            taps, steps = StepTaps(self, tf.compat.v1.get_default_graph(), self._trace_taps), _tracing_steps()
            steps.append(taps)
            try:
                outputs = original(data)
            finally:
                steps.remove(taps)
            if taps.tapped:
                self._hand_over(taps, self._step_variables(model, method))
            return outputs

        setattr(step, WRAPPED, original)
        return step

    def _hand_over(self, taps: StepTaps, variables: Sequence[tuple[str, tf.Variable]]) -> None:
        """Put the call that hands ``taps``' values, and the values ``variables`` hold at the
        step's end, to the hook into the step's graph (the values of reductions-only
        collections as their reductions, computed in the graph: ``_device_reductions``)."""
        if not taps.tensors and not variables:
            return
        # a variable read after the step's updates in program order: tf.function orders it
        # after them (automatic control dependencies), so it is the step's end value
        entries = [(name, coll, True, t) for (name, coll), t in zip(taps.names, taps.tensors, strict=True)]
        raw, reduced = split_for_device(self, [*entries, *((name, None, False, var) for name, var in variables)])
        read_variables, count = bool(variables), len(raw)

        def deliver(replica: np.ndarray, *arrays: np.ndarray) -> None:
            if int(replica) != 0:  # MirroredStrategy: replica 0's values only
                return
            self.handed_over_bytes += sum(a.nbytes for a in arrays)
            for (name, collection, caught, _), array in zip(raw, arrays[:count], strict=True):
                self._tap_save(name, array, collection, True, caught)  # TensorFlow's buffers: not copied
            for (ops, items, _), table in zip(reduced, arrays[count:], strict=True):
                for (name, collection, caught, shape, dtype), row in zip(items, table, strict=True):
                    save_reduced(self, name, collection, caught, ops, row, shape, dtype)
            self._variables_delivered = read_variables

        call_at_runtime(deliver, [replica_id(), *(value for *_, value in raw), *(table for *_, table in reduced)])

    def _make_step_functions(self, model: Any, mode: ModeKeys) -> None:
        """At a mode's begin: make ``model``'s plain and tapped function for ``mode``, unless
        the one in place is still one of them (compiling again makes new ones)."""
        kind = _KINDS.get(mode)
        if kind is None or getattr(getattr(model, f"{kind}_step", None), WRAPPED, None) is None:
            return
        attr = f"{kind}_function"
        entry = self._step_functions.get(kind)
        current = getattr(model, attr, None)
        if entry is not None and entry[0] is model and current is not None and current in entry[1:]:
            return
        make = getattr(model, f"make_{kind}_function")
        made = []
        for _ in range(2):  # nothing is traced yet: each is traced at its first call
            make(force=True)
            made.append(getattr(model, attr))
        self._step_functions[kind] = (model, made[0], made[1])

    def _use_step_function(self, mode: ModeKeys, tapped: bool) -> None:
        """Put the tapped or the plain function of ``mode`` in place for the next step."""
        self._trace_taps = tapped
        kind = _KINDS.get(mode)
        entry = self._step_functions.get(kind) if kind is not None else None
        if entry is None:
            return
        model, plain, with_taps = entry
        function, attr = (with_taps if tapped else plain), f"{kind}_function"
        if getattr(model, attr, None) is not function:
            setattr(model, attr, function)

    def _plain_step_functions(self) -> None:
        """Put every plain function back in place (``train_on_batch`` and co. then run the
        model's own graph)."""
        self._trace_taps = False
        for kind, (model, plain, with_taps) in self._step_functions.items():
            if getattr(model, f"{kind}_function", None) is with_taps:
                setattr(model, f"{kind}_function", plain)
