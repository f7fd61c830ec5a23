"""``smdebug.core.collection_manager.CollectionManager``: build and export a collections file.

smdebug's stand-alone manager (no built-in collections; ``collections`` is a dict
attribute) on top of the hook's :class:`~sagemaker_debugger_ext.hooks.CollectionManager`;
the collections are the hook's :class:`~sagemaker_debugger_ext.core.collection.Collection`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from .._exceptions import ConfigValueError, SMDebugTypeError, SMDebugValueError, field_error_message
from ..format import write_collections_file
from ..hooks._collections import Collection
from ..hooks._collections import CollectionManager as _HookCollectionManager
from ..trials._collections import ALLOWED_KEYS, CollectionsFileError, parse_collections_document

__all__ = ["CollectionManager"]

_SUFFIX = "_collections.json"


def _smdebug_error(exc: CollectionsFileError, params: object) -> Exception:
    """smdebug's error for what the one parser refused: its own messages where it had one."""
    if exc.field == "keys" and isinstance(params, dict):
        return SMDebugValueError("allowed params for collection manager can only be one of " + ",".join(ALLOWED_KEYS))
    if exc.field == "_meta" and isinstance(params, dict):
        return SMDebugTypeError(f"meta should be a dict, got {type(params['_meta'])}")
    return SMDebugValueError(str(exc))


class CollectionManager(_HookCollectionManager):
    """smdebug's ``CollectionManager(collections=None, create_default=False)``."""

    def __init__(self, collections: Mapping[str, Collection] | None = None, create_default: bool = False) -> None:
        super().__init__({})
        self.collections: dict[str, Collection] = self._collections  # type: ignore[assignment]  # smdebug: a dict
        for coll in (collections or {}).values():
            self.add(coll)
        self._meta: dict[str, Any] = {"num_workers": 1}

    def create_collection(self, name: str, cls: type[Collection] = Collection) -> None:
        """Create an empty collection ``name`` unless it exists."""
        if name not in self._collections:
            self._collections[name] = cls(name)

    def get_collections(self) -> dict[str, Collection]:
        """The name -> collection dict."""
        return self._collections

    def add(self, arg: str | Collection) -> None:
        """Add a collection, or create an empty one by name."""
        if isinstance(arg, str):
            self.create_collection(arg)
        else:
            super().add(arg)

    def update_meta(self, meta: Mapping[str, Any]) -> None:
        """Merge ``meta`` into the file's ``_meta``.

        Raises:
            SMDebugTypeError: ``meta`` is not a dict (smdebug's message).
        """
        if not isinstance(meta, Mapping):
            msg = f"meta should be a dict, got {type(meta)}"
            raise SMDebugTypeError(msg)
        self._meta.update(meta)

    def get_num_workers(self) -> int:
        """``_meta.num_workers``."""
        return int(self._meta["num_workers"])

    def set_num_workers(self, num_workers: int) -> None:
        """Set ``_meta.num_workers``."""
        self._meta["num_workers"] = int(num_workers)

    def to_json_dict(self) -> dict[str, Any]:
        """``{"collections": {...}, "_meta": {...}}``, the collections file's document."""
        return {"collections": {n: c.to_json_dict() for n, c in self._collections.items()}, "_meta": dict(self._meta)}

    def export(self, out_dir: str | os.PathLike[str], filename: str) -> None:
        """Write ``<out_dir>/collections/000000000/<filename>`` (``<worker>_collections.json``).

        Raises:
            ConfigValueError: ``filename`` does not end in ``_collections.json``.
        """
        if not isinstance(filename, str) or not filename.endswith(_SUFFIX) or filename == _SUFFIX:
            msg = field_error_message("filename", f"'<worker>{_SUFFIX}'", filename)
            raise ConfigValueError(msg, field="filename", value=filename)
        name = filename[: -len(_SUFFIX)]
        write_collections_file(out_dir, name, self.to_json_dict(), self.get_num_workers(), meta=self._meta)

    @classmethod
    def load(
        cls, filename: str | os.PathLike[str], collection_class: type[Collection] = Collection
    ) -> CollectionManager | None:
        """Read a collections file (:meth:`load_from_string` of its text)."""
        with open(filename, encoding="utf-8") as fh:
            return cls.load_from_string(fh.read(), collection_class)

    @classmethod
    def load_from_string(
        cls, s: str | Mapping[str, Any] | None, collection_class: type[Collection] = Collection
    ) -> CollectionManager | None:
        """Parse a collections document (a JSON string or its dict) with the trial's parser.

        ``None`` (or ``"None"``) gives ``None``, as smdebug.

        Raises:
            json.JSONDecodeError: ``s`` is not JSON.
            SMDebugValueError: ``s`` is neither a string nor a dict; a top-level key other than
                ``collections`` and ``_meta`` (smdebug's message); a malformed collection.
            KeyError: ``collections`` or ``_meta`` is missing (as smdebug).
            SMDebugTypeError: ``_meta`` is not a dict (smdebug's message).
        """
        if s is None or s == "None":
            return None
        if isinstance(s, str):
            params = json.loads(s)
        elif isinstance(s, Mapping):
            params = dict(s)
        else:
            msg = "parameter must be either str or dict"
            raise SMDebugValueError(msg)
        if params is None:
            return None
        try:
            doc = parse_collections_document(params, "<string>")
        except CollectionsFileError as exc:
            raise _smdebug_error(exc, params) from None
        if doc.missing:
            raise KeyError(doc.missing[0])
        cm = cls()
        for body in doc.bodies.values():
            cm.add(collection_class.from_dict(body))
        cm.update_meta(doc.meta)
        return cm

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _HookCollectionManager):
            return NotImplemented
        return self._collections == other._collections

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<class CollectionManager: collection_names={list(self._collections)}>"
