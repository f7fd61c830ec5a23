"""Hook overhead on fast steps: a 784-256-256-10 MLP, batch 64, on CPU (about 1 ms a step).

The hook saves ``weights``, ``gradients`` and ``losses`` every 10 steps
(``hook_overhead_interval10_fast_step``, target <= 0.05): nine steps in ten save nothing and
must cost (almost) nothing; the tenth copies 0.27 M parameters and their gradients.

Method as ``bench_hooks``: identical models, interleaved ABBA blocks of 10 steps (one whole
save cycle each), torch on one intra-op thread; overhead of a repeat = hooked time / baseline
time - 1, median over repeats (``*_p25``/``*_p75`` the spread).

``hook_floor_overhead_interval10_fast_step``: the least any hook saving these tensors at this
interval does, measured in the same blocks (a third model). Like the Keras floor (a callback),
it is called by the framework, as any hook is, not by the training loop: a forward pre-hook on
the model counts the steps, and at each 10th step it copies every weight (into arrays
reused from save to save), registers a forward hook on the loss module and a gradient hook on
every parameter that copy the loss and the gradients as they come, and removes them at the next
step. At the step's last gradient a second thread (at the hook writer's niceness) writes the
copies to one file (as the hook writes an event file); a save that finds the previous file not
yet started by that thread writes it itself first (as the hook's writer lets a waiting caller
do). No event-file encoding, no index. ``..._fast_step`` minus it is what the hook itself costs.
(Until 2026-11-27 the floor was called from the training loop after ``backward()``, which no
hook is: that left out the framework's hook calls, about 0.01 of these steps.)
"""

from __future__ import annotations

import functools
import queue
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ._interleave import abba_totals
from ._threads import as_hook_writer, write_as_hook

WARMUP = 30
CYCLES = 40
BLOCK = 10
REPEATS = 9
BATCH = 64
INTERVAL = 10


def _model() -> Any:
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(784, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, 10),
    )


def _hook(out_dir: Path) -> Any:
    from sagemaker_debugger_ext.hooks import TrainingContext
    from sagemaker_debugger_ext.pytorch import Hook, SaveConfig

    return Hook(out_dir=out_dir, save_config=SaveConfig(save_interval=INTERVAL),
                include_collections=["weights", "gradients", "losses"], context=TrainingContext())  # fmt: skip


class _Floor:
    """See the module docstring: copies on the training thread, one file per save on another."""

    def __init__(self, out_dir: Path) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        self._out = out_dir
        self._step = 0
        self._params: list[Any] = []
        self._weights: list[Any] = []
        self._loss_module: Any = None
        self._handles: list[Any] = []
        self._copies: list[Any] = []
        self._left = 0  # gradients of the saving step not yet copied
        self._jobs: queue.SimpleQueue[tuple[int, list[Any]] | None] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._pending = False
        self._worker = threading.Thread(target=self._write, daemon=True)
        self._worker.start()

    def register(self, model: Any, loss_module: Any) -> None:
        """Hook ``model`` (its forward starts a step) and remember ``loss_module``."""
        self._params = list(model.parameters())
        self._weights = [p for name, p in model.named_parameters() if "weight" in name]  # as the hook's `weights`
        self._loss_module = loss_module
        model.register_forward_pre_hook(self._pre)

    def _write(self) -> None:
        as_hook_writer()
        while (job := self._jobs.get()) is not None:
            step, copies = job
            write_as_hook(self._out / f"{step:012d}.bin", copies)
            self._done.put(None)

    def _pre(self, module: Any, args: Any) -> None:
        import numpy as np

        step, self._step = self._step, self._step + 1
        if self._handles:  # the saving step is over: its hooks go
            for handle in self._handles:
                handle.remove()
            self._handles.clear()
            for param in self._params:
                param._backward_hooks = None  # no empty hook dict left on the parameter
        if step % INTERVAL:
            return
        if self._pending:  # the previous save's file is written before its arrays are reused
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                self._done.get()  # the thread took it: wait for it
            else:  # the thread has not started it (starved): write it here, as the hook does
                write_as_hook(self._out / f"{job[0]:012d}.bin", job[1])  # type: ignore[index]
            self._pending = False
        params, weights = self._params, self._weights
        if not self._copies:  # weights, gradients, loss
            self._copies = [np.empty(p.numel(), np.float32) for p in (*weights, *params)] + [np.empty(1, np.float32)]
        for copy, weight in zip(self._copies, weights, strict=False):
            copy[:] = weight.detach().numpy().reshape(-1)
        self._handles.append(self._loss_module.register_forward_hook(self._loss))
        for i, param in enumerate(params):
            self._handles.append(param.register_hook(functools.partial(self._grad, len(weights) + i, step)))
        self._left = len(params)

    def _loss(self, module: Any, args: Any, loss: Any) -> None:
        self._copies[-1][:] = loss.detach().numpy().reshape(-1)

    def _grad(self, index: int, step: int, grad: Any) -> None:
        self._copies[index][:] = grad.numpy().reshape(-1)
        self._left -= 1
        if not self._left:  # the step's last gradient: its tensors are all copied
            self._jobs.put((step, self._copies))
            self._pending = True

    def stop(self) -> None:
        self._jobs.put(None)
        self._worker.join()


def _trainer(hook: Any = None, floor: _Floor | None = None) -> Any:
    import torch

    model, loss_fn = _model(), torch.nn.CrossEntropyLoss()
    if hook is not None:
        hook.register_module(model)
        hook.register_loss(loss_fn)
    if floor is not None:
        floor.register(model, loss_fn)
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=0.01)
    gen = torch.Generator().manual_seed(1)
    x, y = torch.randn(BATCH, 784, generator=gen), torch.randint(0, 10, (BATCH,), generator=gen)

    def train(n: int) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        return time.perf_counter() - t0

    return train


def _repeat(tmp: Path, r: int) -> tuple[float, float]:
    hook, floor = _hook(tmp / f"hook{r}"), _Floor(tmp / f"floor{r}")
    trains = {"base": _trainer(), "hook": _trainer(hook=hook), "floor": _trainer(floor=floor)}
    for train in trains.values():
        train(WARMUP)
    totals = abba_totals({key: functools.partial(train, BLOCK) for key, train in trains.items()}, CYCLES)
    hook.close()
    floor.stop()
    return totals["hook"] / totals["base"] - 1, totals["floor"] / totals["base"] - 1


def run() -> dict[str, object]:
    """Return ``hook_overhead_interval10_fast_step`` and its floor (see the module docstring)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with tempfile.TemporaryDirectory() as d:
            _trainer()(20)  # torch's own warm-up
            t0 = time.perf_counter()
            _trainer()(50)
            step_ms = (time.perf_counter() - t0) / 50 * 1000
            pairs = [_repeat(Path(d), r) for r in range(REPEATS)]
    finally:
        torch.set_num_threads(threads)
    hooked, floors = sorted(p[0] for p in pairs), [p[1] for p in pairs]
    q = statistics.quantiles(hooked, n=4, method="inclusive")
    return {
        "hook_overhead_interval10_fast_step": round(statistics.median(hooked), 4),
        "hook_overhead_interval10_fast_step_p25": round(q[0], 4),
        "hook_overhead_interval10_fast_step_p75": round(q[2], 4),
        "hook_floor_overhead_interval10_fast_step": round(statistics.median(floors), 4),
        "hook_step_ms_fast_step_baseline": round(step_ms, 3),
    }
