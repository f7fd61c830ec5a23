"""CPU device reductions: copied on the training thread, reduced on the worker's thread
(``_reduction_worker``); the values are those of the tensors when they were saved."""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from polling import wait_until

from sagemaker_debugger_ext._reductions import ALLOWED_NORMS, ALLOWED_REDUCTIONS, compute_reductions
from sagemaker_debugger_ext.hooks import TrainingContext
from sagemaker_debugger_ext.hooks._arrays import float_view
from sagemaker_debugger_ext.hooks._step_reductions import Reductions
from sagemaker_debugger_ext.hooks.pytorch import _batched_reductions as _batched
from sagemaker_debugger_ext.hooks.pytorch import _reduction_worker as _worker
from sagemaker_debugger_ext.hooks.pytorch._batched_reductions import WIDTH
from sagemaker_debugger_ext.hooks.pytorch._device_reductions import stored_dtype
from sagemaker_debugger_ext.hooks.pytorch._reduction_worker import SLOTS, Pending, ReductionWorker
from sagemaker_debugger_ext.hooks.pytorch._tensors import tensor_to_numpy
from sagemaker_debugger_ext.pytorch import Hook, ReductionConfig, SaveConfig
from sagemaker_debugger_ext.trials import create_trial

ALL_OPS = tuple((op, is_abs) for op in (*ALLOWED_REDUCTIONS, *ALLOWED_NORMS) for is_abs in (False, True))
HOOK_OPS = [("min", False), ("max", False), ("mean", False), ("std", False), ("mean", True), ("l2", False)]


def _numpy_path(tensor: torch.Tensor, ops: Any = ALL_OPS) -> list[np.ndarray]:
    array, dtype = tensor_to_numpy(tensor)
    with np.errstate(invalid="ignore", over="ignore"):
        return compute_reductions(list(ops), float_view(array, dtype))


def _submit(worker: ReductionWorker, tensors: list[torch.Tensor]) -> tuple[Pending, list[Reductions]]:
    records = [Reductions(f"t{i}", None, ALL_OPS, ()) for i in range(len(tensors))]
    dtypes = [stored_dtype(t) for t in tensors]
    return worker.submit(tensors, ALL_OPS, list(zip(records, dtypes, strict=True))), records  # type: ignore[arg-type]


def _assert_numpy_path(
    tensors: list[torch.Tensor], records: list[Reductions], expected: list[list[np.ndarray]]
) -> None:
    for tensor, record, want in zip(tensors, records, expected, strict=True):
        assert isinstance(record.values, np.ndarray)
        for (op, is_abs), got, w in zip(ALL_OPS, record.values, want, strict=True):
            assert got.dtype == w.dtype
            if tensor.dtype == torch.float64 and op not in ("min", "max"):
                np.testing.assert_allclose(got, w, rtol=1e-12, equal_nan=True, err_msg=f"{op} abs={is_abs}")
            else:
                np.testing.assert_array_equal(got, w, err_msg=f"{tensor.dtype} {tensor.shape} {op} abs={is_abs}")


class _Gate:
    """Holds the first ``held`` part reductions that the worker's own thread runs until
    :meth:`open` (a caller that reduces queued parts itself is not held)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, held: int = 1) -> None:
        self.entered = threading.Event()
        self._open = threading.Event()
        self._held = held
        self._lock = threading.Lock()
        real = _worker.reduce_part

        def reduce_part(layout: Any, names: Any) -> Any:
            with self._lock:
                hold = self._held > 0 and threading.current_thread().name == "sdx-torch-reductions"
                self._held -= hold
            if hold:
                self.entered.set()
                assert self._open.wait(60), "the gate was never opened"
            return real(layout, names)

        monkeypatch.setattr(_worker, "reduce_part", reduce_part)

    def open(self) -> None:
        self._open.set()


@pytest.fixture
def worker() -> Iterator[ReductionWorker]:
    made = ReductionWorker()
    yield made
    made.close()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_the_worker_stores_the_values_at_the_copy_equal_to_the_numpy_path(
    dtype: torch.dtype, worker: ReductionWorker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch (one dtype: copied into a buffer of that dtype, converted on the worker; in
    several parts, a tensor in pieces) is reduced after its tensors were overwritten in place:
    the values are the NumPy path's of the tensors when they were submitted."""
    monkeypatch.setattr(_batched, "MAX_VALUES", 4 * WIDTH)
    gen = torch.Generator().manual_seed(3)
    big = 6e4 if dtype == torch.float16 else 1e30
    tensors = [
        torch.randn(300, 7, generator=gen).t(),
        torch.randn(9 * WIDTH + 5, generator=gen) * 3 + 1,  # pieces
        torch.tensor([big, -big, big / 2]),
        torch.tensor([1.0, float("nan"), -3.0]),
        torch.tensor([float("inf"), -2.0]),
    ]
    tensors = [t.to(dtype) for t in tensors]
    expected = [_numpy_path(t) for t in tensors]
    gate = _Gate(monkeypatch)
    pending, records = _submit(worker, tensors)
    assert gate.entered.wait(60)
    for t in tensors:
        t.fill_(7.0)  # the next step's values, before the worker reduced the batch
    gate.open()
    worker.wait([pending])
    assert pending.error is None
    _assert_numpy_path(tensors, records, expected)
    buffers = [b for ws in worker._state.free for b in (*ws._storage.values(), *ws._stages.values())]
    assert len(worker._state.free) == SLOTS and max(b.numel() for b in buffers) <= 4 * WIDTH
    assert {b.dtype for b in buffers} == {torch.float64, dtype}  # staged in the batch's dtype


def test_a_batch_of_mixed_dtypes_goes_to_the_workspace_directly(worker: ReductionWorker) -> None:
    gen = torch.Generator().manual_seed(4)
    tensors = [
        (torch.randn(WIDTH + 3, generator=gen) * 5).to(d) for d in (torch.float32, torch.bfloat16, torch.float64)
    ]
    pending, records = _submit(worker, tensors)
    worker.wait([pending])
    _assert_numpy_path(tensors, records, [_numpy_path(t) for t in tensors])


def test_all_workspaces_in_use_the_caller_reduces_queued_parts_and_memory_stays_bounded(
    worker: ReductionWorker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker is held on one batch: the next batches take the other workspaces, then the
    caller (needing one) reduces queued parts itself instead of making more."""
    gate = _Gate(monkeypatch)
    gen = torch.Generator().manual_seed(5)
    batches = [[torch.randn(3 * WIDTH, generator=gen) + i, torch.randn(5, generator=gen)] for i in range(2 * SLOTS)]
    expected = [[_numpy_path(t) for t in batch] for batch in batches]
    submitted = [_submit(worker, batches[0])]
    assert gate.entered.wait(60)
    submitted += [_submit(worker, batch) for batch in batches[1:]]  # more batches than workspaces
    for batch, (pending, _) in zip(batches[1:], submitted[1:], strict=True):
        if not pending.done:
            batch[0].fill_(-1.0)  # still queued: its values were copied already
    assert worker._state.made == SLOTS
    gate.open()
    worker.wait([p for p, _ in submitted])
    for batch, (_, records), want in zip(batches, submitted, expected, strict=True):
        _assert_numpy_path(batch, records, want)


def _net() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))


def _hook(out: Path, never_crash: bool = False) -> Hook:
    config = ReductionConfig(reductions=["min", "max", "mean", "std"], abs_reductions=["mean"], norms=["l2"])
    return Hook(out_dir=out, save_config=SaveConfig(save_interval=1), reduction_config=config, never_crash=never_crash,
                include_collections=["weights", "biases", "gradients"], context=TrainingContext())  # fmt: skip


def test_a_step_overwritten_by_the_next_before_the_worker_ran_stores_its_own_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker is held on step 0's weights while the optimizer updates them in place and
    step 1 starts (its weights saved, its files queued): step 0 stores the weights it began
    with, step 1 the updated ones; the training thread never waited for the worker."""
    gate = _Gate(monkeypatch)
    hook = _hook(tmp_path / "run")
    net = _net()
    hook.register_module(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.5)
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(2))
    weight = net[0].weight
    expected = {0: _numpy_path(weight.detach().clone(), HOOK_OPS)}
    net(x).square().mean().backward()  # step 0
    assert gate.entered.wait(60)  # step 0's weights: copied, their reduction held
    opt.step()  # in place
    opt.zero_grad(set_to_none=False)  # in place too
    expected[1] = _numpy_path(weight.detach().clone(), HOOK_OPS)
    net(x).square().mean().backward()  # step 1: step 0's files are queued behind the held reduction
    gate.open()
    hook.close()
    thread = hook._device_reductions._worker._state.thread
    assert thread is not None and not thread.is_alive()  # close() stopped it
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps() == [0, 1]
    for step, want in expected.items():
        stored = trial.tensor("Sequential_0.weight").reduction_values(step)
        for key, w in zip(HOOK_OPS, want, strict=True):
            np.testing.assert_array_equal(stored[key], w, err_msg=f"step {step} {key}")


def _failing(monkeypatch: pytest.MonkeyPatch) -> None:
    def reduce_part(layout: Any, names: Any) -> Any:
        raise RuntimeError("injected: the reduction failed")

    monkeypatch.setattr(_worker, "reduce_part", reduce_part)


def test_a_failure_in_the_worker_is_raised_by_the_hook_and_nothing_hangs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failure is raised once, by a later step's end or by ``close()`` (as the training
    thread's own reductions raised it); the worker's thread ends."""
    _failing(monkeypatch)
    hook = _hook(tmp_path / "run")
    net = _net()
    hook.register_module(net)
    x = torch.randn(8, 16)
    with pytest.raises(RuntimeError, match="injected"):
        for _ in range(3):
            net(x).square().mean().backward()
        hook.close()
    hook.close()  # the failure was raised once
    thread = hook._device_reductions._worker._state.thread
    assert thread is not None
    wait_until(lambda: not thread.is_alive(), what="the worker's thread to end")


def test_a_batch_whose_reduction_failed_is_left_out_of_its_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Step 0's gradients fail on the worker: step 0's files hold its weights and not its
    gradients (no record without values), and the failure is raised by a later step."""
    real, calls = _worker.reduce_part, [0]

    def reduce_part(layout: Any, names: Any) -> Any:
        calls[0] += 1
        if calls[0] == 2:  # step 0: its weights (1), its gradients (2)
            raise RuntimeError("injected: the reduction failed")
        return real(layout, names)

    monkeypatch.setattr(_worker, "reduce_part", reduce_part)
    hook = _hook(tmp_path / "run")
    net = _net()
    hook.register_module(net)
    x = torch.randn(8, 16)
    with pytest.raises(RuntimeError, match="injected"):
        for _ in range(3):
            net(x).square().mean().backward()
            reducing = list(hook._device_reductions._reducing)
            wait_until(lambda r=reducing: all(p.done for p in r), what="the step's batches")  # failed or not
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor("Sequential_0.weight").reduction_values(0)
    gradient = "gradient/Sequential_0.weight"
    assert not trial.has_tensor(gradient) or 0 not in trial.tensor(gradient).steps()


def test_with_never_crash_a_failure_in_the_worker_stops_the_hook_and_training_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _failing(monkeypatch)
    hook = _hook(tmp_path / "run", never_crash=True)
    net = _net()
    hook.register_module(net)
    x = torch.randn(8, 16)
    with caplog.at_level(logging.WARNING, logger="sagemaker_debugger_ext.hooks"):
        for _ in range(4):
            net(x).square().mean().backward()
        hook.close()
    assert "injected" in caplog.text
    assert "hook failed" in caplog.text


def test_two_hooks_have_their_own_workers(tmp_path: Path) -> None:
    nets, hooks = [_net(), _net()], [_hook(tmp_path / "a"), _hook(tmp_path / "b")]
    for hook, net in zip(hooks, nets, strict=True):
        hook.register_module(net)
    with torch.no_grad():
        nets[1][0].weight.mul_(3)
    x = torch.randn(8, 16)
    for _ in range(2):
        for net in nets:
            net(x).square().mean().backward()
    workers = [h._device_reductions._worker for h in hooks]
    assert workers[0] is not workers[1]
    for hook in hooks:
        hook.close()
    for name, net in zip("ab", nets, strict=True):
        trial = create_trial(str(tmp_path / name))
        assert trial.tensor("Sequential_0.weight").reduction_value(1, "max") == pytest.approx(
            float(net[0].weight.detach().max())
        )


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_fork_while_a_batch_is_reduced_hangs_neither_process(
    worker: ReductionWorker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forked while the worker's thread reduces one batch and another is queued: in the child
    the running one fails (its thread is not there) and the queued one is reduced by the
    child's waiter; the parent's batches are unaffected."""
    gate = _Gate(monkeypatch)
    gen = torch.Generator().manual_seed(6)
    first, second = [torch.randn(700, generator=gen)], [torch.randn(900, generator=gen) * 2]
    running, running_records = _submit(worker, first)
    assert gate.entered.wait(60)
    queued, queued_records = _submit(worker, second)
    pid = os.fork()
    if pid == 0:  # the child: report by exit status only
        status = 1
        try:
            worker.wait([running, queued])
            ok = queued.error is None and isinstance(running.error, RuntimeError)
            ok = ok and queued_records[0].values is not None
            status = 0 if ok else 2
        finally:
            os._exit(status)
    ended: list[int] = []

    def child_ended() -> bool:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            ended.append(os.waitstatus_to_exitcode(status))
        return bool(ended)

    try:
        wait_until(child_ended, what="the forked child to exit")
    except AssertionError:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    assert ended == [0]
    gate.open()
    worker.wait([running, queued])
    assert running.error is None and queued.error is None
    _assert_numpy_path(first + second, running_records + queued_records, [_numpy_path(t) for t in first + second])


def test_without_a_writer_thread_the_step_end_waits_for_the_worker(tmp_path: Path) -> None:
    """``background_writes=False``: the step's files are written at its end on the training
    thread, so that end waits for the worker's reductions (as it reduced them itself before)."""
    config = ReductionConfig(reductions=["min", "max"], norms=["l2"])
    hook = Hook(out_dir=tmp_path / "run", save_config=SaveConfig(save_interval=1), reduction_config=config,
                include_collections=["weights"], context=TrainingContext(), background_writes=False)  # fmt: skip
    net = _net()
    hook.register_module(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.5)
    x = torch.randn(8, 16)
    maxima = []
    for _ in range(3):
        maxima.append(float(net[0].weight.detach().max()))
        net(x).square().mean().backward()
        opt.step()
        opt.zero_grad()
    assert hook._writer.background is None and hook._device_reductions._worker is not None
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    for step, want in enumerate(maxima):
        assert trial.tensor("Sequential_0.weight").reduction_value(step, "max") == pytest.approx(want)
