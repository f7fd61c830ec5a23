"""``smdebug.xgboost.collection``: :class:`Collection` and :class:`CollectionKeys`."""

from __future__ import annotations

from ..hooks._collections import Collection, CollectionKeys

__all__ = ["Collection", "CollectionKeys"]
