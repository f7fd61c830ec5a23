"""Big-model saving on a tiny causal LM: hook overhead with reductions-only saving every step,
and bytes written per step versus whole tensors.

Workload: a GPT-2 built from a ``transformers`` config (2 layers, width 128, 4 heads,
vocabulary 512, random weights: no download), batch 8 of 64 synthetic tokens, AdamW, torch
on one intra-op thread. The hook saves ``weights`` and ``gradients`` of every parameter as
reductions only (min, max, mean, abs mean, l2 norm) plus the loss, every step: what a run
with hundreds of millions of parameters would save (``lm_reductions_overhead``, target
<= 0.05). Method as ``bench_hooks``: two identical models, one hooked, interleaved ABBA
blocks, median over repeats of hooked time / baseline time - 1.

``lm_bytes_per_step_reductions`` / ``lm_bytes_per_step_raw``: bytes on disk per saved step
for the same collections saved as reductions only and as whole tensors
(``lm_bytes_ratio_raw_vs_reductions``).
"""

from __future__ import annotations

import statistics
import tempfile
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


def _overhead(tmp: Path, repeat: int) -> float:
    hook = _hook(tmp / f"r{repeat}", raw=False)
    base, hooked = _trainer(None), _trainer(hook)
    base(WARMUP)
    hooked(WARMUP)
    totals = {"base": 0.0, "hook": 0.0}
    for cycle in range(CYCLES):
        order = (("hook", hooked), ("base", base)) if cycle % 2 == 0 else (("base", base), ("hook", hooked))
        for key, train in order:
            totals[key] += train(BLOCK)
    hook.close()
    return totals["hook"] / totals["base"] - 1


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
            ratios = [_overhead(tmp, r) for r in range(REPEATS)]
            reduced = _bytes_per_step(tmp / "bytes-reductions", raw=False)
            raw = _bytes_per_step(tmp / "bytes-raw", raw=True)
            parameters = sum(p.numel() for p in _model().parameters())
    finally:
        torch.set_num_threads(threads)
    q = statistics.quantiles(ratios, n=4)
    return {
        "lm_reductions_overhead": round(statistics.median(ratios), 4),
        "lm_reductions_overhead_p25": round(q[0], 4),
        "lm_reductions_overhead_p75": round(q[2], 4),
        "lm_parameters": parameters,
        "lm_bytes_per_step_reductions": round(reduced),
        "lm_bytes_per_step_raw": round(raw),
        "lm_bytes_ratio_raw_vs_reductions": round(raw / reduced, 1),
    }
