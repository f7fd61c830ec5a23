"""Hook overhead: PyTorch MLP step time with the hook vs without, in the same process.

The hook saves weights, gradients, losses and ReLU outputs (raw tensors, ~1.6 MB per saved
step) every 10 steps (``hook_overhead_interval10``) and every step
(``hook_overhead_interval1``). Overhead = steady-state step time with the hook / step time
without - 1, the median over repeats of each hooked run against the baseline run just before
it. Steady state: every run (baseline too) first trains ``WARMUP`` untimed steps, which hold
the hook's one-time set-up (first saved step, first collections JSON, writer thread start);
then ``STEPS`` timed steps (30 save cycles at interval 10, saved steps included). The hook's
``close()`` (waiting for the last files, rewriting the collections JSON) happens once per
run and is reported separately as ``hook_close_ms``.
Runs are interleaved (baseline, interval 10, interval 1, interval 10 on tmpfs, repeated) so
drifts in machine speed hit all of them. ``hook_overhead_interval10_tmpfs`` writes to
``/dev/shm``: the hook's own CPU cost without the disk. ``hook_cpu_overhead_*`` compare
process CPU time (all threads, the background writer included) instead of wall time: on a
machine shared with other work they are the steadier numbers. ``hook_train_thread_*`` compare
the CPU time of the training thread alone: the hook's cost on the training loop when the
background writer has a core of its own.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

WARMUP = 20
STEPS = 300
REPEATS = 7
BATCH = 256


def _model() -> Any:
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(256, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, 10),
    )


def _time_steps(
    model: Any,
    hook: Any,
    steps: int,
    cpu: list[float] | None = None,
    thread: list[float] | None = None,
    closes: list[float] | None = None,
) -> float:
    import torch

    loss_fn = torch.nn.CrossEntropyLoss()
    if hook is not None:
        hook.register_module(model)
        hook.register_loss(loss_fn)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(BATCH, 256)
    y = torch.randint(0, 10, (BATCH,))

    def train(n: int) -> None:
        for _ in range(n):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()

    train(WARMUP)
    t0 = time.perf_counter()
    c0 = time.process_time()
    th0 = time.thread_time()
    train(steps)
    elapsed = time.perf_counter() - t0
    if cpu is not None:
        cpu.append((time.process_time() - c0) / steps)
    if thread is not None:
        thread.append((time.thread_time() - th0) / steps)
    if hook is not None:
        c = time.perf_counter()
        hook.close()
        if closes is not None:
            closes.append(time.perf_counter() - c)
    return elapsed / steps


def _hook(out_dir: Path, interval: int) -> Any:
    from sagemaker_debugger_ext.hooks import TrainingContext
    from sagemaker_debugger_ext.pytorch import Hook, SaveConfig

    return Hook(
        out_dir=out_dir,
        save_config=SaveConfig(save_interval=interval),
        include_collections=["weights", "gradients", "losses", "relu_output"],
        context=TrainingContext(),
    )


def run() -> dict[str, object]:
    """Return ``hook_overhead_interval10`` and ``hook_overhead_interval1`` (+ raw timings).

    Torch runs on one intra-op thread so that the numbers do not depend on how many other
    processes share the machine's cores (the hook's background writer gets a core).
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _measure()
    finally:
        torch.set_num_threads(threads)


def _measure() -> dict[str, object]:
    times: dict[str, list[float]] = {"base": [], "i10": [], "i1": [], "i10_shm": []}
    cpu: dict[str, list[float]] = {k: [] for k in times}
    thr: dict[str, list[float]] = {k: [] for k in times}
    closes: list[float] = []
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as mem:
        _time_steps(_model(), None, 10)  # warm-up
        _time_steps(_model(), _hook(Path(tmp) / "warm", 1), 3)
        for r in range(REPEATS):
            times["base"].append(_time_steps(_model(), None, STEPS, cpu["base"], thr["base"]))
            times["i10"].append(
                _time_steps(_model(), _hook(Path(tmp) / f"i10_{r}", 10), STEPS, cpu["i10"], thr["i10"], closes)
            )
            times["i1"].append(_time_steps(_model(), _hook(Path(tmp) / f"i1_{r}", 1), STEPS // 2, cpu["i1"], thr["i1"]))
            times["i10_shm"].append(
                _time_steps(_model(), _hook(Path(mem) / f"s10_{r}", 10), STEPS, cpu["i10_shm"], thr["i10_shm"])
            )
    med = {k: statistics.median(v) for k, v in times.items()}

    def overhead(key: str, source: dict[str, list[float]] = times) -> float:
        # median of per-repeat ratios: each hooked run is paired with the baseline run just
        # before it, which cancels slow drifts in machine load
        return round(statistics.median(t / b for t, b in zip(source[key], source["base"], strict=True)) - 1, 4)

    return {
        "hook_overhead_interval10": overhead("i10"),
        "hook_overhead_interval1": overhead("i1"),
        "hook_overhead_interval10_tmpfs": overhead("i10_shm"),
        "hook_cpu_overhead_interval10": overhead("i10", cpu),
        "hook_cpu_overhead_interval1": overhead("i1", cpu),
        "hook_train_thread_overhead_interval10": overhead("i10", thr),
        "hook_train_thread_overhead_interval1": overhead("i1", thr),
        "hook_close_ms": round(statistics.median(closes) * 1000, 2),
        "hook_step_ms_baseline": round(med["base"] * 1000, 3),
        "hook_step_ms_interval10": round(med["i10"] * 1000, 3),
        "hook_step_ms_interval1": round(med["i1"] * 1000, 3),
    }
