"""``smdebug.core.collection``: :class:`Collection` and :class:`CollectionKeys` (the hook's)."""

from __future__ import annotations

from ..hooks._collections import (
    NON_HISTOGRAM_COLLECTIONS,
    SCALAR_COLLECTIONS,
    Collection,
    CollectionKeys,
)

__all__ = ["NON_HISTOGRAM_COLLECTIONS", "SCALAR_COLLECTIONS", "Collection", "CollectionKeys"]
