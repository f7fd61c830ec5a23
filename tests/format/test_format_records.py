"""TFRecord framing, CRC implementations and the tolerant record reader."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest

from sagemaker_debugger_ext._exceptions import (
    CorruptRecordError,
    TruncatedRecordError,
    UnsupportedDTypeError,
)
from sagemaker_debugger_ext.format import (
    MAGIC_FOOTER,
    FooterCheck,
    RecordWriter,
    crc32c_python,
    decode_tensor_record,
    masked_crc32c,
    read_record_at,
    read_records,
)
from sagemaker_debugger_ext.format._crc import get_crc32c
from sagemaker_debugger_ext.format._encode import encode_summary_event

PAYLOADS = [b"", b"a", b"hello world", bytes(range(256)) * 5]


@pytest.mark.parametrize("data", PAYLOADS, ids=["empty", "one", "text", "long"])
def test_native_and_python_crc_agree(data: bytes) -> None:
    """The crc32c package and the pure-Python fallback give the same CRC and masked CRC."""
    assert get_crc32c()(data) == crc32c_python(data)
    assert masked_crc32c(data) == masked_crc32c(data, native=False)


def test_known_crc_values() -> None:
    """CRC32C check value and smdebug's magic footer are reproduced by both implementations."""
    assert crc32c_python(b"123456789") == 0xE3069283
    assert masked_crc32c(b"0x12345678", native=False) == MAGIC_FOOTER == 0x062DC0B3


def _two_records(payload_crc: bool) -> bytes:
    buf = io.BytesIO()
    w = RecordWriter(buf, payload_crc=payload_crc)
    w.write(b"first")
    w.write(b"second payload")
    return buf.getvalue()


@pytest.mark.parametrize("payload_crc", [False, True], ids=["magic", "tensorboard"])
def test_records_round_trip_with_both_footers(payload_crc: bool) -> None:
    """Both footer styles read back under the default check; offsets and lengths are exact."""
    data = _two_records(payload_crc)
    recs = list(read_records(data))
    assert [r.payload for r in recs] == [b"first", b"second payload"]
    assert recs[1].offset == recs[0].length == 12 + 5 + 4
    assert struct.unpack("<Q", data[:8])[0] == 5


def test_footer_check_modes() -> None:
    """check='magic' rejects a real CRC (as smdebug), check='full' rejects the magic footer."""
    with pytest.raises(CorruptRecordError, match="bad payload footer"):
        list(read_records(_two_records(True), check=FooterCheck.MAGIC))
    with pytest.raises(CorruptRecordError, match="bad payload footer"):
        list(read_records(_two_records(False), check=FooterCheck.FULL))
    assert len(list(read_records(_two_records(True), check=FooterCheck.FULL))) == 2


@pytest.mark.parametrize("cut", [3, 12, 20, 25], ids=["in-len", "after-header", "in-payload", "in-footer-2"])
def test_torn_tail_is_tolerated_or_reported(cut: int) -> None:
    """A half-written last record ends iteration quietly, or raises TruncatedRecordError."""
    data = _two_records(False)
    first_len = 21
    torn = data[: first_len + cut]
    assert [r.payload for r in read_records(torn)] == [b"first"]
    with pytest.raises(TruncatedRecordError) as info:
        list(read_records(torn, allow_torn_tail=False))
    assert info.value.offset == first_len


def test_bad_length_crc_and_bad_payload_are_corrupt() -> None:
    """A flipped length byte or payload byte is a CorruptRecordError, never struct.error."""
    data = bytearray(_two_records(True))
    data[0] ^= 0x01
    with pytest.raises(CorruptRecordError, match="bad length CRC"):
        read_record_at(bytes(data))
    data = bytearray(_two_records(True))
    data[13] ^= 0xFF
    with pytest.raises(CorruptRecordError, match="footer"):
        read_record_at(bytes(data))


def test_read_records_from_path_and_stream(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Paths and binary streams are accepted as sources."""
    p = tmp_path / "f.tfevents"
    p.write_bytes(_two_records(False))
    assert len(list(read_records(str(p)))) == 2
    with open(p, "rb") as fh:
        assert len(list(read_records(fh))) == 2


def _tensor_event(tensor: bytes) -> bytes:
    value = b"\x0a\x01t" + b"\x42" + bytes([len(tensor)]) + tensor
    return encode_summary_event(1.0, 5, value)


def test_unknown_dtype_is_a_clear_error() -> None:
    """A DataType number the format does not know raises UnsupportedDTypeError naming it."""
    with pytest.raises(UnsupportedDTypeError, match=r"'TensorProto.dtype' must be .* \(got 99\)"):
        decode_tensor_record(_tensor_event(b"\x08\x63\x22\x04\x00\x00\x80\x3f"))


def test_garbage_protobuf_is_corrupt() -> None:
    """Malformed protobuf bytes raise CorruptRecordError rather than IndexError/struct.error."""
    for bad in (b"\x2a\x7f\x0a", b"\x0f", b"\xff\xff\xff", b"\x2a\x03\x0a\x01"):
        with pytest.raises(CorruptRecordError):
            decode_tensor_record(bad)


def test_value_fallback_fields_decode() -> None:
    """float_val/int64_val (TF's non-content encoding) decode, with the fill convention."""
    packed = np.array([1.5, 2.5], "<f4").tobytes()
    tensor = b"\x08\x01\x12\x04\x12\x02\x08\x02" + b"\x2a" + bytes([len(packed)]) + packed
    assert decode_tensor_record(_tensor_event(tensor)).value.tolist() == [1.5, 2.5]
    tensor = b"\x08\x09\x12\x04\x12\x02\x08\x03" + b"\x50\x07"
    assert decode_tensor_record(_tensor_event(tensor)).value.tolist() == [7, 7, 7]


def test_pure_python_fallback_reads_and_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the crc32c package, framing and checks use the pure-Python CRC and agree."""
    import sys

    native = _two_records(True)
    get_crc32c.cache_clear()
    monkeypatch.setitem(sys.modules, "crc32c", None)  # makes `import crc32c` fail
    try:
        assert get_crc32c() is crc32c_python
        assert _two_records(True) == native
        assert [r.payload for r in read_records(native, check=FooterCheck.FULL)] == [b"first", b"second payload"]
    finally:
        get_crc32c.cache_clear()
