"""The live reads' guard (``hooks/pytorch/_live.py``) on its own: its barriers, checks,
settings, fork behaviour, and the torch facts it relies on (the hook's use of it:
``test_pytorch_live_reads.py``)."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
import warnings
from pathlib import Path

import pytest
import torch

from sagemaker_debugger_ext.exceptions import HookConfigError
from sagemaker_debugger_ext.hooks.pytorch import _live
from sagemaker_debugger_ext.hooks.pytorch._live import GRADIENTS, LIVE_READS_ENV, WEIGHTS, LiveGuard
from sagemaker_debugger_ext.pytorch import Hook


def test_torch_facts_live_reads_rely_on() -> None:
    """On the installed torch: a gradient held by a tensor hook is not ``.grad`` (autograd
    clones it), so in-place changes of ``.grad`` do not reach it; accumulation adds into
    ``.grad`` in place (its version moves); ``.data`` edits bump no version (hence the
    learning window's value check); ``p.data = t`` keeps the version but moves the storage."""
    lin = torch.nn.Linear(3, 3)
    held: list[torch.Tensor] = []
    lin.weight.register_hook(held.append)
    lin(torch.ones(2, 3)).sum().backward()
    assert held[0].data_ptr() != lin.weight.grad.data_ptr()  # type: ignore[union-attr]
    version = held[0]._version
    torch.nn.utils.clip_grad_norm_(lin.parameters(), 1e-3)
    assert held[0]._version == version
    grad = lin.weight.grad
    assert grad is not None
    version = grad._version
    lin(torch.ones(2, 3)).sum().backward()
    assert lin.weight.grad is grad and grad._version != version
    version = lin.weight._version
    lin.weight.data.mul_(2)
    assert lin.weight._version == version
    ptr = lin.weight.data_ptr()
    lin.weight.data = torch.zeros(3, 3)
    assert lin.weight._version == version and lin.weight.data_ptr() != ptr


def test_an_optimizer_step_reads_the_weights_handed_over_first() -> None:
    """The barrier: an optimizer's step first reads what was handed over and not read yet
    (here nobody else reads it), so the copy holds the values from before the step."""
    guard = LiveGuard("test", enabled=True)
    weight = torch.nn.Parameter(torch.arange(6.0))
    copy = torch.full((6,), -1.0)
    handover = guard.hand_over(WEIGHTS, [weight], ["w"], lambda src: copy.copy_(src[0].detach()), "step 0")
    gradient = guard.hand_over(GRADIENTS, [torch.ones(2)], ["g"], lambda src: None, "step 0")
    weight.grad = torch.ones(6)
    torch.optim.SGD([weight], lr=1.0).step()
    assert handover.settled and handover.changed == ()
    assert torch.equal(copy, torch.arange(6.0)) and torch.equal(weight.detach(), torch.arange(6.0) - 1)
    assert not gradient.settled  # gradients wait for the hook's next step boundary
    guard.close()
    assert gradient.settled and _live._OPTIMIZER_BARRIER._handle is None


def test_the_barrier_does_not_wait_for_a_slow_read_and_its_values_are_kept() -> None:
    """A barrier that finds the worker still reading copies the tensors itself and goes on
    (the optimizer then changes them); the worker, when its read ends, reads those copies
    again: the values read are the barrier's, never the changed ones."""
    guard = LiveGuard("test", enabled=True)
    weight = torch.nn.Parameter(torch.arange(6.0))
    copy = torch.full((6,), -1.0)
    started, release = threading.Event(), threading.Event()

    def read(sources: list[torch.Tensor]) -> None:
        if not started.is_set():  # the worker's first read: slow, and sees the step's update
            started.set()
            release.wait(30)
        copy.copy_(sources[0].detach())

    handover = guard.hand_over(WEIGHTS, [weight], ["w"], read, "step 0")
    worker = threading.Thread(target=handover.run)
    worker.start()
    assert started.wait(30)
    weight.grad = torch.ones(6)
    stepped = threading.Thread(target=torch.optim.SGD([weight], lr=1.0).step)
    stepped.start()  # its barrier (on that thread) finds the worker reading
    stepped.join(20)
    assert not stepped.is_alive(), "the optimizer's barrier waited for the worker's read"
    assert handover.settled and handover.changed == ()
    assert torch.equal(weight.detach(), torch.arange(6.0) - 1)  # updated while the worker still read
    release.set()
    worker.join(30)
    assert handover.error is None and torch.equal(copy, torch.arange(6.0))
    guard.close()


def test_a_tensor_changed_or_restored_after_its_hand_over_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    """Settling finds tensors changed in place or given new storage (``p.data = t``) since
    their hand-over, whoever read them; the kind is copied from then on."""
    guard = LiveGuard("test", enabled=True)
    a, b, c = torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.ones(3))
    handover = guard.hand_over(GRADIENTS, [a, b, c], ["a", "b", "c"], lambda src: None, "step 7")
    handover.run()  # read by the worker, say
    with torch.no_grad():
        a.add_(1)
    c.data = torch.zeros(3)
    with caplog.at_level(logging.WARNING, logger="sagemaker_debugger_ext.hooks"):
        guard.close()
    assert handover.changed == (0, 2)
    assert guard.copy_only == {GRADIENTS}
    assert any("a, c" in r.getMessage() and "step 7" in r.getMessage() for r in caplog.records)


def test_live_reads_env_turns_them_off_and_bad_values_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``$SAGEMAKER_DEBUGGER_EXT_LIVE_READS``: a boolean (default on); anything else is refused
    naming the variable, when the hook is made."""
    assert LiveGuard("test").enabled
    monkeypatch.setenv(LIVE_READS_ENV, "off")
    assert not LiveGuard("test").enabled and not LiveGuard("t").learning(WEIGHTS)
    monkeypatch.setenv(LIVE_READS_ENV, "maybe")
    with pytest.raises(HookConfigError, match=LIVE_READS_ENV):
        LiveGuard("test")
    with pytest.raises(HookConfigError, match=LIVE_READS_ENV):
        Hook(out_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_what_may_be_read_live() -> None:
    """Plain strided float CPU tensors only."""
    assert _live.eligible([torch.ones(2), torch.nn.Parameter(torch.ones(2, dtype=torch.bfloat16))])
    assert not _live.eligible([torch.ones(2), torch.ones(2, dtype=torch.int64)])
    assert not _live.eligible([torch.ones(2).to_sparse()])
    assert not _live.eligible([torch.ones(2, device="meta")])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_read_in_progress_at_a_fork_is_not_waited_for_in_the_child() -> None:
    """A fork while a thread reads a hand-over: in the child (where that thread does not
    run) settling does not hang, and a wait for the read ends with an error (the read is not
    whole); the parent's read completes."""
    guard = LiveGuard("test", enabled=True)
    started, release = threading.Event(), threading.Event()

    def read(sources: list[torch.Tensor]) -> None:
        started.set()
        release.wait(30)

    handover = guard.hand_over(GRADIENTS, [torch.ones(2)], ["g"], read, "step 0")
    reader = threading.Thread(target=handover.run)
    reader.start()
    assert started.wait(30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads running: on purpose
        pid = os.fork()
    if pid == 0:  # the child: exit status 0 when neither settling nor waiting for the read hung
        code = 1
        try:
            guard.settle()
            handover.run()  # waits for the read: its thread is not in the child
            code = 0 if handover.error is not None else 2
        finally:
            os._exit(code)
    release.set()
    reader.join(30)
    deadline = time.monotonic() + 30
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)  # polling the child's exit, bounded by the deadline
    if done[0] == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the child hung settling a read its parent's thread had started")
    assert os.waitstatus_to_exitcode(done[1]) == 0
    guard.close()
    assert handover.settled and handover.changed == () and handover.error is None
