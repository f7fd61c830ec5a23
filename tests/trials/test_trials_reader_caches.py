"""What the reader remembers between files (issue 32 item 1): index payloads matched once per trial,
event files forgotten once every value was handed out. Neither may change what is read or refused:
an index the writers' layout recognises parses exactly as the JSON path does (byte mutations of a real
index, a payload cached from another file), a value asked again is read and checked again, and files
of a running job that appear after the first reads are seen."""

from __future__ import annotations

import gc
import struct
import weakref
from pathlib import Path

import numpy as np
import pytest
from synthetic_trial import upload_to_moto

from sagemaker_debugger_ext._exceptions import CorruptRecordError
from sagemaker_debugger_ext.exceptions import IndexReaderException
from sagemaker_debugger_ext.format import StepWriter, write_collections_file, write_training_end
from sagemaker_debugger_ext.modes import ModeKeys
from sagemaker_debugger_ext.storage import S3Storage
from sagemaker_debugger_ext.trials import create_trial
from sagemaker_debugger_ext.trials._index import IndexFile, parse_index

FAST = {"poll_interval_s": 0.01, "wait_timeout_s": 1.0}
NAMES = ("a", "b/2d", "c", "smdebug/reductions/abs_max/c")


def _value(name: str, step: int) -> np.ndarray:
    if name == "b/2d":
        return np.arange(12, dtype=np.float32).reshape(3, 4) * step
    return np.arange(5, dtype=np.float32) + 10 * step + len(name)


def _step(root: Path, step: int, names: tuple[str, ...] = NAMES) -> None:
    with StepWriter(root, global_step=step, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=step) as w:
        for name in names:
            w.write_tensor(name, _value(name, step))


@pytest.fixture
def trial_dir(tmp_path: Path) -> Path:
    for step in range(3):
        _step(tmp_path, step)
    write_collections_file(tmp_path, "worker_0", {}, 1)
    return tmp_path


def _index(root: Path, step: int) -> bytes:
    return (root / f"index/{step // 1000:09d}/{step:012d}_worker_0.json").read_bytes()


def _parse(data: bytes, step: int, payloads: dict | None) -> IndexFile | str:
    try:
        return parse_index(data, "index.json", step, "worker_0", payloads)
    except IndexReaderException:
        return "refused"


@pytest.mark.parametrize("payloads", [None, "warm"])
def test_index_mutations_parse_as_the_json_path_parses_them(trial_dir: Path, payloads: str | None) -> None:
    """Every one-byte change, deletion and insertion of a real index file: the writers'-layout path
    (with its payload cache warm from the original, or none) gives what the JSON path gives (the same
    bytes plus a space, which only the JSON path takes), value or refusal."""
    original = _index(trial_dir, 1)
    assert _parse(original, 1, {}) == _parse(original + b" ", 1, None) != "refused"
    cache: dict | None = None
    if payloads == "warm":
        cache = {}
        _parse(original, 1, cache)
        assert len(cache) == 1
    variants = []
    for i in range(len(original)):
        for byte in b'09-" \\{]\x00\x7f\xff':
            variants.append(original[:i] + bytes([byte]) + original[i + 1 :])
            variants.append(original[:i] + bytes([byte]) + original[i:])
        variants.append(original[:i] + original[i + 1 :])
    accepted = 0
    for data in variants:
        fast, slow = _parse(data, 1, cache), _parse(data + b" ", 1, None)
        assert fast == slow, data
        accepted += fast != "refused"
    assert accepted > len(original)  # digits changed in place still parse: both paths were exercised


def test_a_cached_payload_vouches_for_nothing_else_in_a_file(trial_dir: Path) -> None:
    """Step 2's index has step 1's payload text (the same offsets); a head that is wrong next to it
    is still refused or parsed as JSON, and each file keeps its own step, mode step and event file."""
    one, two = _index(trial_dir, 1), _index(trial_dir, 2)
    cache: dict = {}
    first, second = parse_index(one, "i1", 1, "worker_0", cache), parse_index(two, "i2", 2, "worker_0", cache)
    assert len(cache) == 1 and second.tensors is first.tensors  # matched once
    assert (second.step, second.mode_step) == (2, 2) and second.event_key.endswith("/000000000002_worker_0.tfevents")
    assert second == parse_index(two + b" ", "i2", 2, "worker_0")
    for bad in (b'"mode": "TRAINX"', b'"mode_step": -2', b'"mode_step": 02', b'"mode_step": 2.0',
                b'"mode_step": true'):  # fmt: skip
        with pytest.raises(IndexReaderException, match="i2"):
            parse_index(two.replace(b'"mode": "TRAIN"', bad) if b"mode\"" in bad else
                        two.replace(b'"mode_step": 2', bad), "i2", 2, "worker_0", cache)  # fmt: skip
    other = two.replace(b"000000000002_worker_0.tfevents", b"000000000001_worker_0.tfevents")
    with pytest.raises(IndexReaderException, match="this index's own event file"):
        parse_index(other, "i2", 2, "worker_0", cache)
    escaped = two.replace(b'"tensorname": "a"', b'"tensorname": "\\u0061"')  # JSON path: the same name
    assert parse_index(escaped, "i2", 2, "worker_0", cache) == second
    extra = two.replace(b'"mode": "TRAIN"', b'"mode": "TRAIN", "x": 1')
    assert parse_index(extra, "i2", 2, "worker_0", cache) == second


def _read_all(trial, step: int) -> dict[str, np.ndarray]:
    return {name: trial.tensor(name).value(step) for name in trial.tensor_names()}


def _expected(step: int) -> dict[str, np.ndarray]:
    return {name: _value(name, step) for name in NAMES if not name.startswith("smdebug/")}


def _same(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> bool:
    return got.keys() == want.keys() and all(
        got[k].dtype == want[k].dtype and np.array_equal(got[k], want[k]) for k in want
    )


def test_batches_are_freed_once_every_value_of_a_file_is_handed_out(trial_dir: Path) -> None:
    """Read step by step, the reader keeps no consumed step's values (they are the caller's): a
    file's memory is released by the time the next file is consumed; a file with a stored value not
    yet asked (a reduction) is kept for it."""
    write_training_end(trial_dir)
    trial = create_trial(trial_dir, **FAST)
    values = _read_all(trial, 0)
    assert _same(values, _expected(0))
    first = weakref.ref(values["c"].base)  # the batch the step's values were copied into
    assert np.array_equal(trial.tensor("c").reduction_value(0, "max", abs=True), _value(NAMES[3], 0))
    del values
    kept = _read_all(trial, 1)  # a stored reduction not asked for: the file is kept for it
    second = weakref.ref(kept["c"].base)
    del kept
    gc.collect()
    assert second() is not None
    assert np.array_equal(trial.tensor("c").reduction_value(1, "max", abs=True), _value(NAMES[3], 1))
    gc.collect()
    assert first() is None


def test_a_file_is_copied_in_one_batch_at_its_first_value_while_files_are_read_through(trial_dir: Path) -> None:
    """The first value asked of a file is copied alone (a caller may want only that one), except
    while the caller empties each file before opening the next: then the whole file is copied at
    its first value. A file left with values not asked for ends that, and every value is right."""
    write_training_end(trial_dir)
    trial = create_trial(trial_dir, **FAST)
    first = trial.tensor("a").value(0)
    assert first.base is None and np.array_equal(first, _value("a", 0))  # copied alone
    rest = _read_all(trial, 0)
    trial.tensor("c").reduction_value(0, "max", abs=True)  # step 0's file emptied: forgotten
    assert _same(rest, _expected(0))
    streamed = trial.tensor("a").value(1)  # read through: one batch at the first value
    assert streamed.base is not None and streamed.base.shape[0] > 1
    assert np.array_equal(streamed, _value("a", 1))
    alone = trial.tensor("a").value(2)  # step 1's file left with values: copied alone again
    assert alone.base is None and np.array_equal(alone, _value("a", 2))
    assert _same(_read_all(trial, 1), _expected(1)) and _same(_read_all(trial, 2), _expected(2))


def test_a_value_asked_again_is_read_and_checked_again(trial_dir: Path) -> None:
    """Values asked again after their file was forgotten are equal, new arrays, and a record that
    went bad in between is refused, not served from memory."""
    write_training_end(trial_dir)
    trial = create_trial(trial_dir, **FAST)
    first = _read_all(trial, 1)
    trial.tensor("c").reduction_value(1, "max", abs=True)  # the last value of the file: it is forgotten
    again = _read_all(trial, 1)
    trial.tensor("c").reduction_value(1, "max", abs=True)
    assert _same(first, _expected(1)) and _same(again, _expected(1))
    assert all(not np.shares_memory(first[k], again[k]) for k in first)
    event = trial_dir / "events/000000000001/000000000001_worker_0.tfevents"
    data = bytearray(event.read_bytes())
    (n,) = struct.unpack_from("<Q", data, 0)
    data[12 + n] ^= 0xFF  # the first record's magic footer
    event.write_bytes(bytes(data))
    with pytest.raises(CorruptRecordError, match="000000000001_worker_0.tfevents"):
        trial.tensor("a").value(1)
    assert np.array_equal(trial.tensor("c").value(1), _value("c", 1))


def test_files_of_a_running_job_that_appear_later_are_read(trial_dir: Path) -> None:
    """After the first steps were read (payloads cached, files forgotten), new steps with the same
    layout, a new layout, and a step in a new index and events folder (step 1000) are all read right."""
    trial = create_trial(trial_dir, **FAST)
    for step in range(3):
        assert _same(_read_all(trial, step), _expected(step))
    _step(trial_dir, 3)
    _step(trial_dir, 4, ("a", "c"))
    _step(trial_dir, 1000)
    write_training_end(trial_dir)
    assert trial.steps() == [0, 1, 2, 3, 4, 1000]
    assert _same(_read_all(trial, 3), _expected(3)) and _same(_read_all(trial, 1000), _expected(1000))
    assert np.array_equal(trial.tensor("c").value(4), _value("c", 4))
    assert np.array_equal(trial.tensor("c").reduction_value(1000, "max", abs=True), _value(NAMES[3], 1000))


def test_a_step_bigger_than_one_batch_is_copied_into_several(tmp_path: Path) -> None:
    """70 values of 4 KB (280 KB) in one event file: batches stay under 120 KiB (memory the allocator
    reuses) and every value is the one written, in any order of asking."""
    values = {f"t{i:02d}": np.arange(1000, dtype=np.float32) * i for i in range(70)}
    with StepWriter(tmp_path, global_step=0, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=0) as w:
        for name, value in values.items():
            w.write_tensor(name, value)
    write_collections_file(tmp_path, "worker_0", {}, 1)
    write_training_end(tmp_path)
    trial = create_trial(tmp_path, **FAST)
    names = sorted(values, key=lambda n: (int(n[1:]) * 37) % 70)  # not in file order
    got = {name: trial.tensor(name).value(0) for name in names}
    assert all(np.array_equal(got[n], values[n]) for n in values)
    bases = {id(v.base): v.base for v in got.values() if v.base is not None}
    assert len(bases) >= 3 and all(b.nbytes <= 120 << 10 for b in bases.values())


def test_on_s3_a_step_read_again_costs_no_request(trial_dir: Path) -> None:
    """Forgetting consumed files is for local trials: on S3 reading a file again is a GET, so a step
    read twice (every value, the stored reduction too) is fetched once."""
    from moto import mock_aws

    write_training_end(trial_dir)
    with mock_aws():
        client = upload_to_moto(trial_dir)
        gets: list[str] = []
        client.meta.events.register(
            "before-parameter-build.s3.GetObject", lambda params, **_: gets.append(params["Key"])
        )
        trial = create_trial(S3Storage("s3://bkt/run", client=client), **FAST)
        gets.clear()
        for _ in range(2):
            assert _same(_read_all(trial, 1), _expected(1))
            assert np.array_equal(trial.tensor("c").reduction_value(1, "max", abs=True), _value(NAMES[3], 1))
        assert gets == ["run/events/000000000001/000000000001_worker_0.tfevents"]
