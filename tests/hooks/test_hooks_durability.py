"""A saved step is on disk while the hook is still open, and a killed training process
loses at most the step in flight (real subprocesses, real SIGKILL, real files)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from polling import wait_until

from sagemaker_debugger_ext.trials import create_trial

pytestmark = pytest.mark.slow  # trains in subprocesses

_TRAIN = """
import sys
import torch
import sagemaker_debugger_ext.pytorch as smd

torch.manual_seed(0)
width = int(sys.argv[3])  # a wide model makes each step's files slow to write
model = torch.nn.Sequential(torch.nn.Linear(8, width), torch.nn.ReLU(), torch.nn.Linear(width, 2))
hook = smd.Hook(out_dir=sys.argv[1], save_config=smd.SaveConfig(save_interval=1),
                include_collections=["weights", "gradients", "losses"])
hook.register_module(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 8)
stop = int(sys.argv[2])
for step in range(stop + 1):
    opt.zero_grad()
    model(x).sum().backward()      # the forward starts this step and leaves the previous one
    opt.step()
    print(step, flush=True)
sys.stdin.readline()               # step `stop` in flight: wait to be killed
"""


def _start(tmp_path: Path, stop: int, width: int = 8) -> tuple[subprocess.Popen[str], Path]:
    script = tmp_path / "train.py"
    script.write_text(_TRAIN)
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, str(script), str(out), str(stop), str(width)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == str(stop):
            return proc, out
    raise AssertionError(proc.stderr.read() if proc.stderr else "no output")


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL


def _check_readable(run: Path, steps: list[int]) -> None:
    trial = create_trial(str(run))
    assert trial.steps() == steps
    for step in steps:
        for name in ("Sequential_0.weight", "gradient/Sequential_2.weight"):
            assert np.isfinite(trial.tensor(name).value(step)).all()


def test_left_steps_on_disk_with_hook_open_then_sigkill_loses_only_step_in_flight(tmp_path: Path) -> None:
    """Every step the training left is readable while the hook is open (polled); SIGKILL then
    loses exactly the step in flight."""
    proc, out = _start(tmp_path, stop=6)
    try:
        left = list(range(6))
        started = time.monotonic()
        wait_until(lambda: create_trial(str(out)).steps() == left, timeout_s=30, what="steps 0-5 on disk")
        print(f"left steps visible after {1000 * (time.monotonic() - started):.1f} ms (hook open)")
    finally:
        _kill(proc)
    _check_readable(out, list(range(6)))


@pytest.mark.parametrize("width", [8, 400_000])  # 400k: 13 MB of files per step, written while step 6 runs
def test_immediate_sigkill_loses_only_the_step_in_flight(tmp_path: Path, width: int) -> None:
    """Killed right after step 6 trained: steps 0-5 are complete on disk, with no wait at all.

    Step 6 saved its parameters when it started, and a step holds nothing before the previous
    step's files are written, so only step 6, the one in flight, is lost (before this, step 5
    could still sit in the writer thread and be lost too)."""
    proc, out = _start(tmp_path, stop=6, width=width)
    _kill(proc)
    _check_readable(out, list(range(6)))
