"""smdebug's TensorFlow 1 hooks, which TensorFlow 2.16+ cannot run (no ``tf.estimator``,
no ``tf.train.SessionRunHook``): constructing one raises and says what to use instead."""

from __future__ import annotations

from typing import Any, NoReturn

from ..._exceptions import HookError

__all__ = ["EstimatorHook", "SessionHook"]

_MESSAGE = (
    "{name} is a TensorFlow 1 API (tf.Session / tf.estimator) that TensorFlow 2.16+ no longer has. "
    "Use KerasHook: model.fit(..., callbacks=[hook]), or hook.wrap_tape(tf.GradientTape()) in a custom "
    "training loop (see docs/hook.md)."
)


class _Removed:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _raise(type(self).__name__)

    @classmethod
    def create_from_json_file(cls, *args: Any, **kwargs: Any) -> NoReturn:
        _raise(cls.__name__)


def _raise(name: str) -> NoReturn:
    raise HookError(_MESSAGE.format(name=name))


class SessionHook(_Removed):
    """smdebug's ``tf.train.SessionRunHook`` hook; raises :class:`HookError` (TensorFlow 1 only)."""


class EstimatorHook(_Removed):
    """smdebug's ``tf.estimator`` hook; raises :class:`HookError` (TensorFlow 1 only)."""
