"""``smdebug.tensorflow.collection``: the collection classes the Keras hook uses."""

from __future__ import annotations

from ..hooks._collections import Collection, CollectionKeys, CollectionManager

__all__ = ["Collection", "CollectionKeys", "CollectionManager"]
