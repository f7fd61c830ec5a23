"""Big-model saving on a tiny causal LM: hook overhead with reductions-only saving every step,
and bytes written per step versus whole tensors.

Workload: a GPT-2 built from a ``transformers`` config (2 layers, width 128, 4 heads,
vocabulary 512, random weights: no download), batch 8 of 64 synthetic tokens, AdamW, torch
on one intra-op thread. The hook saves ``weights`` and ``gradients`` of every parameter as
reductions only (min, max, mean, abs mean, l2 norm) plus the loss, every step: what a run
with hundreds of millions of parameters would save (``lm_reductions_overhead``, target
<= 0.05). Method as ``bench_hooks``: two identical models, one hooked, interleaved ABBA
blocks, median over repeats of hooked time / baseline time - 1.

``lm_floor_overhead``: the same ratio for the least any hook with these semantics does, measured
in the same blocks (a third model, interleaved with the other two): after each backward pass
it copies every parameter and gradient into a buffer on the training thread (they change in
the next step) and a second thread reduces the copies with the package's NumPy reductions.
No hook, no files. ``lm_reductions_overhead`` minus it is what the hook itself costs.

``lm_bytes_per_step_reductions`` / ``lm_bytes_per_step_raw``: bytes on disk per saved step
for the same collections saved as reductions only and as whole tensors
(``lm_bytes_ratio_raw_vs_reductions``).
"""

from __future__ import annotations

import queue
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

WARMUP = 5
CYCLES = 10
BLOCK = 4
REPEATS = 5
BYTES_STEPS = 10


def _model() -> Any:
    import torch
    import transformers

    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=512, n_positions=64,
                                     bos_token_id=0, eos_token_id=0)  # fmt: skip
    return transformers.GPT2LMHeadModel(config)


def _hook(out_dir: Path, raw: bool) -> Any:
    from sagemaker_debugger_ext.hooks import TrainingContext
    from sagemaker_debugger_ext.pytorch import Hook, ReductionConfig, SaveConfig

    reductions = (
        None if raw else ReductionConfig(reductions=["min", "max", "mean"], abs_reductions=["mean"], norms=["l2"])
    )
    return Hook(out_dir=out_dir, save_config=SaveConfig(save_interval=1), reduction_config=reductions,
                include_collections=["weights", "gradients", "losses"], context=TrainingContext())  # fmt: skip


def _trainer(hook: Any) -> Any:
    import torch

    model = _model()
    if hook is not None:
        hook.register_module(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 512, (8, 64), generator=torch.Generator().manual_seed(1))

    def train(n: int) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            opt.zero_grad()
            loss = model(input_ids=ids, labels=ids).loss
            if hook is not None:
                hook.record_tensor_value("loss", loss)
            loss.backward()
            opt.step()
        return time.perf_counter() - t0

    return train


#: the hook's reductions (see _hook)
FLOOR_OPS = (("min", False), ("max", False), ("mean", False), ("mean", True), ("l2", False))


def _floor_trainer() -> tuple[Any, Any]:
    """The floor (see the module docstring): copies on the training thread, reductions on a
    second thread; returns ``(train, stop)``."""
    import numpy as np
    import torch

    from sagemaker_debugger_ext._reductions import compute_reductions_many

    model = _model()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 512, (8, 64), generator=torch.Generator().manual_seed(1))
    params = list(model.parameters())
    sizes = [p.numel() for p in params] * 2
    buffer = np.empty(sum(sizes), np.float32)
    jobs: queue.SimpleQueue[np.ndarray | None] = queue.SimpleQueue()
    done: queue.SimpleQueue[None] = queue.SimpleQueue()
    bounds = np.cumsum(sizes)[:-1]

    def reduce_copies() -> None:
        while (copies := jobs.get()) is not None:
            compute_reductions_many(FLOOR_OPS, np.split(copies, bounds))
            done.put(None)

    worker = threading.Thread(target=reduce_copies, daemon=True)
    worker.start()
    pending = [False]

    def train(n: int) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            opt.zero_grad()
            model(input_ids=ids, labels=ids).loss.backward()
            if pending[0]:  # the previous step's reductions are done first (as the hook's files)
                done.get()
            offset = 0
            for tensor in [p.detach() for p in params] + [p.grad for p in params]:
                buffer[offset : offset + tensor.numel()] = tensor.numpy().reshape(-1)
                offset += tensor.numel()
            jobs.put(buffer)
            pending[0] = True
            opt.step()
        return time.perf_counter() - t0

    def stop() -> None:
        jobs.put(None)
        worker.join()

    return train, stop


def _overhead(tmp: Path, repeat: int) -> tuple[float, float]:
    """(hooked, floor) time / baseline time - 1 over interleaved blocks of the three models."""
    hook = _hook(tmp / f"r{repeat}", raw=False)
    floor, stop = _floor_trainer()
    trains = {"base": _trainer(None), "hook": _trainer(hook), "floor": floor}
    for train in trains.values():
        train(WARMUP)
    totals = dict.fromkeys(trains, 0.0)
    keys = list(trains)
    for cycle in range(CYCLES):
        for key in keys if cycle % 2 == 0 else keys[::-1]:
            totals[key] += trains[key](BLOCK)
    hook.close()
    stop()
    return totals["hook"] / totals["base"] - 1, totals["floor"] / totals["base"] - 1


def _bytes_per_step(out: Path, raw: bool) -> float:
    hook = _hook(out, raw=raw)
    _trainer(hook)(BYTES_STEPS)
    hook.close()
    return sum(f.stat().st_size for f in out.rglob("*") if f.is_file() and "events" in f.parts) / BYTES_STEPS


def run() -> dict[str, object]:
    """Return ``lm_reductions_overhead`` and the bytes per step (see the module docstring)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            pairs = [_overhead(tmp, r) for r in range(REPEATS)]
            reduced = _bytes_per_step(tmp / "bytes-reductions", raw=False)
            raw = _bytes_per_step(tmp / "bytes-raw", raw=True)
            parameters = sum(p.numel() for p in _model().parameters())
    finally:
        torch.set_num_threads(threads)
    ratios, floors = [p[0] for p in pairs], [p[1] for p in pairs]
    q = statistics.quantiles(ratios, n=4)
    return {
        "lm_reductions_overhead": round(statistics.median(ratios), 4),
        "lm_reductions_overhead_p25": round(q[0], 4),
        "lm_reductions_overhead_p75": round(q[2], 4),
        "lm_floor_overhead": round(statistics.median(floors), 4),
        "lm_parameters": parameters,
        "lm_bytes_per_step_reductions": round(reduced),
        "lm_bytes_per_step_raw": round(raw),
        "lm_bytes_ratio_raw_vs_reductions": round(raw / reduced, 1),
    }
