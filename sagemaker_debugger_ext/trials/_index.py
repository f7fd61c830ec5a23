"""Parse index JSON files (docs/format.md) into plain records; reduction tensor names."""

from __future__ import annotations

import json
import re
from operator import itemgetter
from typing import Any, NamedTuple, TypeGuard

from ..exceptions import IndexReaderException
from ..format._layout import event_key as event_file_key
from ..modes import ModeKeys

__all__ = ["MAX_EXTENT", "REDUCTIONS_PREFIX", "IndexEntry", "IndexFile", "parse_index", "split_reduction_name"]

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


#: Ceiling for offsets and lengths read from an index (the real file size is checked at read time).
MAX_EXTENT = 1 << 48


def _is_int(value: object, low: int, high: int = MAX_EXTENT) -> TypeGuard[int]:
    return value.__class__ is int and low <= value < high


def _entry_ok(name: object, start: object, length: object) -> bool:
    return name.__class__ is str and bool(name) and _is_int(start, 0) and _is_int(length, 1)


def _fail(key: str, what: str) -> IndexReaderException:
    return IndexReaderException(f"index file {key!r} is malformed: {what}")


def _short(item: object) -> str:
    text = repr(item)
    return text if len(text) <= 200 else text[:200] + "..."


def _list_field(doc: dict[str, Any], field: str, key: str) -> list[Any]:
    value = doc.get(field)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail(key, f"{field!r} must be a list (got {type(value).__name__})")
    return value


_ENTRY = itemgetter("tensorname", "start_idx", "length")
_STR, _INT = {str}, {int}


def _entries_ok(tensors: list[tuple[str, int, int]]) -> bool:
    """Whether every ``(name, start, length)`` is well-typed and in range (exact types: what
    JSON gives; bools and floats are refused), checked column by column at C speed."""
    names, starts, lengths = zip(*tensors, strict=True)
    return (set(map(type, names)) == _STR and all(names) and set(map(type, starts)) == _INT
            and set(map(type, lengths)) == _INT and min(starts) >= 0 and max(starts) < MAX_EXTENT
            and min(lengths) >= 1 and max(lengths) < MAX_EXTENT)  # fmt: skip


def _checked_entries(payload: list[Any], key: str) -> list[tuple[str, int, int]]:
    """The ``tensor_payload`` entries one by one: the first bad one is named in the error."""
    tensors: list[tuple[str, int, int]] = []
    append = tensors.append
    for item in payload:
        try:
            name, start, length = item["tensorname"], item["start_idx"], item["length"]
        except (KeyError, TypeError, IndexError):
            raise _fail(
                key, f"'tensor_payload' entries need tensorname, start_idx, length (got {_short(item)})"
            ) from None
        if not _entry_ok(name, start, length):
            raise _fail(key, f"bad 'tensor_payload' entry {_short(item)} (tensorname: a non-empty string, "
                             f"start_idx: an int in [0, 2**48), length: an int in [1, 2**48))")  # fmt: skip
        append((name, start, length))
    return tensors


# The index files both writers produce (``json.dumps`` of meta, tensor payload and an empty shape
# payload), recognised in three parts: the head up to the payload, the payload, the tail. Strings are
# ASCII without escapes or control characters and ints have no leading zeros and stay below 10**14
# (< MAX_EXTENT), so a file made of the three is valid JSON whose fields pass every check below. A
# payload is matched once and remembered: the files of one worker mostly repeat the previous step's.
_TEXT = rb'[^"\\\x00-\x1f\x80-\xff]'
_HEAD = re.compile(
    rb'\{"meta": \{"mode": "(TRAIN|EVAL|PREDICT|GLOBAL)", "mode_step": (0|[1-9][0-9]{0,17}), '
    rb'"event_file_name": "(' + _TEXT + rb'*)"\}, "tensor_payload": \['
)
_TAIL = b'], "shape_payload": []}'
_ENTRY_TEXT = rb'\{"tensorname": "' + _TEXT + rb'+", "start_idx": (?:0|[1-9][0-9]{0,13}), "length": [1-9][0-9]{0,13}\}'
_ENTRIES = re.compile(_ENTRY_TEXT + rb"(?:, " + _ENTRY_TEXT + rb")*")
_ENTRY_FIELDS = re.compile(rb'\{"tensorname": "([^"]*)", "start_idx": ([0-9]*), "length": ([0-9]*)\}')
_PAYLOAD_CACHE_LIMIT = 64
_MODES = {m.name.encode("ascii"): m for m in ModeKeys}
Payloads = dict[bytes, list[tuple[str, int, int]]]


def _canonical(data: bytes, payloads: Payloads | None) -> tuple[ModeKeys, int, str, list[tuple[str, int, int]]] | None:
    """``(mode, mode_step, event_file_name, tensors)`` of an index file in the writers' own layout,
    else None (the JSON path parses and checks it)."""
    head = _HEAD.match(data)
    if head is None or not data.endswith(_TAIL):
        return None
    text = data[head.end() : len(data) - len(_TAIL)]
    tensors = payloads.get(text) if payloads is not None else None
    if tensors is None:
        if _ENTRIES.fullmatch(text) is None:
            return None
        tensors = [(n.decode("ascii"), int(a), int(b)) for n, a, b in _ENTRY_FIELDS.findall(text)]
        if payloads is not None:
            if len(payloads) >= _PAYLOAD_CACHE_LIMIT:
                payloads.clear()
            payloads[text] = tensors
    mode, mode_step, event_key = head.groups()
    return _MODES[mode], int(mode_step), event_key.decode("ascii"), tensors


def parse_index(data: bytes, key: str, step: int, worker: str, payloads: Payloads | None = None) -> IndexFile:
    """Parse the bytes of index file ``key`` (of ``step``/``worker``, from its name).

    Every field is type-checked; offsets and lengths must be non-negative ints below
    :data:`MAX_EXTENT` (the reader checks them against the event file's real size before
    reading). ``meta.event_file_name`` must name this step's and worker's event file
    (``events/<step>/<step>_<worker>.tfevents``), so a stray index never points at another
    step's records. ``shape_payload`` entries without ``shape`` (older smdebug writers) are
    accepted and ignored.

    Raises:
        IndexReaderException: not JSON, or a field is missing, has the wrong type, or
            points outside this step's event file; the message names the file and entry.
    """
    fast = _canonical(data, payloads)
    if fast is not None:
        expected = event_file_key(step, worker)
        if fast[2] not in (expected, ""):  # "": smdebug's test helpers (see below)
            raise _fail(key, f"'meta.event_file_name' must be {expected!r}, this index's own event file "
                             f"(got {_short(fast[2])})")  # fmt: skip
        return IndexFile(step, worker, fast[0], fast[1], expected, fast[3], [])
    try:
        doc: Any = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise _fail(key, f"not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise _fail(key, f"'index' must be a JSON object (got {type(doc).__name__})")
    meta = doc.get("meta")
    if not isinstance(meta, dict) or not meta:
        raise _fail(key, f"'meta' must be a non-empty object (got {_short(meta)})")
    if "tensor_payload" not in doc and "shape_payload" not in doc:
        raise _fail(key, "'tensor_payload' or 'shape_payload' must be present")
    mode_name = meta.get("mode")
    mode = ModeKeys.__members__.get(mode_name) if isinstance(mode_name, str) else None
    if mode is None:
        raise _fail(key, f"'meta.mode' must be one of TRAIN, EVAL, PREDICT, GLOBAL (got {_short(mode_name)})")
    mode_step = meta.get("mode_step")
    if not _is_int(mode_step, 0, 1 << 63):
        raise _fail(key, f"'meta.mode_step' must be a non-negative int (got {_short(mode_step)})")
    event_key = meta.get("event_file_name")
    payload = _list_field(doc, "tensor_payload", key)
    try:  # the common case at C speed: every entry well-formed (the loop below finds and names a bad one)
        tensors: list[tuple[str, int, int]] = list(map(_ENTRY, payload))
    except (KeyError, TypeError, IndexError):
        tensors = _checked_entries(payload, key)
    if tensors and not _entries_ok(tensors):
        tensors = _checked_entries(payload, key)
    if tensors:
        expected = event_file_key(step, worker)
        if event_key == "":  # smdebug's own test helpers leave it empty: the index's own file, as smdebug reads it
            event_key = expected
        if event_key != expected:
            raise _fail(key, f"'meta.event_file_name' must be {expected!r}, this index's own event file "
                             f"(got {_short(event_key)})")  # fmt: skip
    shapes: list[tuple[str, tuple[int, ...]]] = []
    for item in _list_field(doc, "shape_payload", key):
        if not isinstance(item, dict) or not isinstance(item.get("tensorname"), str):
            raise _fail(key, f"bad 'shape_payload' entry {_short(item)} (an object with a string 'tensorname')")
        shape = item.get("shape")
        if shape is None:
            continue  # older smdebug writers: no shape recorded
        if not isinstance(shape, list) or not all(_is_int(d, 0) for d in shape):
            raise _fail(key, f"bad 'shape_payload' entry {_short(item)} ('shape': a list of non-negative ints)")
        shapes.append((item["tensorname"], tuple(shape)))
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
