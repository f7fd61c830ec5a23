"""The decoder's one fast path: full records and value-only reads agree with the general decoder."""

from __future__ import annotations

import numpy as np
import pytest

from sagemaker_debugger_ext.format import _decode, _event_proto, _fast_path
from sagemaker_debugger_ext.format._encode import encode_mode_metadata, encode_summary_event, encode_tensor
from sagemaker_debugger_ext.format._wire import len_field
from sagemaker_debugger_ext.modes import ModeKeys


def _record(arr: np.ndarray, *, step: int, tag: str = "layer/w", metadata: bytes = b"") -> bytes:
    enc = encode_tensor(tag, arr)
    value = len_field(1, tag.encode()) + len_field(8, enc.head + bytes(enc.content))
    return encode_summary_event(12.5, step, value + metadata)  # metadata: the whole Value.metadata field


CASES = [
    (np.arange(6, dtype=np.float32).reshape(2, 3), 0),
    (np.arange(300, dtype=np.float64), 70_000),  # multi-byte lengths and step
    (np.array(3, dtype=np.int64), 5),
    (np.arange(40, dtype=np.uint8).reshape(5, 8), 127),
]


@pytest.mark.parametrize(("arr", "step"), CASES, ids=["f32-2d", "f64-long", "i64-scalar", "u8"])
def test_fast_path_matches_general_decoder(arr: np.ndarray, step: int) -> None:
    """decode_tensor_record and decode_tensor_value read the written tensor, name, mode and steps through the fast path."""
    rec = _record(arr, step=step, metadata=encode_mode_metadata(int(ModeKeys.EVAL), 3))
    assert _fast_path._scan(rec, 0, len(rec)) is not None  # the fast path takes this layout
    fast = _decode.decode_tensor_record(rec)
    assert (fast.tag, fast.mode, fast.mode_step, fast.step, fast.wall_time) == ("layer/w", ModeKeys.EVAL, 3, step, 12.5)
    np.testing.assert_array_equal(fast.value, arr)
    np.testing.assert_array_equal(_decode.decode_tensor_value(rec), arr)
    layout = _fast_path.tensor_value_layout(rec)
    assert layout is not None and layout.shape == arr.shape and layout.n_items == arr.size


def test_negative_step_is_signed_on_the_fast_path() -> None:
    """A negative Event.step decodes as int64 on the fast path too (it came back as 2**64 - 1)."""
    rec = _record(np.ones(4, dtype=np.float32), step=-1)
    assert _fast_path._scan(rec, 0, len(rec)) is not None
    decoded = _decode.decode_tensor_record(rec)
    assert decoded.step == -1 and decoded.mode is ModeKeys.GLOBAL and decoded.mode_step == -1


def test_wire_keys_are_the_bytes_smdebug_writes() -> None:
    """The named keys are protobuf's field << 3 | wire type, as on disk."""
    assert (_event_proto._KEY_SUMMARY, _event_proto._KEY_VALUE_TENSOR, _event_proto._KEY_VALUE_METADATA) == (
        0x2A,
        0x42,
        0x4A,
    )
    assert (_event_proto._KEY_WALL_TIME, _event_proto._KEY_STEP, _event_proto._KEY_TENSOR_CONTENT) == (0x09, 0x10, 0x22)


@pytest.mark.parametrize("cut", [1, 5, 20, -3], ids=["head", "prefix", "mid", "tail"])
def test_torn_record_leaves_fast_path_without_error(cut: int) -> None:
    """A truncated payload is refused by the fast path (None) and the general decoder names the problem."""
    rec = _record(np.arange(10, dtype=np.float32), step=2)[:cut]
    assert _fast_path._scan(rec, 0, len(rec)) is None
    assert _fast_path.tensor_value_layout(rec) is None
