"""Run a script under real ``torchrun --nproc_per_node=2`` (gloo, CPU) for the DDP/FSDP tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def torchrun(script: Path, *args: str, python: Path | None = None, timeout_s: int = 600) -> None:
    """Run ``script`` as two ranks (``--standalone``: a free rendezvous port); fail with its output.

    The deadline is generous: under load, starting three Python processes that import torch
    and initialising a process group can take minutes.
    """
    ours = python is None
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SMDEBUG", "SMPROFILER", "SM_", "RANK", "WORLD_SIZE"))
    }
    env.update(OMP_NUM_THREADS="1", PYTHONPATH=str(REPO) if ours else "", TORCH_CPP_LOG_LEVEL="ERROR")
    # two CPU ranks (gloo) also on a GPU machine: fully_shard's default mesh would put rank 1 on a second GPU
    env["CUDA_VISIBLE_DEVICES"] = ""
    argv = [str(python or sys.executable), "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
            str(script), *args]  # fmt: skip
    # its own session: on a timeout the whole group (torchrun and both ranks) is killed
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            cwd=script.parent, start_new_session=True)  # fmt: skip
    try:
        output, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:  # pragma: no cover - a hung collective
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        pytest.fail(f"torchrun {script.name} did not finish in {timeout_s} s:\n{output[-6000:]}")
    assert proc.returncode == 0, output[-6000:]
