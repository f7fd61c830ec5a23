"""``smdebug.tensorflow.keras``: ``from sagemaker_debugger_ext.tensorflow.keras import KerasHook`` (imports TensorFlow)."""

from __future__ import annotations

from ..hooks.tensorflow._keras_hook import KerasHook

__all__ = ["KerasHook"]
