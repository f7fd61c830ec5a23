"""A reader in the process of a hook that writes the same trial sees every finished step,
however slow the hook's writer thread is (smdebug wrote on the training thread, and its
tests read back right after training, without ``close()``)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext.format._in_process import flush_writers_under
from sagemaker_debugger_ext.hooks import Hook, SaveConfig, TrainingContext
from sagemaker_debugger_ext.trials import create_trial

HOG = "import time\nend = time.monotonic() + 60\nwhile time.monotonic() < end:\n    pass\n"


@pytest.fixture
def cpu_hog() -> Iterator[None]:
    """One busy process for the test's duration (on top of whatever else loads the machine)."""
    proc = subprocess.Popen([sys.executable, "-c", HOG])
    try:
        yield
    finally:
        proc.kill()
        proc.wait()


def _train(out: Path, gate: threading.Event, steps: int = 100) -> Hook:
    """smdebug's test_modes pattern: save every 20 steps; the writer thread is held back from
    the last saved step on (``gate``), so its files are still queued when training ends."""
    hook = Hook(out_dir=out, save_config=SaveConfig(save_interval=20), include_collections=["weights"],
                context=TrainingContext())  # fmt: skip
    for step in range(steps):
        hook.advance_step()
        hook.record_tensor_value("fc.weight", np.full((3, 3), step, dtype=np.float32))
        if step == 80:  # the step's files are handed over when step 81 starts: after this
            assert hook._writer.background is not None
            hook._writer.background.submit_call(lambda: gate.wait(60), counted=False)  # a slowed writer
    return hook


def test_reader_in_process_sees_the_last_finished_step(tmp_path: Path, cpu_hog: None) -> None:
    """create_trial right after training, without close(): every saved step, under load."""
    gate = threading.Event()
    hook = _train(tmp_path / "out", gate)
    # the training thread never waited for the held-back writer: step 80 is not on disk yet
    assert not list((tmp_path / "out" / "index").glob("*/000000000080_*.json"))
    opener = threading.Timer(1.5, gate.set)  # the slow writer gets there eventually
    opener.start()
    try:
        trial = create_trial(str(tmp_path / "out"))
        assert trial.steps() == [0, 20, 40, 60, 80]
        assert trial.tensor("fc.weight").value(80)[0, 0] == 80
    finally:
        opener.cancel()
        gate.set()
        hook.close()
    assert create_trial(str(tmp_path / "out")).steps() == [0, 20, 40, 60, 80]


def test_refresh_flushes_and_other_folders_do_not(tmp_path: Path) -> None:
    """An open trial's refresh sees steps finished since; a reader of another folder (even a
    sibling whose name starts the same) flushes nothing; a closed hook leaves the table."""
    hook = Hook(out_dir=tmp_path / "run", save_config=SaveConfig(save_interval=1), include_collections=["weights"],
                context=TrainingContext())  # fmt: skip
    hook.advance_step()
    hook.record_tensor_value("fc.weight", np.ones(2))
    hook.advance_step()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps() == [0]
    hook.record_tensor_value("fc.weight", np.ones(2))
    hook.advance_step()  # step 1 finished
    assert trial.steps() == [0, 1]
    (tmp_path / "run2").mkdir()
    assert flush_writers_under(tmp_path / "run2") == 0
    assert flush_writers_under(tmp_path / "run") == 1
    assert flush_writers_under(tmp_path) == 1  # a folder holding the trial
    hook.close()
    assert flush_writers_under(tmp_path / "run") == 0
