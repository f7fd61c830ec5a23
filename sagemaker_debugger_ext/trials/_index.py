"""Parse index JSON files (reference §2.8) into plain records; reduction tensor names."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from .._modes import ModeKeys
from ..exceptions import IndexReaderException

__all__ = ["REDUCTIONS_PREFIX", "IndexEntry", "IndexFile", "parse_index", "split_reduction_name"]

REDUCTIONS_PREFIX = "smdebug/reductions/"


class IndexEntry(NamedTuple):
    """One tensor of an index: its name, and where its record is (None for shape-only)."""

    name: str
    start: int
    length: int


class IndexFile(NamedTuple):
    """The parsed content of one index file of (``step``, ``worker``)."""

    step: int
    worker: str
    mode: ModeKeys
    mode_step: int
    event_key: str | None
    tensors: list[tuple[str, int, int]]  # (name, start, length) of each record, as IndexEntry fields
    shapes: list[tuple[str, tuple[int, ...]]]


def _entry_ok(name: object, start: object, length: object) -> bool:
    return isinstance(name, str) and isinstance(start, int) and isinstance(length, int) and start >= 0 and length >= 16


def _fail(key: str, what: str) -> IndexReaderException:
    return IndexReaderException(f"index file {key!r} is malformed: {what}")


def parse_index(data: bytes, key: str, step: int, worker: str) -> IndexFile:
    """Parse the bytes of index file ``key`` (of ``step``/``worker``, from its name).

    Raises:
        IndexReaderException: not JSON, or a field is missing or has the wrong type.
    """
    try:
        doc: Any = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(key, f"not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise _fail(key, f"'index' must be a JSON object (got {type(doc).__name__})")
    meta = doc.get("meta")
    if not isinstance(meta, dict) or not meta:
        raise _fail(key, f"'meta' must be a non-empty object (got {meta!r})")
    if "tensor_payload" not in doc and "shape_payload" not in doc:
        raise _fail(key, "'tensor_payload' or 'shape_payload' must be present")
    try:
        mode = ModeKeys[meta["mode"]]
    except (KeyError, TypeError):
        raise _fail(key, f"'meta.mode' must be one of TRAIN, EVAL, PREDICT, GLOBAL (got {meta.get('mode')!r})") from None
    mode_step = meta.get("mode_step")
    if isinstance(mode_step, bool) or not isinstance(mode_step, int) or mode_step < 0:
        raise _fail(key, f"'meta.mode_step' must be a non-negative int (got {mode_step!r})")
    event_key = meta.get("event_file_name")
    tensors: list[tuple[str, int, int]] = []
    append = tensors.append
    for item in doc.get("tensor_payload") or ():
        try:
            name, start, length = item["tensorname"], item["start_idx"], item["length"]
        except (KeyError, TypeError):
            raise _fail(key, f"'tensor_payload' entries need tensorname, start_idx, length (got {item!r})") from None
        # exact-type test first (what JSON gives); the isinstance test keeps subclasses (bool) as before
        if (name.__class__ is not str or start.__class__ is not int or length.__class__ is not int
                or start < 0 or length < 16) and not _entry_ok(name, start, length):  # fmt: skip
            raise _fail(key, f"bad 'tensor_payload' entry {item!r}")
        append((name, start, length))
    if tensors and not isinstance(event_key, str):
        raise _fail(key, f"'meta.event_file_name' must be a string (got {event_key!r})")
    shapes: list[tuple[str, tuple[int, ...]]] = []
    for item in doc.get("shape_payload") or ():
        try:
            shapes.append((str(item["tensorname"]), tuple(int(d) for d in item["shape"])))
        except (KeyError, TypeError, ValueError):
            raise _fail(key, f"bad 'shape_payload' entry {item!r}") from None
    return IndexFile(step, worker, mode, mode_step, event_key if tensors else None, tensors, shapes)


def split_reduction_name(name: str) -> tuple[str, str, bool] | None:
    """Return ``(tensor, op, abs)`` for ``smdebug/reductions/[abs_]<op>/<tensor>``, else None."""
    if not name.startswith(REDUCTIONS_PREFIX):
        return None
    op, _, tensor = name[len(REDUCTIONS_PREFIX) :].partition("/")
    if not tensor:
        return None
    if op.startswith("abs_"):
        return tensor, op[4:], True
    return tensor, op, False
