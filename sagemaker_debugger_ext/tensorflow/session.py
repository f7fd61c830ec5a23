"""``smdebug.tensorflow.session``: TF1's ``SessionHook`` and ``EstimatorHook`` (they raise, naming the replacement)."""

from __future__ import annotations

from ..hooks.tensorflow._legacy import EstimatorHook, SessionHook

__all__ = ["EstimatorHook", "SessionHook"]
