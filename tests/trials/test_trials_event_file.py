"""Whole event files decoded in one pass (issue 32 item 1): values equal record-by-record decoding,
values handed out once and independent, a file that differs from an earlier one by a byte is
walked again, corrupt records still refused, and on S3 one GET per event file."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from synthetic_trial import upload_to_moto

from sagemaker_debugger_ext._exceptions import CorruptRecordError
from sagemaker_debugger_ext.format import StepWriter, write_collections_file, write_training_end
from sagemaker_debugger_ext.format._decode import decode_tensor_record
from sagemaker_debugger_ext.modes import ModeKeys
from sagemaker_debugger_ext.storage import S3Storage
from sagemaker_debugger_ext.trials import create_trial

FAST = {"poll_interval_s": 0.01, "wait_timeout_s": 1.0}
STEPS = 4


def _tensors(step: int) -> dict[str, np.ndarray]:
    return {
        "a": np.arange(6, dtype=np.float32) + step,
        "b/2d": np.arange(12, dtype=np.float32).reshape(3, 4) * step,  # same size as "c": one batch, two shapes
        "c": np.full(12, step, np.float32),
        "half": np.linspace(-1, 1, 5, dtype=np.float16) * step,
        "ints": np.arange(7, dtype=np.int64) - step,
        "flags": np.array([True, False, step % 2 == 0]),
        "nan": np.array([np.nan, np.inf, -np.inf, step], np.float64),
        "empty": np.zeros((0, 3), np.float32),
        "scalar": np.float32(step),
        "text": np.array(["x", "yz"[: step % 2 + 1]]),
    }


@pytest.fixture
def trial_dir(tmp_path: Path) -> Path:
    for step in range(STEPS):
        with StepWriter(tmp_path, global_step=step, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=step) as w:
            for name, value in _tensors(step).items():
                w.write_tensor(name, value)
            w.write_tensor("bf16", np.array([0x3F80, 0xC000], np.uint16), dtype="bfloat16")
    write_collections_file(tmp_path, "worker_0", {}, 1)
    write_training_end(tmp_path)
    return tmp_path


def _by_record(trial_dir: Path, step: int) -> dict[str, np.ndarray]:
    """Each record of ``step`` decoded on its own by the general decoder (the reference)."""
    doc = json.loads((trial_dir / f"index/000000000/{step:012d}_worker_0.json").read_bytes())
    data = (trial_dir / doc["meta"]["event_file_name"]).read_bytes()
    return {e["tensorname"]: decode_tensor_record(data, e["start_idx"] + 12, e["start_idx"] + e["length"] - 4).value
            for e in doc["tensor_payload"]}  # fmt: skip


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def test_step_by_step_values_equal_record_by_record_decoding(trial_dir: Path) -> None:
    trial = create_trial(str(trial_dir), **FAST)
    names = trial.tensor_names()
    assert len(names) == 11
    for step in range(STEPS):
        expected = _by_record(trial_dir, step)
        got = {name: trial.tensor(name).value(step) for name in names}
        again = {name: trial.tensor(name).value(step) for name in reversed(names)}  # asked twice: decoded again
        for name in names:
            assert _same(got[name], expected[name]), (step, name, got[name], expected[name])
            assert _same(again[name], expected[name]), (step, name)
            assert got[name].flags.writeable and got[name].flags.aligned
            assert not np.shares_memory(got[name], again[name])
    np.testing.assert_array_equal(trial.tensor("b/2d").value(2), np.arange(12).reshape(3, 4) * 2)
    assert trial.tensor("bf16").value(1).tolist() == [1.0, -2.0]


def test_tensor_by_tensor_values_equal_record_by_record_decoding(trial_dir: Path) -> None:
    """The other order (a rule reading one tensor across steps): each file's values, one by one."""
    trial = create_trial(str(trial_dir), **FAST)
    for name in trial.tensor_names():
        values = trial.tensor(name).values()
        for step in range(STEPS):
            assert _same(values[step], _by_record(trial_dir, step)[name]), (name, step)


def test_values_handed_out_are_independent(trial_dir: Path) -> None:
    trial = create_trial(str(trial_dir), **FAST)
    a, c = trial.tensor("a").value(1), trial.tensor("c").value(1)
    b = trial.tensor("b/2d").value(1)  # decoded with the rest of the file, a row of the batch "c" is in
    a[:] = -1
    b[:] = -1
    np.testing.assert_array_equal(trial.tensor("a").value(1), np.arange(6) + 1)
    np.testing.assert_array_equal(trial.tensor("b/2d").value(1), np.arange(12).reshape(3, 4))
    np.testing.assert_array_equal(trial.tensor("c").value(1), np.full(12, 1))
    np.testing.assert_array_equal(c, np.full(12, 1))


def _record_at(data: bytes, tag: bytes) -> int:
    """Frame offset of the record whose tag is ``tag``."""
    pos = 0
    while pos < len(data):
        (n,) = struct.unpack_from("<Q", data, pos)
        if b"\x0a" + bytes([len(tag)]) + tag + b"\x42" in data[pos : pos + 12 + n]:
            return pos
        pos += n + 16
    raise AssertionError(tag)


def test_a_file_like_an_earlier_one_but_for_one_byte_is_decoded_as_written(trial_dir: Path) -> None:
    """Step 3's file has step 1's layout (same length, same headers); step 3's "a" says DT_INT32
    instead of DT_FLOAT (same size): the template check must see it, the value is int32."""
    event = trial_dir / "events/000000000003/000000000003_worker_0.tfevents"
    data = bytearray(event.read_bytes())
    pos = _record_at(bytes(data), b"a")
    dtype_at = data.index(b"\x08\x01\x12", pos + 12)  # TensorProto.dtype = DT_FLOAT, then tensor_shape
    data[dtype_at + 1] = 3  # DT_INT32
    event.write_bytes(bytes(data))
    trial = create_trial(str(trial_dir), **FAST)
    for step in range(STEPS):
        values = [trial.tensor(name).value(step) for name in ("a", "c", "ints")]
        assert values[0].dtype == (np.int32 if step == 3 else np.float32)
        assert _same(values[0], _by_record(trial_dir, step)["a"])
        np.testing.assert_array_equal(values[1], np.full(12, step))


@pytest.mark.parametrize("where", ["header", "footer"])
def test_a_corrupt_record_is_refused_and_its_neighbours_read(trial_dir: Path, where: str) -> None:
    """Step 3's file, checked against step 1's layout, has a corrupt record."""
    event = trial_dir / "events/000000000003/000000000003_worker_0.tfevents"
    data = bytearray(event.read_bytes())
    pos = _record_at(bytes(data), b"c")
    if where == "header":
        data[pos + 9] ^= 0xFF  # the length's CRC
    else:
        (n,) = struct.unpack_from("<Q", data, pos)
        data[pos + 12 + n] ^= 0xFF  # the magic footer (no payload CRC matches either)
    event.write_bytes(bytes(data))
    trial = create_trial(str(trial_dir), **FAST)
    for step in range(STEPS):
        for name in ("a", "b/2d", "c", "ints", "text"):
            if step == 3 and name == "c":
                with pytest.raises(CorruptRecordError, match="000000000003_worker_0.tfevents"):
                    trial.tensor(name).value(step)
            else:
                assert _same(trial.tensor(name).value(step), _by_record(trial_dir, step)[name])


def test_s3_reads_each_event_file_with_one_get(trial_dir: Path) -> None:
    from moto import mock_aws

    with mock_aws():
        client = upload_to_moto(trial_dir)
        gets: list[tuple[str, str | None]] = []
        client.meta.events.register(
            "before-parameter-build.s3.GetObject", lambda params, **_: gets.append((params["Key"], params.get("Range")))
        )
        trial = create_trial(S3Storage("s3://bkt/run", client=client), **FAST)
        names = trial.tensor_names()
        gets.clear()
        for step in range(STEPS):
            expected = _by_record(trial_dir, step)
            for name in names:
                assert _same(trial.tensor(name).value(step), expected[name]), (step, name)
        whole = f"bytes=0-{1 << 20}"  # at most the whole-file limit: a file bigger than that is read by records
        assert sorted(gets) == [(f"run/events/{s:012d}/{s:012d}_worker_0.tfevents", whole) for s in range(STEPS)]
        gets.clear()
        trial = create_trial(S3Storage("s3://bkt/run", client=client), **FAST)
        gets.clear()
        values = trial.tensor("a").values()  # tensor by tensor: the files in parallel, one GET each
        assert sorted(values) == list(range(STEPS)) and len(gets) == STEPS
        np.testing.assert_array_equal(values[3], np.arange(6) + 3)


def test_s3_event_file_bigger_than_its_index_says_is_read_by_records(trial_dir: Path) -> None:
    """Junk after the last record: the file is never fetched whole (at most the limit + 1 byte)."""
    from moto import mock_aws

    event = trial_dir / "events/000000000001/000000000001_worker_0.tfevents"
    event.write_bytes(event.read_bytes() + bytes(3 << 20))
    with mock_aws():
        client = upload_to_moto(trial_dir)
        gets: list[str | None] = []
        client.meta.events.register(
            "before-parameter-build.s3.GetObject", lambda params, **_: gets.append(params.get("Range"))
        )
        trial = create_trial(S3Storage("s3://bkt/run", client=client), **FAST)
        gets.clear()
        expected = _by_record(trial_dir, 1)
        for name in ("a", "c", "ints"):
            assert _same(trial.tensor(name).value(1), expected[name])
        assert gets[0] == f"bytes=0-{1 << 20}" and len(gets) == 4  # the bounded try, then one range per record
        assert all(int(r.split("-")[1]) - int(r[6:].split("-")[0]) < 200 for r in gets[1:] if r)
