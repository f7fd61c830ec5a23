"""A general decoder of ``Event`` records: scalars, histograms, tensors and plugin data.

:func:`decode_tensor_record` is the fast path for tensor records; this module decodes any
record the format writes (also TensorBoard's ``simple_value`` and ``HistogramProto``)
into plain Python values, for tools and tests.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from ._event_proto import _tensor
from ._wire import FIXED32, FIXED64, LEN, VARINT, iter_fields

__all__ = ["decode_event", "decode_histogram"]

_DOUBLE = struct.Struct("<d")
_FLOAT = struct.Struct("<f")
_HISTO_DOUBLES = {1: "min", 2: "max", 3: "num", 4: "sum", 5: "sum_squares"}


def _packed_doubles(buf: memoryview, start: int, stop: int) -> list[float]:
    return np.frombuffer(buf[start:stop], "<f8").tolist()  # type: ignore[no-any-return]


def decode_histogram(buf: bytes | memoryview, start: int = 0, stop: int | None = None) -> dict[str, Any]:
    """Decode a ``HistogramProto`` into ``{min, max, num, sum, sum_squares, bucket_limit, bucket}``."""
    view = memoryview(buf)
    out: dict[str, Any] = dict.fromkeys(_HISTO_DOUBLES.values(), 0.0)
    out["bucket_limit"], out["bucket"] = [], []
    for field, wtype, val, end in iter_fields(view, start, len(view) if stop is None else stop):
        if field in _HISTO_DOUBLES and wtype == FIXED64:
            out[_HISTO_DOUBLES[field]] = _DOUBLE.unpack_from(view, val)[0]
        elif field in (6, 7):
            key = "bucket_limit" if field == 6 else "bucket"
            if wtype == LEN:
                out[key].extend(_packed_doubles(view, val, end))
            elif wtype == FIXED64:
                out[key].append(_DOUBLE.unpack_from(view, val)[0])
    return out


def _plugin_data(view: memoryview, start: int, stop: int) -> list[tuple[str, str]]:
    pairs = []
    for field, wtype, val, end in iter_fields(view, start, stop):
        if field == 1 and wtype == LEN:
            name = content = ""
            for f2, w2, v2, e2 in iter_fields(view, val, end):
                if f2 == 1 and w2 == LEN:
                    name = bytes(view[v2:e2]).decode("utf-8", errors="replace")
                elif f2 == 2 and w2 == LEN:
                    content = bytes(view[v2:e2]).decode("utf-8", errors="replace")
            pairs.append((name, content))
    return pairs


def _value(view: memoryview, start: int, stop: int) -> dict[str, Any]:
    out: dict[str, Any] = {"tag": ""}
    for field, wtype, val, end in iter_fields(view, start, stop):
        if field == 1 and wtype == LEN:
            out["tag"] = bytes(view[val:end]).decode("utf-8", errors="replace")
        elif field == 2 and wtype == FIXED32:
            out["simple_value"] = _FLOAT.unpack_from(view, val)[0]
        elif field == 5 and wtype == LEN:
            out["histo"] = decode_histogram(view, val, end)
        elif field == 8 and wtype == LEN:
            out["tensor"] = _tensor(view, val, end)
        elif field == 9 and wtype == LEN:
            out["plugin_data"] = _plugin_data(view, val, end)
    return out


def decode_event(payload: bytes | memoryview) -> dict[str, Any]:
    """Decode a serialized ``Event`` into ``{"wall_time", "step", "values": [...]}``.

    Each value is a dict with ``tag`` and whichever of ``simple_value``, ``histo``,
    ``tensor`` (an ndarray) and ``plugin_data`` (``[(name, content)]``) it carries.

    Raises:
        CorruptRecordError: malformed protobuf.
        UnsupportedDTypeError: a tensor with an unknown DataType.
    """
    view = memoryview(payload)
    out: dict[str, Any] = {"wall_time": 0.0, "step": 0, "values": []}
    for field, wtype, val, end in iter_fields(view):
        if field == 1 and wtype == FIXED64:
            out["wall_time"] = _DOUBLE.unpack_from(view, val)[0]
        elif field == 2 and wtype == VARINT:
            out["step"] = val - (1 << 64) if val >= 1 << 63 else val
        elif field == 5 and wtype == LEN:
            for f2, w2, v2, e2 in iter_fields(view, val, end):
                if f2 == 1 and w2 == LEN:
                    out["values"].append(_value(view, v2, e2))
    return out
