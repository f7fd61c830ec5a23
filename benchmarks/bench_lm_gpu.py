"""``bench_lm`` on a CUDA GPU: the hook's reductions-only saving against no hook, models on the GPU.

The same method, models and floor as ``bench_lm`` (read its docstring), with the three models
on the first CUDA device and torch's default CPU threads: interleaved blocks of the plain
model, the hooked one and the floor (which copies every parameter and gradient to host memory
each step and reduces the copies on a second thread), the block's clock stopped after
``torch.cuda.synchronize()``. Sizes: the reference GPT-2 (``lm``, 0.47 M parameters: each step
a few milliseconds of kernel launches), ``lm10x`` and ``lm100m`` (8 layers of width 1024, about
100 M parameters: each step is the GPU's work, the case the device reductions are for).

``lm_reductions_overhead_gpu`` (and ``lm10x_``, ``lm100m_``): hooked time / plain time - 1,
median over repeats; ``..._floor_overhead_gpu`` beside each. ``lm100m_host_bytes_per_step_gpu``:
bytes the hook copied from the GPU to the host per step (the scalars only).
``lm100m_reduce_ms_gpu``: GPU time of one batch's reductions (all ~100 M parameters, the
reductions above) as the hook computes them (each value read once, one launch per dtype,
``_fused_reductions``), median of CUDA-event timings (which include the host's time to issue
the batch's calls: the GPU waits for them), and ``lm100m_reduce_gb_s_gpu`` the parameters'
own bytes over it (each value read once: the least any reduction moves);
``..._batched`` the same for the batched path alone (every tensor through the float64
workspace), and ``lm100m_reductions_overhead_gpu_batched`` the hook's overhead with it, in the
same run. Without a CUDA
device the benchmark reports ``lm_reductions_overhead_gpu_note`` and nothing else, so ``make
bench`` on a machine without a GPU says so. ``make gpu-check`` runs it with the CUDA tests; the
figures of the runs on a lent H100 are kept in ``benchmarks/results_gpu.json``.
"""

from __future__ import annotations

import contextlib
import statistics
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .bench_lm import REPEATS, _bytes_per_step, _model, _overhead, _reductions

#: (size, repeats, cycles, steps per block) per model
RUNS = (("lm", REPEATS, 10, 4), ("lm10x", 3, 6, 4), ("lm100m", 3, 4, 2))


def run() -> dict[str, object]:
    """The figures above, or only the note when this machine has no CUDA device."""
    import torch

    if not torch.cuda.is_available():
        return {"lm_reductions_overhead_gpu_note": "not measured: no CUDA device on the machine that ran this"}
    out: dict[str, object] = {
        "gpu_device": torch.cuda.get_device_name(0),
        "gpu_torch": torch.__version__,
        "lm100m_parameters": sum(p.numel() for p in _model("lm100m").parameters()),
    }
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for size, repeats, cycles, block in RUNS:
            pairs = [_overhead(tmp, r, size, cycles=cycles, block=block, device="cuda") for r in range(repeats)]
            out[f"{size}_reductions_overhead_gpu"] = round(statistics.median(p[0] for p in pairs), 4)
            out[f"{size}_floor_overhead_gpu"] = round(statistics.median(p[1] for p in pairs), 4)
            torch.cuda.empty_cache()
        _, host = _bytes_per_step(tmp / "bytes-100m", raw=False, size="lm100m", steps=3, device="cuda")
        out["lm100m_host_bytes_per_step_gpu"] = round(host)
        with _batched_only():
            pairs = [_overhead(tmp, 10 + r, "lm100m", cycles=4, block=2, device="cuda") for r in range(2)]
        out["lm100m_reductions_overhead_gpu_batched"] = round(statistics.median(p[0] for p in pairs), 4)
    out.update(_reduce_time("lm100m"))
    with _batched_only():
        out.update({f"{k}_batched": v for k, v in _reduce_time("lm100m").items()})
    return out


@contextlib.contextmanager
def _batched_only() -> Iterator[None]:
    """The hook's reductions without the fused kernel (every tensor through the batched path)."""
    from sagemaker_debugger_ext.hooks.pytorch import _fused_reductions

    saved = _fused_reductions.MIN_VALUES
    _fused_reductions.MIN_VALUES = 1 << 62
    try:
        yield
    finally:
        _fused_reductions.MIN_VALUES = saved


def _reduce_time(size: str, repeats: int = 10) -> dict[str, float]:
    """One batch's reductions of ``size``'s parameters on the GPU: milliseconds, and GB/s of
    the parameters' own bytes."""
    import torch

    from sagemaker_debugger_ext.hooks.pytorch._batched_reductions import Workspace
    from sagemaker_debugger_ext.hooks.pytorch._fused_reductions import reduce_mixed

    tensors = [p.detach() for p in _model(size).cuda().parameters()]
    ops, workspace = _reductions().all_reductions, Workspace()
    reduce_mixed(tensors, ops, workspace)  # warm: the workspace, its layouts, the kernel's compilation
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        reduce_mixed(tensors, ops, workspace)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    ms = statistics.median(times)
    nbytes = sum(t.numel() * t.element_size() for t in tensors)
    return {f"{size}_reduce_ms_gpu": round(ms, 3), f"{size}_reduce_gb_s_gpu": round(nbytes / ms / 1e6, 1)}
