"""Where the device reductions' records are filled: batches reduced on the training thread (as
on CUDA) are filled by a job of the hook's writer queue before the step is encoded, so the
step's end does not wait for the device's copy."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
import torch
from test_pytorch_device_reductions import SAVED_OPS, _net, train_recording

from sagemaker_debugger_ext.trials import create_trial


@pytest.mark.parametrize("on_writer", [True, False], ids=["writer", "step-end"])
def test_results_made_on_the_training_thread_are_filled_where_the_step_is_encoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_writer: bool
) -> None:
    """Batches reduced on the training thread (as on CUDA; ``off_thread`` False here on CPU)
    have their records filled by a job of the hook's writer queue, just before the step is
    encoded, not by the step's end (``finish``), which then does not wait for the device's copy
    (``copies_on_writer``; False: the step's end fills them); the stored values are the NumPy
    path's either way. (The writer's job may run on the training thread when it waits for the
    writer: what is asserted is that ``finish`` does not run it.)"""
    from sagemaker_debugger_ext.hooks.pytorch import _device_reductions

    reductions = _device_reductions.DeviceReductions
    monkeypatch.setattr(reductions, "off_thread", False)
    monkeypatch.setattr(reductions, "copies_on_writer", on_writer)
    in_finish = threading.local()
    filled_in_finish: list[bool] = []
    fill, finish = _device_reductions.fill_records, reductions.finish

    def fill_recording(*args: object) -> None:
        filled_in_finish.append(getattr(in_finish, "now", False))
        fill(*args)  # type: ignore[arg-type]

    def finish_recording(self: object, *args: object) -> None:
        in_finish.now = True
        try:
            finish(self, *args)  # type: ignore[arg-type]
        finally:
            in_finish.now = False

    monkeypatch.setattr(_device_reductions, "fill_records", fill_recording)
    monkeypatch.setattr(reductions, "finish", finish_recording)
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(2))
    _, expected, _ = train_recording(tmp_path / "run", _net(), x)
    assert filled_in_finish and set(filled_in_finish) == {not on_writer}
    trial = create_trial(str(tmp_path / "run"))
    for (name, step), want in expected.items():
        stored = trial.tensor(name).reduction_values(step)
        for key, w in zip(SAVED_OPS, want, strict=True):
            np.testing.assert_array_equal(stored[key], w, err_msg=f"{name} step {step} {key}")
