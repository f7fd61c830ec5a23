"""Profiler overhead: training step time with the system monitor at 500 ms vs without.

``profiler_overhead`` = the median, over interleaved pairs of blocks (off, on, off, on, ...),
of (median step time while the monitor samples every 500 ms / median step time while it
does not) - 1. Pairs run in ABBA order with the same idle pause before every block; pairing
adjacent blocks cancels drift in machine load and the median over pairs drops blocks hit by
a noisy neighbour. ``profiler_monitor_cpu_fraction_500ms`` is the
monitor's own CPU time per wall-clock second, a load-independent view of the same cost. The "training step" is a small PyTorch MLP forward/backward/SGD
step on CPU (a NumPy matmul step when torch is missing).
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
BLOCKS = 30  # pairs
STEPS_PER_BLOCK = 200
BLOCK_SECONDS = 0.8  # a block ends after this long even if the machine is slow


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
    times: list[float] = []
    end = time.perf_counter() + BLOCK_SECONDS
    while len(times) < STEPS_PER_BLOCK and (len(times) < 10 or time.perf_counter() < end):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _write_config(path: Path, *, disabled: bool) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"DisableProfiler": disabled, "ProfilingIntervalInMilliseconds": 500}))
    os.replace(tmp, path)


def _samples(out: Path) -> int:
    return sum(len(p.read_bytes().splitlines()) for p in out.glob("system/incremental/*/*.json"))


def _wait(cond: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not cond():
        if time.monotonic() > deadline:
            raise RuntimeError(what)
        time.sleep(0.02)


def run() -> dict[str, object]:
    """Measure ``profiler_overhead`` (target <= 0.02).

    One monitor process runs throughout, watching its ``profilerconfig.json``; "without"
    blocks pause it (``DisableProfiler: true``: the process sleeps, it samples nothing),
    "with" blocks let it sample every 500 ms. Its start-up, a one-off cost, is excluded.
    """
    step = _make_step()
    for _ in range(30):  # warm up
        step()
    off: list[float] = []
    on: list[float] = []
    monitor_cpu = monitor_wall = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        out, config = Path(tmp) / "prof", Path(tmp) / "profilerconfig.json"
        _write_config(config, disabled=False)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sagemaker_debugger_ext.profiler",
                "monitor",
                "--output-dir",
                str(out),
                "--interval-ms",
                "500",
                "--config-file",
                str(config),
            ],
            env=env,
        )
        try:
            _wait(lambda: _samples(out) > 0, "system monitor did not start")
            ps = psutil.Process(proc.pid)
            for i in range(BLOCKS):
                # ABBA order, and the same idle pause before every block: a process that
                # slept runs faster for a while (scheduler credit), which would otherwise
                # favour whichever block follows the pause.
                for sampling in (False, True) if i % 2 == 0 else (True, False):
                    before = _samples(out)
                    _write_config(config, disabled=not sampling)
                    if sampling:
                        _wait(lambda: _samples(out) > before, "monitor did not resume")  # noqa: B023
                    else:
                        _wait_quiet(out)
                    time.sleep(0.3)
                    c0, w0 = sum(ps.cpu_times()[:2]), time.perf_counter()
                    (on if sampling else off).append(_block(step))
                    if sampling:
                        monitor_cpu += sum(ps.cpu_times()[:2]) - c0
                        monitor_wall += time.perf_counter() - w0
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=10)
    ratios = [b / a for a, b in zip(off, on)]
    return {
        "profiler_overhead": round(statistics.median(ratios) - 1, 4),
        "profiler_overhead_pairs": len(ratios),
        "profiler_monitor_cpu_fraction_500ms": round(monitor_cpu / monitor_wall, 5) if monitor_wall else None,
        "profiler_step_ms_without_monitor": round(statistics.median(off) * 1000, 3),
        "profiler_step_ms_with_monitor_500ms": round(statistics.median(on) * 1000, 3),
    }


def _wait_quiet(out: Path) -> None:
    """Wait until the paused monitor has written its last sample (no new line for 0.6 s)."""
    last, since = _samples(out), time.monotonic()
    while time.monotonic() - since < 0.6:
        time.sleep(0.05)
        now = _samples(out)
        if now != last:
            last, since = now, time.monotonic()


if __name__ == "__main__":
    print(run())
