"""Hand-written protobuf encoders for the Event messages smdebug writes (docs/format.md, "Records").

Field order and presence follow protobuf 3's serializer exactly (ascending field numbers,
default scalars omitted, set sub-messages always present), so output is byte-identical
to smdebug 1.0.34's.
"""

from __future__ import annotations

import functools
import struct
from json.encoder import encode_basestring_ascii as _json_str

import numpy as np

from ._dtypes import STRING_KINDS, DataType, dtype_from_name, proto_dtype_for
from ._wire import encode_varint, len_field

__all__ = [
    "EncodedTensor",
    "encode_event_prefix",
    "encode_histogram_value",
    "encode_mode_metadata",
    "encode_scalar_value",
    "encode_summary_event",
    "encode_tensor",
    "numeric_record_layout",
    "to_array",
    "value_layout",
]

_PACK_DOUBLE = struct.Struct("<d").pack
_PACK_FLOAT = struct.Struct("<f").pack

MODE_STEP_PLUGIN = b"mode_step"
MODE_PLUGIN = b"mode"


def to_array(value: object) -> np.ndarray:
    """Convert a value to an ndarray the way smdebug's writer does.

    numpy arrays are kept; Python/numpy scalars become shape ``(1,)``; lists and tuples go
    through ``np.asarray``. Torch tensors and other array-likes are converted with
    ``np.asarray``.
    """
    if isinstance(value, np.ndarray):
        return value
    if np.isscalar(value):
        return np.array([value])
    return np.asarray(value)


def encode_mode_metadata(mode: int, mode_step: int) -> bytes:
    """Return ``Value.metadata`` (field 9) carrying smdebug's ``mode_step`` and ``mode``."""
    step = _MODE_STEP_KEY + len_field(2, str(mode_step).encode())
    return len_field(9, len_field(1, step) + _mode_plugin(int(mode)))


_MODE_STEP_KEY = len_field(1, MODE_STEP_PLUGIN)


@functools.cache
def _mode_plugin(mode: int) -> bytes:
    return len_field(1, len_field(1, MODE_PLUGIN) + len_field(2, str(mode).encode()))


def encode_event_prefix(wall_time: float, step: int) -> bytes:
    """Return ``Event.wall_time`` and ``Event.step`` fields (zero values omitted, as proto3)."""
    out = b"\x09" + _PACK_DOUBLE(wall_time) if wall_time != 0.0 else b""
    if step:
        out += b"\x10" + encode_varint(step)
    return out


class EncodedTensor:
    """A ``TensorProto`` split into a small head and the (possibly large) raw content.

    Attributes:
        head: encoded dtype and shape fields, plus the key/length of ``tensor_content``.
        content: the raw little-endian bytes (a memoryview avoids one copy), or b"".
        size: total encoded size of the TensorProto.
    """

    __slots__ = ("content", "head", "size")

    def __init__(self, head: bytes, content: bytes | memoryview) -> None:
        self.head = head
        self.content = content
        self.size = len(head) + (content.nbytes if isinstance(content, memoryview) else len(content))


def _shape_field(tag: str, shape: tuple[int, ...]) -> bytes:
    dims = []
    for size in shape:
        name = f"{tag}_{size}".encode()
        body = (b"\x08" + encode_varint(size) if size else b"") + b"\x12" + encode_varint(len(name)) + name
        dims.append(b"\x12" + encode_varint(len(body)) + body)
    shape_msg = b"".join(dims)
    return b"\x12" + encode_varint(len(shape_msg)) + shape_msg


@functools.lru_cache(maxsize=8192)
def _numeric_head(tag: str, shape: tuple[int, ...], proto: int, nbytes: int) -> bytes:
    head = (b"\x08" + encode_varint(proto) if proto else b"") + _shape_field(tag, shape)
    return head + b"\x22" + encode_varint(nbytes) if nbytes else head


def encode_tensor(tag: str, arr: np.ndarray, dtype: str | None = None) -> EncodedTensor:
    """Encode ``arr`` as a TensorProto named ``tag`` (dims are named ``<tag>_<size>``).

    Args:
        tag: the tensor name (used in the dim names, as smdebug does).
        arr: the data; numeric arrays go to ``tensor_content``, strings to ``string_val``.
        dtype: override, e.g. ``"bfloat16"`` for raw bf16 bits passed as uint16.

    Raises:
        UnsupportedDTypeError: the dtype cannot be written.
    """
    if dtype is None and arr.dtype.kind in STRING_KINDS:
        vals = []
        for item in arr.reshape(-1).tolist():
            raw = item if isinstance(item, bytes) else str(item).encode("utf-8")
            vals.append(b"\x42" + encode_varint(len(raw)) + raw)
        return EncodedTensor(_shape_field(tag, arr.shape) + b"".join(vals), b"")
    proto = dtype_from_name(dtype) if dtype is not None else proto_dtype_for(arr.dtype)
    if proto == DataType.DT_BFLOAT16:
        arr = _bf16_bits(arr)
    elif dtype is not None and arr.dtype.name != dtype:
        arr = arr.astype(dtype)
    if arr.dtype.byteorder == ">" or not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
    nbytes = arr.nbytes
    head = _numeric_head(tag, arr.shape, int(proto), nbytes)
    if not nbytes:
        return EncodedTensor(head, b"")
    return EncodedTensor(head, memoryview(arr.reshape(-1).view(np.uint8)))  # type: ignore[arg-type]


@functools.lru_cache(maxsize=8192)
def value_layout(tag: str, tensor_head: bytes, tensor_size: int, metadata_size: int) -> tuple[bytes, int]:
    """Return the bytes from ``Event.summary``'s key to the end of the tensor head, and the
    size of everything after ``Event.step`` (summary header, value, tensor, metadata)."""
    raw = tag.encode()
    value_head = b"\x0a" + encode_varint(len(raw)) + raw + b"\x42" + encode_varint(tensor_size)
    value_size = len(value_head) + tensor_size + metadata_size
    summary_size = 1 + len(encode_varint(value_size)) + value_size
    mid = b"\x2a" + encode_varint(summary_size) + b"\x0a" + encode_varint(value_size) + value_head + tensor_head
    return mid, 1 + len(encode_varint(summary_size)) + summary_size


@functools.lru_cache(maxsize=8192)
def numeric_record_layout(
    tag: str, shape: tuple[int, ...], dtype: np.dtype[np.generic], metadata_size: int
) -> tuple[bytes, int, str] | None:
    """The step-independent part of a record holding a plain numeric array, or ``None``.

    For a C-contiguous little-endian array of ``dtype`` (no dtype override) the record's
    bytes after ``Event.step`` are this layout's ``mid``, the raw array bytes, and the
    metadata; returns ``(mid, after_step_size, json_escaped_tag)`` as :func:`value_layout`
    (plus the tag as the index JSON writes it). Strings, bfloat16 and byte-swapped dtypes
    give ``None``: they take :func:`encode_tensor`'s general path.

    Raises:
        UnsupportedDTypeError: the dtype cannot be written.
    """
    if dtype.kind in STRING_KINDS or dtype.byteorder == ">":
        return None
    proto = proto_dtype_for(dtype)
    if proto == DataType.DT_BFLOAT16:
        return None
    nbytes = dtype.itemsize
    for size in shape:
        nbytes *= size
    head = _numeric_head(tag, shape, int(proto), nbytes)
    mid, after_step = value_layout(tag, head, len(head) + nbytes, metadata_size)
    return mid, after_step, _json_str(tag)


def _bf16_bits(arr: np.ndarray) -> np.ndarray:
    """Return raw bfloat16 bits: 2-byte inputs are taken as bits; floats are rounded (RNE)."""
    if (arr.dtype.itemsize == 2 and arr.dtype.kind in "uiV") or arr.dtype.name == "bfloat16":
        return arr.view("<u2") if arr.dtype.byteorder != ">" else arr.astype("<u2")
    bits = np.ascontiguousarray(arr, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype("<u2")


def encode_scalar_value(tag: str, value: float) -> bytes:
    """Return a ``Summary.Value`` (tag + ``simple_value``) for TensorBoard scalars."""
    raw = tag.encode()
    return len_field(1, raw) + b"\x15" + _PACK_FLOAT(value)


def encode_histogram_value(
    tag: str,
    *,
    vmin: float,
    vmax: float,
    num: float,
    vsum: float,
    sum_squares: float,
    bucket_limit: np.ndarray,
    bucket: np.ndarray,
) -> bytes:
    """Return a ``Summary.Value`` with a ``HistogramProto`` (field 5) for TensorBoard."""
    hist = b"".join(
        (
            b"\x09" + _PACK_DOUBLE(vmin) if vmin else b"",
            b"\x11" + _PACK_DOUBLE(vmax) if vmax else b"",
            b"\x19" + _PACK_DOUBLE(num) if num else b"",
            b"\x21" + _PACK_DOUBLE(vsum) if vsum else b"",
            b"\x29" + _PACK_DOUBLE(sum_squares) if sum_squares else b"",
            len_field(6, np.asarray(bucket_limit, "<f8").tobytes()) if len(bucket_limit) else b"",
            len_field(7, np.asarray(bucket, "<f8").tobytes()) if len(bucket) else b"",
        )
    )
    return len_field(1, tag.encode()) + len_field(5, hist)


def encode_summary_event(wall_time: float, step: int, value: bytes) -> bytes:
    """Return a full serialized ``Event`` holding one ``Summary.Value``."""
    return encode_event_prefix(wall_time, step) + len_field(5, len_field(1, value))
