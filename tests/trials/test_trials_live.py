"""Trials written by our StepWriter: refresh while writing, workers, completeness, waits."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext._exceptions import ConfigValueError, StorageNotFoundError
from sagemaker_debugger_ext.exceptions import (
    InvalidWorker,
    MissingCollectionFiles,
    NoMoreData,
    StepNotYetAvailable,
    StepUnavailable,
    TensorUnavailableForStep,
)
from sagemaker_debugger_ext.format import (
    StepWriter,
    write_collections_file,
    write_training_end,
)
from sagemaker_debugger_ext.modes import ModeKeys
from sagemaker_debugger_ext.storage import MemoryStorage
from sagemaker_debugger_ext.trials import StepState, create_trial

FAST = {"poll_interval_s": 0.01, "wait_timeout_s": 2.0}


def _step(root: Path, step: int, worker: str = "worker_0", mode: ModeKeys = ModeKeys.TRAIN,
          mode_step: int | None = None, value: float | None = None) -> None:  # fmt: skip
    with StepWriter(
        root, global_step=step, worker=worker, mode=mode, mode_step=step if mode_step is None else mode_step
    ) as w:
        w.write_tensor("w", np.full((2, 2), step if value is None else value, np.float32))
        w.write_tensor("loss", np.float32(step) / 10)


def test_refresh_sees_steps_written_after_creation(tmp_path: Path) -> None:
    """Steps written after create_trial appear on the next query; the end marker ends refreshes."""
    write_collections_file(tmp_path, "worker_0", {}, 1)
    _step(tmp_path, 0)
    trial = create_trial(tmp_path, **FAST)
    assert trial.steps() == [0] and not trial.loaded_all_steps
    assert trial.has_passed_step(1) == StepState.NOT_YET_AVAILABLE
    with pytest.raises(StepNotYetAvailable):
        trial.tensor("w").value(1)
    _step(tmp_path, 1)
    _step(tmp_path, 3)
    assert trial.steps() == [0, 1, 3]
    assert trial.tensor("w").value(3).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert trial.has_passed_step(2) == StepState.UNAVAILABLE  # skipped: a later step is complete
    write_training_end(tmp_path)
    assert trial.has_passed_step(9) == StepState.UNAVAILABLE and trial.loaded_all_steps
    with pytest.raises(NoMoreData):
        trial.wait_for_steps([9])
    with pytest.raises(StepUnavailable):
        trial.wait_for_steps([2])


def test_wait_for_steps_returns_when_a_writer_catches_up(tmp_path: Path) -> None:
    """wait_for_steps polls until a concurrent writer produces the step."""
    write_collections_file(tmp_path, "worker_0", {}, 1)
    _step(tmp_path, 0)
    trial = create_trial(tmp_path, **FAST)
    started = threading.Event()

    def writer() -> None:
        started.set()
        for s in range(1, 6):
            _step(tmp_path, s)

    thread = threading.Thread(target=writer)
    thread.start()
    started.wait(5)
    trial.wait_for_steps([5], timeout_s=10)
    thread.join(10)
    assert trial.tensor("w").steps(mode=ModeKeys.TRAIN) == [0, 1, 2, 3, 4, 5]


def test_wait_for_steps_has_a_deadline(tmp_path: Path) -> None:
    """A step that never comes raises StepNotYetAvailable once the deadline passes."""
    write_collections_file(tmp_path, "worker_0", {}, 1)
    _step(tmp_path, 0)
    trial = create_trial(tmp_path, **FAST)
    with pytest.raises(StepNotYetAvailable, match="step 4 of mode GLOBAL"):
        trial.wait_for_steps([4], timeout_s=0.05)


def test_two_workers_and_completeness(tmp_path: Path) -> None:
    """A step is complete once both workers wrote it, or once a later step is complete."""
    for w in ("worker_0", "worker_1"):
        write_collections_file(tmp_path, w, {}, 2)
    _step(tmp_path, 0, "worker_0", value=1)
    _step(tmp_path, 0, "worker_1", value=2)
    _step(tmp_path, 1, "worker_0")
    trial = create_trial(tmp_path, **FAST)
    assert trial.workers() == ["worker_0", "worker_1"] and trial.num_workers == 2
    assert trial.steps() == [0] and trial.steps(show_incomplete_steps=True) == [0, 1]
    assert trial.has_passed_step(1) == StepState.NOT_YET_AVAILABLE
    w = trial.tensor("w")
    assert w.workers(0) == ["worker_0", "worker_1"]
    assert w.value(0, worker="worker_1")[0, 0] == 2 and w.value(0)[0, 0] == 1
    with pytest.raises(InvalidWorker):
        w.value(0, worker="worker_7")
    _step(tmp_path, 2, "worker_0")
    _step(tmp_path, 2, "worker_1")
    assert trial.steps() == [0, 1, 2]  # step 1 is complete because step 2 is


def test_tensors_saved_by_some_workers_only_whatever_order_their_index_files_come_in(tmp_path: Path) -> None:
    """Each tensor of a step answers for the workers that saved something of it (a value, a
    reduction): worker_1's step is read before worker_0's, which saves other tensors."""
    for w in ("worker_0", "worker_1"):
        write_collections_file(tmp_path, w, {}, 2)
    with StepWriter(tmp_path, global_step=0, worker="worker_1", mode=ModeKeys.TRAIN, mode_step=0) as sw:
        sw.write_tensor("both", np.full(2, 1.0, np.float32))
        sw.write_tensor("only1", np.full(2, 11.0, np.float32))
    trial = create_trial(tmp_path, **FAST)
    assert trial.tensor("only1").value(0).tolist() == [11.0, 11.0] and trial.tensor("both").workers(0) == ["worker_1"]
    with StepWriter(tmp_path, global_step=0, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=0) as sw:
        sw.write_tensor("both", np.full(2, 0.0, np.float32))
        sw.write_tensor("only0", np.full(2, 10.0, np.float32))
        sw.write_tensor("smdebug/reductions/max/only1", np.float32(5.0))  # worker_0 saved a reduction of only1
    write_training_end(tmp_path)
    assert trial.tensor_names(step=0) == ["both", "only0", "only1"]
    both, only0, only1 = (trial.tensor(n) for n in ("both", "only0", "only1"))
    assert both.workers(0) == ["worker_0", "worker_1"] and both.value(0).tolist() == [0.0, 0.0]
    assert both.value(0, worker="worker_1").tolist() == [1.0, 1.0]
    assert only0.workers(0) == ["worker_0"] and only0.value(0).tolist() == [10.0, 10.0]
    with pytest.raises(InvalidWorker):
        only0.value(0, worker="worker_1")
    assert only1.workers(0) == ["worker_0", "worker_1"]
    assert only1.value(0, worker="worker_1").tolist() == [11.0, 11.0]
    with pytest.raises(TensorUnavailableForStep):  # worker_0, the first, saved only a reduction of it
        only1.value(0)
    assert only1.has_reductions(0) and np.ravel(only1.reduction_value(0, "max")).tolist() == [5.0]
    assert trial.steps() == [0] and trial.last_complete_step == 0


def test_modes_and_mode_steps(tmp_path: Path) -> None:
    """TRAIN/EVAL/GLOBAL steps map to global steps; tensor_names filters by mode and step."""
    write_collections_file(tmp_path, "worker_0", {"losses": {"name": "losses", "include_regex": ["loss"],
                                                             "tensor_names": []}}, 1)  # fmt: skip
    _step(tmp_path, 0, mode=ModeKeys.TRAIN, mode_step=0)
    _step(tmp_path, 1, mode=ModeKeys.EVAL, mode_step=0)
    with StepWriter(tmp_path, global_step=2, worker="worker_0") as sw:  # GLOBAL, mode_step = 2
        sw.write_tensor("g", np.arange(3))
    write_training_end(tmp_path)
    trial = create_trial(tmp_path, **FAST)
    assert trial.steps(mode=ModeKeys.EVAL) == [0] and trial.global_step(ModeKeys.EVAL, 0) == 1
    assert trial.mode(2) == ModeKeys.GLOBAL and trial.mode_step(2) == 2
    assert trial.tensor("g").value(2).tolist() == [0, 1, 2]
    assert trial.tensor_names(mode=ModeKeys.EVAL) == ["loss", "w"]
    assert trial.tensor_names(step=2) == ["g"]
    assert trial.tensor_names(collection="losses") == ["loss"]
    assert trial.tensor("w").value(0, mode=ModeKeys.EVAL)[0, 0] == 1
    assert trial.tensor_names(collection="nope") == []  # smdebug 1.0.34: nothing, and a warning
    assert trial.collection("nope").tensor_names == set()
    with pytest.raises(ConfigValueError, match="only one of"):
        trial.tensor_names(regex="w", collection="losses")


def test_range_steps_limits_loading(tmp_path: Path) -> None:
    """range_steps=(2, 4) loads only global steps 2 and 3."""
    write_collections_file(tmp_path, "worker_0", {}, 1)
    for s in range(6):
        _step(tmp_path, s)
    write_training_end(tmp_path)
    trial = create_trial(tmp_path, range_steps=(2, 4), **FAST)
    assert trial.steps() == [2, 3]
    with pytest.raises(ConfigValueError, match="'range_steps' must be"):
        create_trial(tmp_path, range_steps=(4, 2))


def test_reductions_computed_on_flattened_tensor(tmp_path: Path) -> None:
    """Computed l1/l2 use the flattened tensor; stored reductions come back as stored."""
    value = np.array([[3.0, -4.0], [0.0, 12.0]])
    with StepWriter(tmp_path, global_step=0, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=0) as sw:
        sw.write_tensor("m", value)
        sw.write_tensor("smdebug/reductions/abs_max/m", np.float32(99))
    write_collections_file(tmp_path, "worker_0", {}, 1)
    write_training_end(tmp_path)
    m = create_trial(tmp_path, **FAST).tensor("m")
    assert m.reduction_value(0, "l2") == pytest.approx(13.0)
    assert m.reduction_value(0, "l1") == pytest.approx(19.0)
    assert m.reduction_value(0, "min", abs=True) == 0.0
    assert m.reduction_value(0, "max", abs=True).tolist() == [99.0]  # stored wins
    assert list(m.reduction_values(0)) == [("max", True)]
    with pytest.raises(ConfigValueError, match="'reduction_name' must be one of"):
        m.reduction_value(0, "median")


def test_memory_storage_trial(tmp_path: Path) -> None:
    """A trial can be read from the in-memory Storage fake."""
    write_collections_file(tmp_path, "worker_0", {}, 1)
    _step(tmp_path, 0)
    write_training_end(tmp_path)
    objects = {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    trial = create_trial(MemoryStorage(objects), **FAST)
    assert trial.tensor("loss").value(0).tolist() == pytest.approx([0.0])


def test_missing_path_and_missing_collections(tmp_path: Path) -> None:
    """A missing folder fails at once; a folder without collections times out or ends clearly."""
    with pytest.raises(StorageNotFoundError, match="does not exist"):
        create_trial(tmp_path / "nope", **FAST)
    _step(tmp_path, 0)
    with pytest.raises(MissingCollectionFiles, match="within 0.05 s"):
        create_trial(tmp_path, poll_interval_s=0.01, wait_timeout_s=0.05)
    write_training_end(tmp_path)
    with pytest.raises(MissingCollectionFiles, match="training has ended"):
        create_trial(tmp_path, **FAST)
    write_collections_file(tmp_path, "worker_0", {}, 2)  # says 2 workers, only 1 file
    with pytest.raises(MissingCollectionFiles, match="1 of 2"):
        create_trial(tmp_path, **FAST)


def test_local_listing_skips_folders_before_start_after(tmp_path: Path) -> None:
    """LocalStorage.list honours start_after across index folders (steps 999 and 1000)."""
    from sagemaker_debugger_ext.storage import LocalStorage

    write_collections_file(tmp_path, "worker_0", {}, 1)
    for s in (5, 999, 1000, 2001):
        _step(tmp_path, s)
    st = LocalStorage(tmp_path)
    keys = list(st.list("index/", start_after="index/000000000/000000000999"))
    assert keys == ["index/000000000/000000000999_worker_0.json", "index/000000001/000000001000_worker_0.json",
                    "index/000000002/000000002001_worker_0.json"]  # fmt: skip
    trial = create_trial(tmp_path, **FAST)
    assert trial.steps() == [5, 999, 1000, 2001]


def test_profiler_flag_opens_a_profiler_trial(tmp_path: Path) -> None:
    """create_trial(path, profiler=True) returns the profiler trial, as in smdebug; bad kwargs fail."""
    from sagemaker_debugger_ext.profiler import ProfilerTrial

    assert isinstance(create_trial(tmp_path, profiler=True), ProfilerTrial)
    with pytest.raises(ConfigValueError, match="'create_trial keyword' must be a known argument"):
        create_trial(tmp_path, colour="red")


def test_changing_shapes_and_dtypes_between_steps(tmp_path: Path) -> None:
    """A tensor whose shape or dtype changes from step to step reads back right at each step."""
    write_collections_file(tmp_path, "worker_0", {}, 1)
    values = [np.arange(3, dtype=np.float32), np.arange(4, dtype=np.float32), np.arange(4, dtype=np.int32),
              np.arange(4, dtype=np.float32).reshape(2, 2), np.array(["a", "b"]), np.arange(4, dtype=np.float32)]  # fmt: skip
    for s, v in enumerate(values):
        with StepWriter(tmp_path, global_step=s, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=s * 7) as w:
            w.write_tensor("x", v)
            w.write_tensor("y", v)
    write_training_end(tmp_path)
    trial = create_trial(tmp_path, **FAST)
    for _ in range(2):  # second pass reads through the learned layouts
        for s, v in enumerate(values):
            for name in ("x", "y"):
                got = trial.tensor(name).value(s)
                assert got.dtype == v.dtype and got.shape == v.shape
                np.testing.assert_array_equal(got, v)
