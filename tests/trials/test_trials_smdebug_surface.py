"""smdebug's analysis surface without the oracle: no_refresh/refresh, trial.collection, LocalTrial,
core.writer/core.reader, CollectionManager files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext._exceptions import ConfigTypeError, ConfigValueError
from sagemaker_debugger_ext.analysis.utils import no_refresh, refresh
from sagemaker_debugger_ext.core.collection_manager import CollectionManager
from sagemaker_debugger_ext.core.modes import ModeKeys
from sagemaker_debugger_ext.core.reader import FileReader
from sagemaker_debugger_ext.core.writer import FileWriter
from sagemaker_debugger_ext.exceptions import SMDebugRuntimeError
from sagemaker_debugger_ext.trials import LocalTrial, Trial, create_trial

FAST = {"poll_interval_s": 0.01, "wait_timeout_s": 5}


def _trial(root: Path, steps: range) -> None:
    for s in steps:
        with FileWriter(trial_dir=str(root), step=s, worker="worker_0") as fw:
            fw.write_tensor(tdata=np.full(3, s, dtype=np.float32), tname="w", mode=ModeKeys.TRAIN, mode_step=s)
    cm = CollectionManager()
    cm.add("default")
    cm.get("default").tensor_names = ["w"]
    cm.export(str(root), "worker_0_collections.json")


def test_no_refresh_single_trial_and_list(tmp_path: Path) -> None:
    """no_refresh takes one trial (formerly TypeError) or a list, yields it, restores the flag."""
    _trial(tmp_path, range(2))
    trial = create_trial(tmp_path, **FAST)
    _trial(tmp_path, range(2, 3))
    with no_refresh(trial) as got:
        assert got is trial and trial.dynamic_refresh is False and trial.steps() == [0, 1]
    assert trial.dynamic_refresh is True
    with no_refresh([trial]) as got_list:
        assert got_list == [trial] and trial.steps() == [0, 1]
    trial.dynamic_refresh = False
    with refresh(trial):
        assert trial.steps() == [0, 1, 2]
    assert trial.dynamic_refresh is False  # restored, also when it was off before
    with pytest.raises(RuntimeError), no_refresh(trial):
        raise RuntimeError("boom")
    assert trial.dynamic_refresh is False
    with pytest.raises(ConfigTypeError, match="trials"), no_refresh("not a trial"):
        pass


def test_new_collection_filled_by_include(tmp_path: Path) -> None:
    """trial.collection('new') is empty; include() and add_tensor_name() select tensors."""
    _trial(tmp_path, range(1))
    with FileWriter(trial_dir=str(tmp_path), step=1, worker="worker_0") as fw:
        fw.write_tensor(tdata=np.zeros(1), tname="bias")
    trial = create_trial(tmp_path, **FAST)
    coll = trial.collection("mine")
    assert trial.tensor_names(collection=coll) == [] and trial.collection("mine") is coll
    coll.include("^w$")
    assert trial.tensor_names(collection="mine") == ["w"]
    coll.add_tensor_name("bias")
    assert trial.tensor_names(collection=coll) == ["bias", "w"]
    with pytest.raises(ConfigValueError, match="valid regex"):
        coll.include("(")
    assert trial.tensor_names(collection="typo") == []  # smdebug 1.0.34: nothing, and a warning


def test_local_trial_and_reader(tmp_path: Path) -> None:
    """LocalTrial(name, dir) is a Trial; FileReader reads what FileWriter wrote."""
    _trial(tmp_path, range(3))
    trial = LocalTrial("t", str(tmp_path))
    assert isinstance(trial, Trial) and trial.name == "t" and trial.steps() == [0, 1, 2]
    fw = FileWriter(trial_dir=str(tmp_path / "b"), step=5, worker="w1")
    with pytest.raises(SMDebugRuntimeError):
        fw.name()
    fw.write_tensor(tdata=np.arange(4), tname="x", mode=ModeKeys.EVAL, mode_step=2, timestamp=123.5)
    fw.close()
    ((name, step, value, mode, mode_step),) = FileReader(fw.name()).read_tensors()
    assert (name, step, value.tolist(), mode, mode_step) == ("x", 5, [0, 1, 2, 3], ModeKeys.EVAL, 2)
    assert FileReader(fw.name()).read_events(regex_list=["x"])[0]["timestamp"] == 123.5


def test_file_writer_bad_input(tmp_path: Path) -> None:
    """Clear errors: remote trial_dir, unknown wtype, a bad mode, two modes in one writer."""
    with pytest.raises(ConfigValueError, match="trial_dir"):
        FileWriter(trial_dir="s3://b/p", worker="w")
    with pytest.raises(ConfigValueError, match="wtype"):
        FileWriter(trial_dir=str(tmp_path), worker="w", wtype="trace")
    fw = FileWriter(trial_dir=str(tmp_path), worker="w")
    with pytest.raises(ConfigValueError, match="mode"):
        fw.write_tensor(tdata=np.zeros(1), tname="a", mode="TRAIN")
    fw.write_tensor(tdata=np.zeros(1), tname="a", mode=ModeKeys.TRAIN)
    with pytest.raises(ConfigValueError, match="mode"):
        fw.write_tensor(tdata=np.zeros(1), tname="b", mode=ModeKeys.EVAL)
    with pytest.raises(ConfigValueError, match="filename"):
        CollectionManager().export(str(tmp_path), "collections.json")


def test_incomplete_step_window_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """create_trial reads SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW as smdebug does; a bad value is named."""
    _trial(tmp_path, range(1))
    monkeypatch.setenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "7")
    assert create_trial(tmp_path, **FAST)._loader._window == 7
    assert create_trial(tmp_path, incomplete_step_window=3, **FAST)._loader._window == 3
    monkeypatch.setenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "many")
    with pytest.raises(ConfigValueError, match="SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW"):
        create_trial(tmp_path, **FAST)
