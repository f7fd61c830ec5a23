"""Crafted tensor records the decoder must refuse with CorruptRecordError (issue 16 item 2).

Before: numpy's ValueError/OverflowError, or a MemoryError from TF's "fill" convention
with a huge shape, escaped from the decoder.
"""

from __future__ import annotations

import numpy as np
import pytest

from sagemaker_debugger_ext._exceptions import CorruptRecordError
from sagemaker_debugger_ext.format._decode import decode_tensor_record
from sagemaker_debugger_ext.format._wire import FIXED32, VARINT, encode_varint, key, len_field


def _event(tensor: bytes) -> bytes:
    value = len_field(1, b"t") + len_field(8, tensor)
    return key(2, VARINT) + encode_varint(3) + len_field(5, len_field(1, value))


def _tensor(dtype: int, dims: list[int], *fields: bytes) -> bytes:
    shape = b"".join(len_field(2, key(1, VARINT) + encode_varint(d)) for d in dims)
    return key(1, VARINT) + encode_varint(dtype) + len_field(2, shape) + b"".join(fields)


def test_well_formed_fallback_values_decode() -> None:
    """The crafting is right: a packed float_val record decodes to its values."""
    rec = _event(_tensor(1, [2], len_field(5, np.array([1.5, 2.5], "<f4").tobytes())))
    np.testing.assert_array_equal(decode_tensor_record(rec).value, np.array([1.5, 2.5], np.float32))


@pytest.mark.parametrize(
    "tensor",
    [
        _tensor(1, [1], len_field(5, b"\x00\x00\x80")),  # packed float_val not a multiple of 4 bytes
        _tensor(3, [1], key(7, VARINT) + encode_varint(2**64 - 1)),  # int_val that does not fit int32
        _tensor(1, [2**40], key(5, FIXED32) + b"\x00\x00\x80\x3f"),  # "fill" of 2**40 floats
        _tensor(1, [2**62, 2**62], key(5, FIXED32) + b"\x00\x00\x80\x3f"),  # shape product past int64
    ],
    ids=["packed-float-bad-length", "int-overflow", "fill-2**40", "shape-past-int64"],
)
def test_malformed_values_are_corrupt_records(tensor: bytes) -> None:
    with pytest.raises(CorruptRecordError):
        decode_tensor_record(_event(tensor))
