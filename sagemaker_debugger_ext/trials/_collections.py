"""Collections as the reader sees them: parsed from the collections JSON (docs/format.md)."""

from __future__ import annotations

import json
import re
from typing import Any

import attrs

from .._exceptions import HookConfigError
from ..exceptions import IndexReaderException
from ..format._include_regex import compile_include_regex, include_items, name_matches

__all__ = [
    "ALLOWED_KEYS",
    "Collection",
    "CollectionsDocument",
    "CollectionsFileError",
    "decode_collections_json",
    "parse_collections_document",
    "parse_collections_file",
]


@attrs.define(kw_only=True, eq=True)
class Collection:
    """A saved collection: its tensors, regexes and (raw) configs, as the hook exported them.

    ``trial.collection("new")`` returns an empty one that :meth:`include` and
    :meth:`add_tensor_name` fill, to select tensors by name (as in smdebug).
    """

    name: str
    include_regex: tuple[str, ...] = ()
    tensor_names: frozenset[str] = frozenset()
    reduction_config: dict[str, Any] | None = None
    save_config: dict[str, Any] | None = None
    save_histogram: bool = True

    def matches(self, tensor_name: str) -> bool:
        """Whether ``tensor_name`` is listed or matches an include regex (``re.search``)."""
        return name_matches(tensor_name, self.tensor_names, (re.compile(p) for p in self.include_regex))

    def include(self, regex: str | list[str]) -> None:
        """Add one regex or a list of them (duplicates are ignored).

        Raises:
            HookConfigError: not a string, or not a valid regex (as the hook's Collection).
        """
        for item in include_items(regex):
            pattern = compile_include_regex(self.name, item, regex).pattern
            if pattern not in self.include_regex:
                self.include_regex = (*self.include_regex, pattern)

    def add_tensor_name(self, name: str) -> None:
        """Make ``name`` an explicit member."""
        self.tensor_names = self.tensor_names | {name}

    def has_tensor_name(self, name: str) -> bool:
        """Whether ``name`` is an explicit member."""
        return name in self.tensor_names

    def merged(self, other: Collection) -> Collection:
        """The union of two workers' views of the same collection."""
        return attrs.evolve(
            self,
            tensor_names=self.tensor_names | other.tensor_names,
            include_regex=self.include_regex + tuple(r for r in other.include_regex if r not in self.include_regex),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of the collections file."""
        return {
            "name": self.name,
            "include_regex": list(self.include_regex),
            "tensor_names": sorted(self.tensor_names),
            "reduction_config": self.reduction_config,
            "save_config": self.save_config,
            "save_histogram": self.save_histogram,
        }


ALLOWED_KEYS = ("collections", "_meta")
"""The top-level keys of a collections file (smdebug's ``CollectionManager`` refuses any other)."""


class CollectionsFileError(IndexReaderException):
    """A malformed collections file; ``field`` names the part: ``keys`` (a top-level key other
    than :data:`ALLOWED_KEYS`), ``collections``, ``_meta``, ``_meta.num_workers`` or a collection."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


@attrs.frozen
class CollectionsDocument:
    """One collections file, parsed once for the trial and for smdebug's ``CollectionManager``.

    ``bodies`` are the collections' JSON objects as written (for a ``collection_class.from_dict``),
    ``meta`` the ``_meta`` object, ``missing`` the :data:`ALLOWED_KEYS` the file lacks.
    """

    collections: dict[str, Collection]
    bodies: dict[str, dict[str, Any]]
    meta: dict[str, Any]
    missing: tuple[str, ...]


def _fail(key: str, what: str, field: str = "collections") -> CollectionsFileError:
    return CollectionsFileError(f"collections file {key!r} is malformed: {what}", field)


def _strings(key: str, cname: str, field: str, value: object) -> tuple[str, ...]:
    """A list of strings (a single string is taken as a one-item list, as smdebug does)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(key, f"collection {cname!r}: {field!r} must be a list of strings (got {value!r:.200})", cname)
    return tuple(value)


def _optional_dict(key: str, cname: str, field: str, value: object) -> dict[str, Any] | None:
    if value is not None and not isinstance(value, dict):
        raise _fail(key, f"collection {cname!r}: {field!r} must be an object or null (got {value!r:.200})", cname)
    return value


def decode_collections_json(data: bytes | str, key: str) -> object:
    """The JSON document of a collections file.

    Raises:
        CollectionsFileError: not valid JSON (names the file).
    """
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise _fail(key, f"not valid JSON ({exc})") from None


def parse_collections_file(data: bytes, key: str) -> tuple[dict[str, Collection], int]:
    """Parse a collections JSON; return ``({name: Collection}, num_workers)``.

    A file without ``_meta`` (or ``collections``) reads as one worker (no collections).

    Raises:
        CollectionsFileError: not JSON or not the documented shape; names the file and field.
    """
    doc = parse_collections_document(decode_collections_json(data, key), key)
    num_workers = doc.meta.get("num_workers", 1)
    if num_workers.__class__ is not int or not 1 <= num_workers <= 1 << 20:
        what = f"'_meta.num_workers' must be an int in [1, 2**20] (got {num_workers!r:.200})"
        raise _fail(key, what, "_meta.num_workers")
    return doc.collections, num_workers


def parse_collections_document(doc: object, key: str) -> CollectionsDocument:
    """Check a decoded collections document: the one parser of the trial and of smdebug's
    ``CollectionManager.load_from_string`` (``sagemaker_debugger_ext.core.collection_manager``).

    Top-level keys are only :data:`ALLOWED_KEYS` (as smdebug), ``_meta`` an object, and every
    collection field is type-checked (docs/format.md): ``include_regex`` and ``tensor_names``
    lists of strings, ``reduction_config``/``save_config`` objects or null, ``save_histogram`` a
    bool, each regex compiles. ``_meta``'s values are the caller's to check.

    Raises:
        CollectionsFileError: not the documented shape; names the file and field.
    """
    if not isinstance(doc, dict):
        raise _fail(key, f"the document must be an object (got {type(doc).__name__})", "keys")
    extra = [k for k in doc if k not in ALLOWED_KEYS]
    if extra:
        raise _fail(key, f"top-level keys {extra!r:.200} not allowed: only {', '.join(ALLOWED_KEYS)}", "keys")
    body_map = doc.get("collections", {})
    if not isinstance(body_map, dict):
        raise _fail(key, "'collections' must be an object")
    meta = doc.get("_meta", {})
    if not isinstance(meta, dict):
        raise _fail(key, f"'_meta' must be an object (got {meta!r:.200})", "_meta")
    out: dict[str, Collection] = {}
    for name, body in body_map.items():
        out[name] = _parse_collection(key, name, body)
    return CollectionsDocument(
        collections=out, bodies=body_map, meta=meta, missing=tuple(k for k in ALLOWED_KEYS if k not in doc)
    )


def _parse_collection(key: str, name: str, body: object) -> Collection:
    if not isinstance(body, dict):
        raise _fail(key, f"collection {name!r} must be an object", name)
    cname = body.get("name", name)
    if not isinstance(cname, str):
        raise _fail(key, f"collection {name!r}: 'name' must be a string (got {cname!r:.200})", name)
    histogram = body.get("save_histogram", True)
    if not isinstance(histogram, bool):
        raise _fail(key, f"collection {name!r}: 'save_histogram' must be a bool (got {histogram!r:.200})", name)
    regexes = _strings(key, name, "include_regex", body.get("include_regex"))
    try:
        for regex in regexes:
            compile_include_regex(cname, regex)
    except HookConfigError as exc:
        raise _fail(key, str(exc), name) from None
    return Collection(
        name=cname,
        include_regex=regexes,
        tensor_names=frozenset(_strings(key, name, "tensor_names", body.get("tensor_names"))),
        reduction_config=_optional_dict(key, name, "reduction_config", body.get("reduction_config")),
        save_config=_optional_dict(key, name, "save_config", body.get("save_config")),
        save_histogram=histogram,
    )
