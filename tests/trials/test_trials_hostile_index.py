"""Hostile index, collections and event data (issue 16 items 1-3, 8; issue 11 behaviour 8).

Every declared size is checked against the real file before a read, every JSON field is
type-checked, a stray index never returns another step's value, and symlinks leading out
of a trial folder are refused. Only the package's documented exceptions come out.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np
import pytest
from synthetic_trial import upload_to_moto

from sagemaker_debugger_ext._exceptions import CorruptRecordError, PathEscapeError, TruncatedRecordError
from sagemaker_debugger_ext.exceptions import IndexReaderException
from sagemaker_debugger_ext.format import StepWriter, write_collections_file, write_training_end
from sagemaker_debugger_ext.modes import ModeKeys
from sagemaker_debugger_ext.storage import MemoryStorage
from sagemaker_debugger_ext.trials import create_trial

FAST = {"poll_interval_s": 0.01, "wait_timeout_s": 1.0}
EVENT = "events/000000000001/000000000001_worker_0.tfevents"
INDEX = "index/000000000/000000000001_worker_0.json"


@pytest.fixture
def trial_dir(tmp_path: Path) -> Path:
    """Two TRAIN steps (global 0 and 1) of tensor ``a`` (values 0.. and 100..) plus ``b``."""
    for step in (0, 1):
        with StepWriter(tmp_path, global_step=step, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=step) as w:
            w.write_tensor("a", np.arange(4, dtype=np.float32) + 100 * step)
            w.write_tensor("b", np.arange(3, dtype=np.int64))
    write_collections_file(tmp_path, "worker_0", {"c": {"name": "c", "tensor_names": ["a"]}}, 1)
    write_training_end(tmp_path)
    return tmp_path


def _edit_index(trial: Path, key: str, change) -> None:
    doc = json.loads((trial / key).read_text())
    change(doc)
    (trial / key).write_text(json.dumps(doc))


@pytest.mark.parametrize(
    "field, value", [("length", 2**40), ("length", 2**62), ("start_idx", 2**64), ("start_idx", 2**40)]
)
def test_huge_declared_sizes_are_refused(trial_dir: Path, field: str, value: int) -> None:
    """Item 1: 2**40 lengths reached os.pread (MemoryError), 2**64 offsets OverflowError."""
    _edit_index(trial_dir, INDEX, lambda d: d["tensor_payload"][0].__setitem__(field, value))
    with pytest.raises((IndexReaderException, TruncatedRecordError), match="000000000001_worker_0"):
        create_trial(trial_dir, **FAST).tensor("a").value(1)


def test_length_past_end_of_file_names_file_and_entry(trial_dir: Path) -> None:
    """Item 1: a length within the ceiling but past the real file end is refused before reading."""
    size = (trial_dir / EVENT).stat().st_size
    _edit_index(trial_dir, INDEX, lambda d: d["tensor_payload"][0].__setitem__("length", 10 * 2**20 + size))
    with pytest.raises(
        TruncatedRecordError, match=rf"000000000001_worker_0.tfevents is truncated.*offset 0.*\({size} bytes\)"
    ):
        create_trial(trial_dir, **FAST).tensor("a").value(1)


def test_ranged_reads_never_go_past_the_real_size(trial_dir: Path) -> None:
    """Item 1, storage layer: read_range clamps to the file; absurd ranges are refused."""
    from sagemaker_debugger_ext._exceptions import ConfigValueError
    from sagemaker_debugger_ext.storage import LocalStorage

    store = LocalStorage(trial_dir)
    size = (trial_dir / EVENT).stat().st_size
    assert len(store.read_range(EVENT, 0, 2**40)) == size
    assert store.read_range(EVENT, size + 5, 10) == b""
    with pytest.raises(ConfigValueError):
        store.read_range(EVENT, 2**64, 16)
    with pytest.raises(ConfigValueError):
        MemoryStorage({"k": b"x"}).read_range("k", -1, 4)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.__setitem__("tensor_payload", 5),
        lambda d: d.__setitem__("tensor_payload", [5]),
        lambda d: d.__setitem__("tensor_payload", [[1, 2, 3]]),
        lambda d: d["tensor_payload"][0].__setitem__("tensorname", 7),
        lambda d: d["tensor_payload"][0].__setitem__("start_idx", "0"),
        lambda d: d["tensor_payload"][0].__setitem__("length", 1.5),
        lambda d: d["tensor_payload"][0].__setitem__("length", True),
        lambda d: d.__setitem__("shape_payload", {"x": 1}),
        lambda d: d.__setitem__("shape_payload", [{"tensorname": "a", "shape": "3"}]),
        lambda d: d.__setitem__("shape_payload", [{"tensorname": "a", "shape": [-1]}]),
        lambda d: d.__setitem__("shape_payload", [7]),
        lambda d: d["meta"].__setitem__("mode", ["TRAIN"]),
        lambda d: d["meta"].__setitem__("mode", "TRAINING"),
        lambda d: d["meta"].__setitem__("mode_step", None),
        lambda d: d["meta"].__setitem__("event_file_name", 5),
        lambda d: d["meta"].__setitem__("event_file_name", "../../etc/passwd"),
        lambda d: d.__setitem__("meta", []),
    ],
)
def test_wrong_json_types_in_index_are_format_errors(trial_dir: Path, change) -> None:
    """Item 2: TypeError from trials/_index.py before; IndexReaderException naming the file now."""
    _edit_index(trial_dir, INDEX, change)
    with pytest.raises(IndexReaderException, match="000000000001_worker_0.json"):
        create_trial(trial_dir, **FAST).tensor("a").value(1)


@pytest.mark.parametrize(
    "body",
    [
        {"c": {"tensor_names": 5}},
        {"c": {"tensor_names": [1, 2]}},
        {"c": {"include_regex": {"a": 1}}},
        {"c": {"reduction_config": "mean"}},
        {"c": {"save_config": [1]}},
        {"c": {"save_histogram": "yes"}},
        {"c": {"name": 3}},
        {"c": 5},
    ],
)
def test_wrong_json_types_in_collections_are_format_errors(trial_dir: Path, body: dict) -> None:
    """Item 2: "tensor_names": 5 raised TypeError in trials/_collections.py."""
    key = "collections/000000000/worker_0_collections.json"
    (trial_dir / key).write_text(json.dumps({"collections": body, "_meta": {"num_workers": 1}}))
    with pytest.raises(IndexReaderException, match="worker_0_collections.json"):
        create_trial(trial_dir, **FAST)


def test_stray_index_claiming_another_mode_step_is_detected(trial_dir: Path) -> None:
    """Item 3: a stray index at global step 1 claiming TRAIN step 0, sorting first, made
    value(1, worker="worker_0") return step 0's value silently."""
    stray = json.loads((trial_dir / INDEX).read_text())
    stray["meta"]["mode_step"] = 0
    stray["meta"]["event_file_name"] = "events/000000000001/000000000001_a.tfevents"
    (trial_dir / "events/000000000001/000000000001_a.tfevents").write_bytes((trial_dir / EVENT).read_bytes())
    (trial_dir / "index/000000000/000000000001_a.json").write_text(json.dumps(stray))
    with pytest.raises(IndexReaderException, match=r"disagree about global step 1|both claim TRAIN step 0"):
        create_trial(trial_dir, **FAST).tensor("a").value(1, worker="worker_0")


def test_index_pointing_at_another_steps_event_file_is_refused(trial_dir: Path) -> None:
    """Item 3: an index may only point into its own step's event file."""
    _edit_index(
        trial_dir,
        INDEX,
        lambda d: d["meta"].__setitem__("event_file_name", "events/000000000000/000000000000_worker_0.tfevents"),
    )
    with pytest.raises(IndexReaderException, match="must be 'events/000000000001/000000000001_worker_0.tfevents'"):
        create_trial(trial_dir, **FAST).tensor("a").value(1)


@pytest.mark.parametrize("key", ["index/000000001/000000000001_worker_0.json", "index/000000000/000000000001_..json"])
def test_index_files_with_names_the_writer_never_makes_are_ignored(
    trial_dir: Path, key: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Item 3: a copy in the wrong thousands folder or with worker '.' is ignored, with a warning."""
    stray = json.loads((trial_dir / "index/000000000/000000000000_worker_0.json").read_text())
    (trial_dir / key).parent.mkdir(parents=True, exist_ok=True)
    (trial_dir / key).write_text(json.dumps(stray))
    with caplog.at_level(logging.WARNING, logger="sagemaker_debugger_ext.trials"):
        trial = create_trial(trial_dir, **FAST)
        assert trial.workers() == ["worker_0"]
        np.testing.assert_array_equal(trial.tensor("a").value(1, worker="worker_0"), np.arange(4) + 100)
    assert any(key in r.getMessage() for r in caplog.records)


def test_index_entries_without_shape_are_accepted(trial_dir: Path) -> None:
    """Issue 11 behaviour 8: older smdebug writers omit ``shape`` (and ``shape_payload``)."""
    _edit_index(trial_dir, INDEX, lambda d: d.__setitem__("shape_payload", [{"tensorname": "a", "originalname": "a"}]))
    _edit_index(trial_dir, "index/000000000/000000000000_worker_0.json", lambda d: d.pop("shape_payload"))
    trial = create_trial(trial_dir, **FAST)
    np.testing.assert_array_equal(trial.tensor("a").value(1), np.arange(4) + 100)
    np.testing.assert_array_equal(trial.tensor("a").value(0), np.arange(4))
    assert trial.tensor("a").shape(1) == (4,)


def test_short_index_lengths_load_as_smdebug_and_fail_only_when_read(trial_dir: Path) -> None:
    """smdebug's own test helpers index tensors with ``length: 1``; smdebug loads such a trial
    (steps, modes, workers) and fails only on reading the value. So do we: the trial loads,
    reading says the index disagrees with the record (was: the whole trial refused, length < 16)."""
    _edit_index(trial_dir, INDEX, lambda d: d["tensor_payload"][0].__setitem__("length", 1))
    trial = create_trial(trial_dir, **FAST)
    assert trial.steps() == [0, 1]
    np.testing.assert_array_equal(trial.tensor("a").value(0), np.arange(4))
    with pytest.raises(CorruptRecordError, match="is 96 bytes but the index says 1"):
        trial.tensor("a").value(1)


def test_empty_event_file_name_means_the_index_own_file_and_last_index_token(
    trial_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """smdebug's test helpers write ``event_file_name: ""``: read as the index's own event file.
    ``last_index_token`` is the newest index file, joined to the path as given (smdebug's)."""
    _edit_index(trial_dir, INDEX, lambda d: d["meta"].__setitem__("event_file_name", ""))
    monkeypatch.chdir(trial_dir.parent)
    trial = create_trial(trial_dir.name, **FAST)
    np.testing.assert_array_equal(trial.tensor("a").value(1), np.arange(4) + 100)
    assert trial.last_index_token == os.path.join(trial_dir.name, INDEX)


def test_symlink_out_of_the_trial_folder_is_refused(trial_dir: Path, tmp_path_factory) -> None:
    """Item 8: a symlinked event file or folder pointing outside is refused, inside is fine."""
    outside = tmp_path_factory.mktemp("outside")
    real = trial_dir / EVENT
    (outside / "ev.tfevents").write_bytes(real.read_bytes())
    real.unlink()
    os.symlink(outside / "ev.tfevents", real)
    with pytest.raises(PathEscapeError, match="outside the trial folder"):
        create_trial(trial_dir, **FAST).tensor("a").value(1)
    # a link that stays inside the trial folder is followed
    (trial_dir / "copy.tfevents").write_bytes((outside / "ev.tfevents").read_bytes())
    real.unlink()
    os.symlink(trial_dir / "copy.tfevents", real)
    np.testing.assert_array_equal(create_trial(trial_dir, **FAST).tensor("a").value(1), np.arange(4) + 100)
    # a linked folder on the way out is refused too
    (trial_dir / "events/000000000001").rename(outside / "step1")
    os.symlink(outside / "step1", trial_dir / "events/000000000001")
    with pytest.raises(PathEscapeError, match="outside the trial folder"):
        create_trial(trial_dir, **FAST).tensor("a").value(1)


def test_folder_links_are_judged_once_per_folder_wherever_they_sit(trial_dir: Path, tmp_path_factory) -> None:
    """Containment is checked once per folder (one lstat; realpath only for links), at every
    level: a linked ``events`` folder, a linked step folder below a linked-inside parent, and a
    step folder that turned into a link after other folders of the same trial passed."""
    from sagemaker_debugger_ext.storage import LocalStorage

    outside = tmp_path_factory.mktemp("outside")
    step1 = "events/000000000001"
    # the whole events folder linked inside the trial: followed, and so are the real folders below it
    (trial_dir / "events").rename(trial_dir / "real_events")
    os.symlink(trial_dir / "real_events", trial_dir / "events")
    trial = create_trial(trial_dir, **FAST)
    np.testing.assert_array_equal(trial.tensor("a").value(1), np.arange(4) + 100)
    # below that linked-inside parent, a step folder linked outside is refused
    (trial_dir / "real_events/000000000001").rename(outside / "step1")
    os.symlink(outside / "step1", trial_dir / "real_events/000000000001")
    with pytest.raises(PathEscapeError, match="outside the trial folder"):
        create_trial(trial_dir, **FAST).tensor("a").value(1)
    # one store, step 0's folder passed first; step 1's folder (a link out) is still refused
    store = LocalStorage(trial_dir)
    assert store.read("events/000000000000/000000000000_worker_0.tfevents")
    with pytest.raises(PathEscapeError, match="outside the trial folder"):
        store.read(f"{step1}/000000000001_worker_0.tfevents")
    # the events folder itself linked outside: refused before any step folder is looked at
    (trial_dir / "events").unlink()
    os.symlink(outside, trial_dir / "events")
    (outside / "000000000000").mkdir()
    with pytest.raises(PathEscapeError, match="outside the trial folder"):
        LocalStorage(trial_dir).read("events/000000000000/000000000000_worker_0.tfevents")


def test_many_step_folders_are_checked_by_one_listing_that_still_refuses_links_out(
    tmp_path: Path, tmp_path_factory
) -> None:
    """Past the first few step folders, one listing of ``events/`` checks the rest: a step folder
    that is a link out is refused all the same, whether it existed at the listing or came after."""
    from sagemaker_debugger_ext.storage import LocalStorage

    steps = 20
    for step in range(steps):
        with StepWriter(tmp_path, global_step=step, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=step) as w:
            w.write_tensor("a", np.arange(4, dtype=np.float32) + step)
    write_collections_file(tmp_path, "worker_0", {}, 1)
    write_training_end(tmp_path)
    outside = tmp_path_factory.mktemp("outside")
    for step in (15, 25):  # a link out among the listed folders, and one made after the listing
        folder = f"events/{step:012d}"
        if step < steps:
            (tmp_path / folder).rename(outside / "moved")
        else:
            (outside / "moved").mkdir(exist_ok=True)
        (outside / "moved" / f"{step:012d}_worker_0.tfevents").write_bytes(b"x")
        if step >= steps:
            continue
        os.symlink(outside / "moved", tmp_path / folder)
    store = LocalStorage(tmp_path)
    key = "events/{0:012d}/{0:012d}_worker_0.tfevents"
    for step in range(steps):
        if step == 15:
            with pytest.raises(PathEscapeError, match="outside the trial folder"):
                store.read(key.format(step))
        else:
            assert store.read(key.format(step))
    os.symlink(outside / "moved", tmp_path / "events/000000000025")
    with pytest.raises(PathEscapeError, match="outside the trial folder"):
        store.read(key.format(25))
    trial = create_trial(tmp_path, **FAST)
    for step in range(steps):
        if step != 15:
            np.testing.assert_array_equal(trial.tensor("a").value(step), np.arange(4) + step)
    with pytest.raises(PathEscapeError, match="outside the trial folder"):
        trial.tensor("a").value(15)


def test_a_missing_folder_is_not_remembered_as_checked(trial_dir: Path, tmp_path_factory) -> None:
    """A folder absent at the first read and created later as a link out is still refused."""
    from sagemaker_debugger_ext._exceptions import StorageNotFoundError
    from sagemaker_debugger_ext.storage import LocalStorage

    outside = tmp_path_factory.mktemp("outside")
    store = LocalStorage(trial_dir)
    with pytest.raises(StorageNotFoundError):
        store.read("events/000000000002/000000000002_worker_0.tfevents")
    (outside / "000000000002_worker_0.tfevents").write_bytes(b"x")
    os.symlink(outside, trial_dir / "events/000000000002")
    with pytest.raises(PathEscapeError, match="outside the trial folder"):
        store.read("events/000000000002/000000000002_worker_0.tfevents")


def test_files_are_read_whole_whatever_their_size(trial_dir: Path) -> None:
    """LocalStorage.read returns every byte (empty files, files bigger than one read call)."""
    from sagemaker_debugger_ext.storage import LocalStorage

    store = LocalStorage(trial_dir)
    (trial_dir / "empty").write_bytes(b"")
    big = np.random.default_rng(0).bytes(3 << 20)
    (trial_dir / "big").write_bytes(big)
    assert store.read("empty") == b""
    assert store.read("big") == big


@pytest.mark.parametrize("length, start", [(2**40, 0), (64, 2**40), (2**30, 0)])
def test_s3_ranged_reads_check_the_real_size(trial_dir: Path, length: int, start: int) -> None:
    """Item 1 on S3: a length past the object's end is refused (HEAD first for big ones) and
    a range past the end (InvalidRange) is a truncated record, not StorageError or MemoryError."""
    from moto import mock_aws

    _edit_index(trial_dir, INDEX, lambda d: d["tensor_payload"][0].update(length=length, start_idx=start))
    with mock_aws():
        upload_to_moto(trial_dir)
        trial = create_trial("s3://bkt/run", **FAST)
        with pytest.raises(
            TruncatedRecordError, match=r"s3://bkt/run/events/000000000001/000000000001_worker_0.tfevents is truncated"
        ):
            trial.tensor("a").value(1)
        np.testing.assert_array_equal(trial.tensor("a").value(0), np.arange(4))
