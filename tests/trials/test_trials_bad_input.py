"""Damaged trials: clear exceptions from our tree, never struct.error/KeyError, never a hang."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext._exceptions import (
    CorruptRecordError,
    DebuggerExtError,
    TruncatedRecordError,
    UnsupportedDTypeError,
)
from sagemaker_debugger_ext.exceptions import IndexReaderException
from sagemaker_debugger_ext.format import (
    StepWriter,
    write_collections_file,
    write_training_end,
)
from sagemaker_debugger_ext.modes import ModeKeys
from sagemaker_debugger_ext.trials import create_trial

FAST = {"poll_interval_s": 0.01, "wait_timeout_s": 1.0}
EVENT = "events/000000000000/000000000000_worker_0.tfevents"
INDEX = "index/000000000/000000000000_worker_0.json"


@pytest.fixture
def trial_dir(tmp_path: Path) -> Path:
    """A one-step trial with two tensors."""
    with StepWriter(tmp_path, global_step=0, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=0) as w:
        w.write_tensor("a", np.arange(10, dtype=np.float32))
        w.write_tensor("b", np.arange(4, dtype=np.int64))
    write_collections_file(tmp_path, "worker_0", {}, 1)
    write_training_end(tmp_path)
    return tmp_path


def _patch(path: Path, offset: int, new: bytes) -> None:
    data = bytearray(path.read_bytes())
    data[offset : offset + len(new)] = new
    path.write_bytes(bytes(data))


def test_truncated_event_file(trial_dir: Path) -> None:
    """An event file cut short gives TruncatedRecordError naming the file."""
    ev = trial_dir / EVENT
    ev.write_bytes(ev.read_bytes()[:-10])
    t = create_trial(trial_dir, **FAST)
    assert t.tensor("a").value(0).size == 10
    with pytest.raises(TruncatedRecordError, match="truncated"):
        t.tensor("b").value(0)


def test_bad_length_crc(trial_dir: Path) -> None:
    """A flipped byte in a record's length field gives CorruptRecordError."""
    _patch(trial_dir / EVENT, 0, b"\xff")
    with pytest.raises(CorruptRecordError, match="length CRC"):
        create_trial(trial_dir, **FAST).tensor("a").value(0)


def test_bad_footer(trial_dir: Path) -> None:
    """A footer that is neither the magic value nor the payload CRC gives CorruptRecordError."""
    index = json.loads((trial_dir / INDEX).read_text())
    entry = index["tensor_payload"][0]
    _patch(trial_dir / EVENT, entry["start_idx"] + entry["length"] - 4, b"\x00\x00\x00\x00")
    with pytest.raises(CorruptRecordError, match="footer"):
        create_trial(trial_dir, **FAST).tensor("a").value(0)


def test_garbage_payload(trial_dir: Path) -> None:
    """Payload bytes overwritten with noise never escape as IndexError/struct.error."""
    index = json.loads((trial_dir / INDEX).read_text())
    entry = index["tensor_payload"][1]
    _patch(trial_dir / EVENT, entry["start_idx"] + 12, b"\xff" * 6)
    with pytest.raises(DebuggerExtError):
        create_trial(
            trial_dir,
            **FAST,
        ).tensor("b").value(0)


def test_unknown_dtype_in_record(trial_dir: Path) -> None:
    """A record whose DataType number is unknown raises UnsupportedDTypeError."""
    data = (trial_dir / EVENT).read_bytes()
    pos = data.index(b"\x42", 20)  # Value.tensor key of the first record, then its length
    dtype_at = data.index(b"\x08\x01", pos)  # TensorProto.dtype = DT_FLOAT
    _patch(trial_dir / EVENT, dtype_at + 1, b"\x63")
    with pytest.raises(UnsupportedDTypeError, match=r"\(got 99\)"):
        create_trial(trial_dir, **FAST).tensor("a").value(0)


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[]", b'{"meta": {}}', b'{"meta": {"mode": "NOPE", "mode_step": 0}, "tensor_payload": []}',
     b'{"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [{"tensorname": "a"}]}',
     b'{"meta": {"mode": "TRAIN", "mode_step": -1}, "tensor_payload": []}'],
    ids=["syntax", "list", "empty-meta", "bad-mode", "missing-fields", "negative-step"],
)  # fmt: skip
def test_corrupted_index_file(trial_dir: Path, content: bytes) -> None:
    """A malformed index file raises IndexReaderException naming the file and the problem."""
    (trial_dir / INDEX).write_bytes(content)
    with pytest.raises(IndexReaderException, match="000000000000_worker_0.json"):
        create_trial(trial_dir, **FAST)


def test_corrupted_collections_file(trial_dir: Path) -> None:
    """A collections file that is not JSON raises IndexReaderException."""
    (trial_dir / "collections/000000000/worker_0_collections.json").write_text("{oops")
    with pytest.raises(IndexReaderException, match="collections file"):
        create_trial(trial_dir, **FAST)


def test_index_length_disagrees_with_record(trial_dir: Path) -> None:
    """An index entry whose length does not match the record is CorruptRecordError."""
    index = json.loads((trial_dir / INDEX).read_text())
    index["tensor_payload"][0]["length"] += 4
    (trial_dir / INDEX).write_text(json.dumps(index))
    with pytest.raises(CorruptRecordError, match="index says"):
        create_trial(trial_dir, **FAST).tensor("a").value(0)


def test_missing_event_file(trial_dir: Path) -> None:
    """An index pointing at a missing event file raises StorageNotFoundError."""
    from sagemaker_debugger_ext._exceptions import StorageNotFoundError

    (trial_dir / EVENT).unlink()
    with pytest.raises(StorageNotFoundError, match="does not exist"):
        create_trial(trial_dir, **FAST).tensor("a").value(0)
