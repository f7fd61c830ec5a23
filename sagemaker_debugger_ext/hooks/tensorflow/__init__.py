"""Private implementation of :mod:`sagemaker_debugger_ext.tensorflow` (needs TensorFlow/Keras 3)."""

from __future__ import annotations

__all__: list[str] = []
