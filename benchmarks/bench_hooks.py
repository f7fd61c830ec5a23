"""Hook overhead: PyTorch MLP step time with the hook vs without, in the same process.

The hook saves weights, gradients, losses and ReLU outputs (raw tensors) every 10 steps
(``hook_overhead_interval10``) and every step (``hook_overhead_interval1``). Overhead =
median step time with the hook / median step time without - 1. Runs are interleaved
(baseline, interval 10, interval 1, repeated) so drifts in machine speed hit all three.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

STEPS = 60
REPEATS = 7
BATCH = 256


def _model() -> Any:
    import torch  # noqa: PLC0415

    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(256, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, 10),
    )


def _time_steps(model: Any, hook: Any, steps: int) -> float:
    import torch  # noqa: PLC0415

    loss_fn = torch.nn.CrossEntropyLoss()
    if hook is not None:
        hook.register_module(model)
        hook.register_loss(loss_fn)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(BATCH, 256)
    y = torch.randint(0, 10, (BATCH,))
    t0 = time.perf_counter()
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    if hook is not None:
        hook.close()
    return (time.perf_counter() - t0) / steps


def _hook(out_dir: Path, interval: int) -> Any:
    from sagemaker_debugger_ext.hooks import TrainingContext  # noqa: PLC0415
    from sagemaker_debugger_ext.pytorch import Hook, SaveConfig  # noqa: PLC0415

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
    import torch  # noqa: PLC0415

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _measure()
    finally:
        torch.set_num_threads(threads)


def _measure() -> dict[str, object]:
    base: list[float] = []
    i10: list[float] = []
    i1: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        _time_steps(_model(), None, 10)  # warm-up
        for r in range(REPEATS):
            base.append(_time_steps(_model(), None, STEPS))
            i10.append(_time_steps(_model(), _hook(Path(tmp) / f"i10_{r}", 10), STEPS))
            i1.append(_time_steps(_model(), _hook(Path(tmp) / f"i1_{r}", 1), STEPS))
    b = statistics.median(base)
    return {
        "hook_overhead_interval10": round(statistics.median(i10) / b - 1, 4),
        "hook_overhead_interval1": round(statistics.median(i1) / b - 1, 4),
        "hook_step_ms_baseline": round(b * 1000, 3),
        "hook_step_ms_interval10": round(statistics.median(i10) * 1000, 3),
        "hook_step_ms_interval1": round(statistics.median(i1) * 1000, 3),
    }
