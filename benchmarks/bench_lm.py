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
it copies every parameter and gradient on the training thread (into arrays reused from step to
step; the tensors change in the next step) and a second thread reduces the copies with the package's NumPy reductions.
No hook, no files. ``lm_reductions_overhead`` minus it is what the hook itself costs.
Since the hook's live reads (``hooks/pytorch/_live.py``, docs/hook.md) the hook copies
nothing on the training thread after its first 3 saved steps (its worker reads the tensors
while the step trains, with barriers before the optimizer's step and the next step), so this
floor is no longer the least such a hook does: the hook may measure at or below it. The floor
is kept as it was, so that its figures stay comparable from run to run.

``lm_floor_live_overhead`` (CPU only): the least a hook that reads live does, a fourth model in
the same blocks: when a step starts it hands the weights over (references) to a second thread,
which copies them; it waits for that copy after the backward pass (before the optimizer's step),
then hands the gradients over, which the second thread copies and then reduces with the weights'
copies; the next step waits for the gradients' copy. No checks, no learning window, no files.

``lm_bytes_per_step_reductions`` / ``lm_bytes_per_step_raw``: bytes on disk per saved step
for the same collections saved as reductions only and as whole tensors
(``lm_bytes_ratio_raw_vs_reductions``).
"""

from __future__ import annotations

import functools
import queue
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._interleave import abba_totals
from ._threads import as_hook_writer

WARMUP = 5
CYCLES = 10
BLOCK = 4
REPEATS = 5
REPEATS_10X = 3
BYTES_STEPS = 10


#: (layers, width) of the GPT-2s: the reference one (0.47 M parameters), one with ~10x more, and
#: one of ~100 M parameters (measured on a GPU only: ``bench_lm_gpu``)
SIZES = {"lm": (2, 128), "lm10x": (4, 320), "lm100m": (8, 1024)}


def _model(size: str = "lm") -> Any:
    import torch
    import transformers

    torch.manual_seed(0)
    layers, width = SIZES[size]
    config = transformers.GPT2Config(n_layer=layers, n_embd=width, n_head=4, vocab_size=512, n_positions=64,
                                     bos_token_id=0, eos_token_id=0)  # fmt: skip
    return transformers.GPT2LMHeadModel(config)


def _reductions() -> Any:
    """What the hook saves of each tensor (and the floor computes)."""
    from sagemaker_debugger_ext.pytorch import ReductionConfig

    return ReductionConfig(reductions=["min", "max", "mean"], abs_reductions=["mean"], norms=["l2"])


def _hook(out_dir: Path, raw: bool) -> Any:
    from sagemaker_debugger_ext.hooks import TrainingContext
    from sagemaker_debugger_ext.pytorch import Hook, SaveConfig

    reductions = None if raw else _reductions()
    return Hook(out_dir=out_dir, save_config=SaveConfig(save_interval=1), reduction_config=reductions,
                include_collections=["weights", "gradients", "losses"], context=TrainingContext())  # fmt: skip


def _trainer(
    hook: Any,
    after_backward: Callable[[list[Any]], None] | None = None,
    size: str = "lm",
    device: str = "cpu",
    before_forward: Callable[[list[Any]], None] | None = None,
) -> Any:
    """``train(n)`` runs ``n`` steps and returns their time; ``after_backward(parameters)``
    is called between each backward pass and the optimizer's step, ``before_forward(parameters)``
    before each forward pass."""
    import torch

    model = _model(size).to(device)
    if hook is not None:
        hook.register_module(model)
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, lr=1e-3)
    ids = torch.randint(0, 512, (8, 64), generator=torch.Generator().manual_seed(1)).to(device)

    def train(n: int) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            opt.zero_grad()
            if before_forward is not None:
                before_forward(params)
            loss = model(input_ids=ids, labels=ids).loss
            if hook is not None:
                hook.record_tensor_value("loss", loss)
            loss.backward()
            if after_backward is not None:
                after_backward(params)
            opt.step()
        if device != "cpu":
            torch.cuda.synchronize()  # the block's kernels are done before its clock stops
        return time.perf_counter() - t0

    return train


class _Floor:
    """The floor (see the module docstring): :meth:`step` copies the parameters and their
    gradients on the training thread; a second thread (at the hook writer's niceness) reduces
    the copies."""

    def __init__(self) -> None:
        from sagemaker_debugger_ext._reductions import compute_reductions_many

        self._reduce = functools.partial(compute_reductions_many, _reductions().all_reductions)
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._waiting = 0  # jobs the training thread has not waited for
        self._copies: list[Any] = []
        self._worker = threading.Thread(target=self._serve, daemon=True)
        self._worker.start()

    def _serve(self) -> None:
        as_hook_writer()
        while (job := self._jobs.get()) is not None:
            self._run(job)

    def _run(self, copies: list[Any]) -> None:
        self._reduce(copies)
        self._done.put(None)

    def _barrier(self) -> None:
        """Wait for the jobs submitted before."""
        while self._waiting:
            self._done.get()
            self._waiting -= 1

    def _submit(self, job: Any) -> None:
        self._jobs.put(job)
        self._waiting += 1

    def step(self, params: list[Any]) -> None:
        import numpy as np

        self._barrier()  # the previous step's reductions are done first (as the hook's files)
        tensors = [p.detach() for p in params] + [p.grad for p in params]
        if not self._copies:
            self._copies = [np.empty(t.numel(), np.float32) for t in tensors]
        for copy, tensor in zip(self._copies, tensors, strict=True):
            copy[:] = tensor.cpu().numpy().reshape(-1)
        self._submit(self._copies)

    def stop(self) -> None:
        self._jobs.put(None)
        self._worker.join()


class _LiveFloor(_Floor):
    """The live floor (see the module docstring): the training thread only hands tensors over
    and waits for their copies at the barriers; the second thread copies and reduces them."""

    def _run(self, job: Any) -> None:  # (tensors, their copies, whether to reduce after)
        tensors, copies, reduce = job
        for copy, tensor in zip(copies, tensors, strict=True):
            copy[:] = tensor.numpy().reshape(-1)
        self._done.put(None)
        if reduce:  # the gradients' copies: the step's weights and gradients reduced
            self._reduce(self._copies)

    def before_forward(self, params: list[Any]) -> None:
        import numpy as np

        if not self._copies:
            self._copies = [np.empty(p.numel(), np.float32) for _ in range(2) for p in params]  # weights, gradients
        self._barrier()  # the previous step's gradients copied
        self._submit(([p.detach() for p in params], self._copies[: len(params)], False))

    def after_backward(self, params: list[Any]) -> None:
        self._barrier()  # the weights copied before the optimizer's step
        self._submit(([p.grad for p in params], self._copies[len(params) :], True))


def _overhead(
    tmp: Path, repeat: int, size: str = "lm", cycles: int = CYCLES, block: int = BLOCK, device: str = "cpu"
) -> tuple[float, float, float | None]:
    """(hooked, floor, live floor) time / baseline time - 1 over interleaved blocks of the models
    (the live floor on the CPU only, else None)."""
    hook = _hook(tmp / f"{size}{device}{repeat}", raw=False)
    floor = _Floor()
    live = _LiveFloor() if device == "cpu" else None
    trains = {"base": _trainer(None, size=size, device=device), "hook": _trainer(hook, size=size, device=device),
              "floor": _trainer(None, floor.step, size=size, device=device)}  # fmt: skip
    if live is not None:
        trains["live"] = _trainer(
            None, live.after_backward, size=size, device=device, before_forward=live.before_forward
        )
    for train in trains.values():
        train(WARMUP if size == "lm" else 1)
    totals = abba_totals({key: functools.partial(train, block) for key, train in trains.items()}, cycles)
    hook.close()
    floor.stop()
    if live is not None:
        live.stop()
    live_ratio = totals["live"] / totals["base"] - 1 if live is not None else None
    return totals["hook"] / totals["base"] - 1, totals["floor"] / totals["base"] - 1, live_ratio


def _bytes_per_step(
    out: Path, raw: bool, size: str = "lm", steps: int = BYTES_STEPS, device: str = "cpu"
) -> tuple[float, float]:
    """(bytes on disk, bytes copied out of the tensors to host memory) per saved step."""
    hook = _hook(out, raw=raw)
    _trainer(hook, size=size, device=device)(steps)
    hook.close()
    on_disk = sum(f.stat().st_size for f in out.rglob("*") if f.is_file() and "events" in f.parts)
    to_host = hook._writer.arenas.bytes_copied + hook._device_reductions.host_bytes
    return on_disk / steps, to_host / steps


def run() -> dict[str, object]:
    """Return ``lm_reductions_overhead`` and the bytes per step (see the module docstring)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            pairs = [_overhead(tmp, r) for r in range(REPEATS)]
            (reduced, reduced_host), (raw, raw_host) = (
                _bytes_per_step(tmp / f"bytes-{kind}", raw=kind == "raw") for kind in ("reductions", "raw")
            )
            pairs10 = [_overhead(tmp, r, "lm10x", cycles=4, block=2) for r in range(REPEATS_10X)]
            _, host10 = _bytes_per_step(tmp / "bytes-10x", raw=False, size="lm10x", steps=3)
            parameters = sum(p.numel() for p in _model().parameters())
            parameters10 = sum(p.numel() for p in _model("lm10x").parameters())
    finally:
        torch.set_num_threads(threads)
    ratios, floors = [p[0] for p in pairs], [p[1] for p in pairs]
    q = statistics.quantiles(ratios, n=4)
    out: dict[str, object] = {
        "lm_reductions_overhead": round(statistics.median(ratios), 4),
        "lm_reductions_overhead_p25": round(q[0], 4),
        "lm_reductions_overhead_p75": round(q[2], 4),
        "lm_floor_overhead": round(statistics.median(floors), 4),
        "lm_floor_live_overhead": round(statistics.median(p[2] for p in pairs if p[2] is not None), 4),
        "lm_parameters": parameters,
        "lm_bytes_per_step_reductions": round(reduced),
        "lm_bytes_per_step_raw": round(raw),
        "lm_bytes_ratio_raw_vs_reductions": round(raw / reduced, 1),
        "lm_host_bytes_per_step_reductions": round(reduced_host),
        "lm_host_bytes_per_step_raw": round(raw_host),
        "lm10x_parameters": parameters10,
        "lm10x_reductions_overhead": round(statistics.median(p[0] for p in pairs10), 4),
        "lm10x_floor_overhead": round(statistics.median(p[1] for p in pairs10), 4),
        "lm10x_floor_live_overhead": round(statistics.median(p[2] for p in pairs10 if p[2] is not None), 4),
        "lm10x_host_bytes_per_step_reductions": round(host10),
    }
    return out
