"""Hook overhead: PyTorch MLP step time with the hook vs without, in the same process.

Workload: a 256-256-256-10 MLP (ReLU), batch 256, plain SGD, torch on one intra-op thread
(about 2.2 ms per step on the 2-vCPU reference machine). The hook saves weights, gradients,
losses and ReLU outputs (raw tensors, ~1.6 MB per saved step) every 10 steps
(``hook_overhead_interval10``) or every step (``hook_overhead_interval1``).

Method: interleaved blocks, as ``bench_profiler``. Each repeat builds two identical models,
one with the hook and one without, warms both up (``WARMUP`` steps: the hook's one-time
set-up happens there), then runs ``CYCLES`` pairs of ``BLOCK``-step blocks alternating
between them (ABBA order: hooked first in even pairs, baseline first in odd ones). Overhead
of a repeat = total hooked time / total baseline time - 1; the reported value is the median
over ``REPEATS`` repeats (``*_p25``/``*_p75`` give the spread). A block of 10 steps holds
one whole save cycle at interval 10 (the saved step, the hand-over to the writer thread and
its file writes), so every cost of the hook lands in the hooked blocks. Alternating every
~22 ms cancels the slow drifts in machine speed that dominate run-to-run noise on a shared
VM (consecutive 300-step runs differ by +-5 %). The hook's ``close()`` (waiting for the last
files, rewriting the collections JSON) happens once per run and is reported separately as
``hook_close_ms``.

Also reported: ``hook_overhead_interval10_tmpfs`` (the trial folder on ``/dev/shm``: the
hook's cost without the disk), ``hook_cpu_overhead_*`` (process CPU time, every thread,
the writer thread included) and ``hook_train_thread_overhead_*`` (CPU time of the training
thread alone), and the median step times.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

WARMUP = 20
CYCLES = 30
BLOCK = 10
REPEATS = 9
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


def _hook(out_dir: Path, interval: int) -> Any:
    from sagemaker_debugger_ext.hooks import TrainingContext
    from sagemaker_debugger_ext.pytorch import Hook, SaveConfig

    return Hook(
        out_dir=out_dir,
        save_config=SaveConfig(save_interval=interval),
        include_collections=["weights", "gradients", "losses", "relu_output"],
        context=TrainingContext(),
    )


Timing = tuple[float, float, float]  # wall, process CPU, training-thread CPU


def _trainer(hook: Any) -> Callable[[int], Timing]:
    """A training loop on a fresh model (hooked when ``hook`` is given); ``train(n)`` runs
    ``n`` steps and returns their wall, process CPU and thread CPU seconds."""
    import torch

    model, loss_fn = _model(), torch.nn.CrossEntropyLoss()
    if hook is not None:
        hook.register_module(model)
        hook.register_loss(loss_fn)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(BATCH, 256)
    y = torch.randint(0, 10, (BATCH,))

    def train(n: int) -> Timing:
        t0, c0, th0 = time.perf_counter(), time.process_time(), time.thread_time()
        for _ in range(n):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        return time.perf_counter() - t0, time.process_time() - c0, time.thread_time() - th0

    return train


def _repeat(out_dir: Path, interval: int, closes: list[float] | None = None) -> tuple[Timing, Timing]:
    """One repeat: totals of the baseline blocks and of the hooked blocks."""
    hook = _hook(out_dir, interval)
    base, hooked = _trainer(None), _trainer(hook)
    base(WARMUP)
    hooked(WARMUP)
    totals = {"base": [0.0, 0.0, 0.0], "hook": [0.0, 0.0, 0.0]}
    for cycle in range(CYCLES):
        order = (("hook", hooked), ("base", base)) if cycle % 2 == 0 else (("base", base), ("hook", hooked))
        for key, train in order:
            for i, value in enumerate(train(BLOCK)):
                totals[key][i] += value
    c = time.perf_counter()
    hook.close()
    if closes is not None:
        closes.append(time.perf_counter() - c)
    b, h = totals["base"], totals["hook"]
    return (b[0], b[1], b[2]), (h[0], h[1], h[2])


def run() -> dict[str, object]:
    """Return ``hook_overhead_interval10`` and ``hook_overhead_interval1`` (+ details).

    Torch runs on one intra-op thread so that the numbers do not depend on how many other
    processes share the machine's cores (the hook's writer thread gets the other core).
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _measure()
    finally:
        torch.set_num_threads(threads)


def _measure() -> dict[str, object]:
    runs: dict[str, list[tuple[Timing, Timing]]] = {"i10": [], "i1": [], "i10_shm": []}
    closes: list[float] = []
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as mem:
        _trainer(None)(10)  # warm-up of torch itself
        for r in range(REPEATS):
            runs["i10"].append(_repeat(Path(tmp) / f"i10_{r}", 10, closes))
            if r % 2 == 0:  # the secondary variants get every other repeat
                runs["i1"].append(_repeat(Path(tmp) / f"i1_{r}", 1))
                runs["i10_shm"].append(_repeat(Path(mem) / f"s10_{r}", 10))

    def ratios(key: str, part: int) -> list[float]:
        return sorted(h[part] / b[part] - 1 for b, h in runs[key])

    def overhead(key: str, part: int = 0) -> float:
        return round(statistics.median(ratios(key, part)), 4)

    def quartiles(key: str) -> tuple[float, float]:
        q = statistics.quantiles(ratios(key, 0), n=4, method="inclusive")
        return round(q[0], 4), round(q[2], 4)

    steps = CYCLES * BLOCK

    def step_ms(key: str, which: int) -> float:
        return round(statistics.median(pair[which][0] for pair in runs[key]) / steps * 1000, 3)

    p25, p75 = quartiles("i10")
    return {
        "hook_overhead_interval10": overhead("i10"),
        "hook_overhead_interval10_p25": p25,
        "hook_overhead_interval10_p75": p75,
        "hook_overhead_interval1": overhead("i1"),
        "hook_overhead_interval10_tmpfs": overhead("i10_shm"),
        "hook_cpu_overhead_interval10": overhead("i10", 1),
        "hook_cpu_overhead_interval1": overhead("i1", 1),
        "hook_train_thread_overhead_interval10": overhead("i10", 2),
        "hook_train_thread_overhead_interval1": overhead("i1", 2),
        "hook_close_ms": round(statistics.median(closes) * 1000, 2),
        "hook_step_ms_baseline": step_ms("i10", 0),
        "hook_step_ms_interval10": step_ms("i10", 1),
        "hook_step_ms_interval1": step_ms("i1", 1),
        "hook_overhead_repeats": REPEATS,
    }
