"""Profiler overhead: training step time with the system monitor at 500 ms vs without.

``profiler_overhead`` = the median, over interleaved pairs of blocks (off, on, off, on, ...),
of (median step time with the monitor process running / median step time without) - 1.
Pairing adjacent blocks cancels drift in machine load; the median over pairs drops blocks
hit by a noisy neighbour. The monitor is started fresh for each "on" block and is past its
start-up (first sample written) before timing begins. The "training step" is a small PyTorch MLP forward/backward/SGD
step on CPU (a NumPy matmul step when torch is missing).
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BLOCKS = 16
STEPS_PER_BLOCK = 200


def _make_step() -> Callable[[], None]:
    try:
        import torch
    except ImportError:
        import numpy as np

        a = np.random.default_rng(0).standard_normal((256, 256)).astype("float32")

        def np_step() -> None:
            (a @ a).sum()

        return np_step
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(128, 256)
    y = torch.randint(0, 10, (128,))
    loss_fn = torch.nn.CrossEntropyLoss()

    def torch_step() -> None:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    return torch_step


def _block(step: Callable[[], None]) -> float:
    times = []
    for _ in range(STEPS_PER_BLOCK):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _start_monitor(out: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sagemaker_debugger_ext.profiler", "monitor", "--output-dir", out,
         "--interval-ms", "500"], env=env,
    )
    deadline = time.monotonic() + 60
    while not list(Path(out).glob("system/incremental/*/*.json")):
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError("system monitor did not start")
        time.sleep(0.05)
    return proc


def run() -> dict[str, object]:
    """Measure ``profiler_overhead`` (target <= 0.02)."""
    step = _make_step()
    for _ in range(30):  # warm up
        step()
    off: list[float] = []
    on: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(BLOCKS):
            off.append(_block(step))
            proc = _start_monitor(os.path.join(tmp, f"run{i}"))
            try:
                on.append(_block(step))
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=10)
    base = statistics.median(off)
    with_monitor = statistics.median(on)
    ratios = [b / a for a, b in zip(off, on)]
    return {
        "profiler_overhead": round(statistics.median(ratios) - 1, 4),
        "profiler_overhead_pairs": len(ratios),
        "profiler_step_ms_without_monitor": round(base * 1000, 3),
        "profiler_step_ms_with_monitor_500ms": round(with_monitor * 1000, 3),
    }


if __name__ == "__main__":
    print(run())
