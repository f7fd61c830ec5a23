"""The hook's collections API (smdebug's ``get_collection`` & co.) and its tensor -> collections cache.

:class:`HookCollections` is the part of :class:`~._hook.BaseHook` that looks collections up,
adds them, makes tensors members, and answers which included collections a tensor belongs to
(``_collections_of``, cached per name). Which collections are saved is fixed when saving starts
(``BaseHook._prepare``); a collection added or changed after that is completed with the hook's
save and reduction configs at once.
"""

from __future__ import annotations

from ._collections import Collection, CollectionManager
from ._reduction_config import ReductionConfig
from ._save_config import SaveConfig

__all__ = ["HookCollections"]


class HookCollections:
    """Collections lookup and membership for a hook (``BaseHook`` sets the state in ``__init__``)."""

    collection_manager: CollectionManager
    save_config: SaveConfig
    reduction_config: ReductionConfig
    _prepared: bool
    _dirty: bool
    _to_save: list[Collection]  # the included collections, fixed by BaseHook._prepare
    _tensor_colls: dict[str, tuple[Collection, ...]]  # a tensor name -> its included collections

    def get_collection(self, name: str, create: bool = True) -> Collection:
        """The collection ``name`` (created when missing)."""
        coll = self.collection_manager.get(name, create=create)
        if self._prepared:
            self._complete(coll)
        return coll

    def get_collections(self) -> dict[str, Collection]:
        """Every collection by name."""
        return self.collection_manager.collections()

    def add_collection(self, collection: Collection) -> None:
        """Add (or replace) a collection."""
        self.collection_manager.add(collection)
        if self._prepared:
            self._complete(collection)

    def _assign(self, tensor_name: str, collection_name: str) -> None:
        """Make ``tensor_name`` an explicit member of ``collection_name``."""
        known = self.collection_manager.find(collection_name) if self._prepared else None
        if known is not None and tensor_name in known.tensor_names:  # per-step calls: the usual answer
            return
        coll = self.get_collection(collection_name)
        if tensor_name not in coll.tensor_names:
            coll.add_tensor_name(tensor_name)
            self._tensor_colls.pop(tensor_name, None)
            self._forget_plans()
            self._dirty = True

    def _forget_plans(self) -> None:
        """Drop what a framework adapter cached about which tensors a step saves."""

    def _complete(self, coll: Collection) -> None:
        coll.complete(self.save_config, self.reduction_config)

    def _collections_of(self, name: str) -> tuple[Collection, ...]:
        colls = self._tensor_colls.get(name)
        if colls is None:
            colls = tuple(c for c in self._to_save if c.matches(name))
            for c in colls:
                if name not in c.tensor_names:
                    c.add_tensor_name(name)
                    self._dirty = True
            self._tensor_colls[name] = colls
        return colls
