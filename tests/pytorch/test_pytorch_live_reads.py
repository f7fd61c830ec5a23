"""Live reads (``hooks/pytorch/_live.py``): CPU weights and gradients saved as reductions only
are read by the reduction worker after the hand-over instead of copied on the training thread,
guarded by barriers, version counters and a learning window. Every stored value is what a copy
taken at the tensor's time gives; a tensor changed before its barrier is not stored."""

from __future__ import annotations

import itertools
import logging
import os
import signal
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

from sagemaker_debugger_ext._reductions import compute_reductions
from sagemaker_debugger_ext.exceptions import HookConfigError, TensorUnavailableForStep
from sagemaker_debugger_ext.hooks import TrainingContext
from sagemaker_debugger_ext.hooks.pytorch import _live
from sagemaker_debugger_ext.hooks.pytorch._batched_reductions import MAX_VALUES
from sagemaker_debugger_ext.hooks.pytorch._live import GRADIENTS, LEARN_STEPS, LIVE_READS_ENV, WEIGHTS, LiveGuard
from sagemaker_debugger_ext.pytorch import Hook, ReductionConfig, SaveConfig
from sagemaker_debugger_ext.pytorch import modes as smd_modes
from sagemaker_debugger_ext.trials import create_trial

OPS = [("min", False), ("max", False), ("mean", False), ("std", False), ("mean", True), ("l2", False)]
STEPS = LEARN_STEPS + 5

Edit = Callable[[int, torch.nn.Module], None]


def _expected(tensor: torch.Tensor) -> list[np.ndarray]:
    return compute_reductions(OPS, tensor.detach().clone().numpy())


def _train(
    out_dir: Path,
    *,
    between: Edit | None = None,
    clip: bool = False,
    update: str = "adamw",
    steps: int = STEPS,
    accumulate: int = 1,
    widths: tuple[int, ...] = (64,),
) -> tuple[Hook, dict[tuple[str, int], list[np.ndarray]]]:
    """Train an MLP with a hook saving weights, biases and gradients as reductions only at
    every step; ``between(step, net)`` runs after each backward pass, before the update
    (``adamw``, ``sgd``, or by hand: ``manual`` in place, ``data`` through ``.data``). Returns
    the closed hook and the NumPy reductions of copies taken at each tensor's time (weights
    when the step starts, gradients when the backward pass ends). ``accumulate``: backward
    passes (steps) per update, each adding into ``.grad`` (the hook saves each pass's own
    gradient, as autograd hands it over). ``widths``: the hidden layers' widths."""
    config = ReductionConfig(reductions=["min", "max", "mean", "std"], abs_reductions=["mean"], norms=["l2"])
    hook = Hook(out_dir=out_dir, save_config=SaveConfig(save_interval=1), reduction_config=config,
                include_collections=["weights", "biases", "gradients"], context=TrainingContext())  # fmt: skip
    torch.manual_seed(0)
    sizes = (16, *widths, 4)
    layers: list[torch.nn.Module] = []
    for n_in, n_out in itertools.pairwise(sizes):
        layers += [torch.nn.Linear(n_in, n_out), torch.nn.Tanh()]
    net = torch.nn.Sequential(*layers[:-1])
    hook.register_module(net)
    params = list(net.parameters())
    opt = torch.optim.AdamW(params, lr=0.05) if update == "adamw" else torch.optim.SGD(params, lr=0.1)
    x = torch.randn(32, 16, generator=torch.Generator().manual_seed(1))
    names = {p: f"Sequential_{n}" for n, p in net.named_parameters()}
    expected: dict[tuple[str, int], list[np.ndarray]] = {}
    incoming: dict[str, torch.Tensor] = {}
    if accumulate > 1:
        for p, name in names.items():
            p.register_hook(lambda g, name=name: incoming.__setitem__(name, g.detach().clone()))  # type: ignore[misc]
    for step in range(steps):
        for p, name in names.items():
            expected[name, step] = _expected(p)
        if step % accumulate == 0:
            opt.zero_grad()
        net(x * (1 + step % accumulate)).square().mean().backward()
        for p, name in names.items():
            expected[f"gradient/{name}", step] = _expected(incoming[name] if accumulate > 1 else p.grad)  # type: ignore[arg-type]
        if (step + 1) % accumulate:
            continue
        if clip:
            torch.nn.utils.clip_grad_norm_(params, 1e-3)  # changes .grad in place, every step
        if between is not None:
            between(step, net)
        if update in ("adamw", "sgd"):
            opt.step()
        else:
            with torch.no_grad():
                for p in params:
                    if update == "manual":
                        p.sub_(0.1 * p.grad)  # type: ignore[operator]
                    else:
                        p.data.sub_(0.1 * p.grad)  # type: ignore[operator]  # bumps no version
    hook.close()
    return hook, expected


def _check(
    out_dir: Path, expected: dict[tuple[str, int], list[np.ndarray]], dropped: frozenset[tuple[str, int]] = frozenset()
) -> None:
    """Every stored value is the expected one; exactly the ``dropped`` ones are missing."""
    trial = create_trial(str(out_dir))
    missing = set()
    for (name, step), want in expected.items():
        try:
            stored = trial.tensor(name).reduction_values(step)
        except TensorUnavailableForStep:
            missing.add((name, step))
            continue
        for key, value in zip(OPS, want, strict=True):
            np.testing.assert_array_equal(stored[key], value, err_msg=f"{name} step {step} {key}")
    assert missing == dropped


def test_live_reads_store_what_copies_at_the_tensors_time_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the learning window the weights and gradients are read live (handed over, no copy
    on the training thread); every stored value equals the NumPy reductions of a copy taken
    at the tensor's time, and the files equal those of a run that copies, byte for byte."""
    hook, expected = _train(tmp_path / "live")
    guard = hook._device_reductions.live
    assert guard.live(WEIGHTS) and guard.live(GRADIENTS) and not guard.copy_only
    # 4 parameters and 4 gradients a step, live from the first step after the learning window
    assert guard.handed_over == 8 * (STEPS - LEARN_STEPS)
    _check(tmp_path / "live", expected)
    monkeypatch.setenv(LIVE_READS_ENV, "false")
    copied, _ = _train(tmp_path / "copy")
    assert copied._device_reductions.live.handed_over == 0
    live, copy = create_trial(str(tmp_path / "live")), create_trial(str(tmp_path / "copy"))
    assert live.tensor_names() == copy.tensor_names() and live.steps() == copy.steps() == list(range(STEPS))
    compared = 0
    for name in live.tensor_names():
        for step in range(STEPS):
            ours, theirs = live.tensor(name).reduction_values(step), copy.tensor(name).reduction_values(step)
            assert ours.keys() == theirs.keys()
            for key, value in ours.items():
                assert (value.dtype, value.tobytes()) == (theirs[key].dtype, theirs[key].tobytes()), (name, step)
                compared += 1
    assert compared == 8 * STEPS * len(OPS)


def test_accumulated_gradients_are_stored_as_each_backward_pass_delivered_them(tmp_path: Path) -> None:
    """Two backward passes (steps) per update, the second adding into ``.grad`` in place:
    each step's gradients are read live and stored as that pass delivered them; the weights
    (unchanged between the two steps) too."""
    hook, expected = _train(tmp_path / "run", accumulate=2, steps=STEPS + 4)
    guard = hook._device_reductions.live
    assert guard.live(WEIGHTS) and guard.live(GRADIENTS) and not guard.copy_only
    assert guard.handed_over > 0
    _check(tmp_path / "run", expected)


def test_tensors_larger_than_a_workspace_are_read_live_in_pieces_and_checked_each(tmp_path: Path) -> None:
    """A weight of more values than a workspace holds (``MAX_VALUES``) is read live in pieces
    (parts of their own); changed in place before the optimizer, that tensor alone is not
    stored at that step."""
    at = LEARN_STEPS + 1

    def edit(step: int, net: torch.nn.Module) -> None:
        if step == at:
            with torch.no_grad():
                net[2].weight[-1].zero_()

    assert 2048 * 2100 > MAX_VALUES
    hook, expected = _train(tmp_path / "run", between=edit, widths=(2048, 2100), steps=LEARN_STEPS + 3)
    guard = hook._device_reductions.live
    assert guard.copy_only == {WEIGHTS} and guard.handed_over > 0
    _check(tmp_path / "run", expected, dropped=frozenset({("Sequential_2.weight", at)}))


def test_clipped_gradients_are_stored_as_backward_left_them(tmp_path: Path) -> None:
    """``clip_grad_norm_`` scales ``.grad`` in place after every backward pass; the gradient
    the hook holds is autograd's own (``.grad`` is a clone of it, see the next test), so
    clipping never changes it: read live, its reductions are the unclipped ones."""
    hook, expected = _train(tmp_path / "run", clip=True)
    guard = hook._device_reductions.live
    assert guard.live(GRADIENTS) and not guard.copy_only
    _check(tmp_path / "run", expected)


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


def test_a_weight_changed_in_place_before_the_optimizer_is_not_stored_and_weights_are_copied_after(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Once weights are read live, a weight changed in place between the step's start and the
    optimizer's step may have been read torn: its reductions at that step are not stored, one
    warning names it and the step, and weights are copied from then on (values right)."""
    at = LEARN_STEPS + 2

    def edit(step: int, net: torch.nn.Module) -> None:
        if step == at:
            with torch.no_grad():
                net[0].weight.mul_(0.5)

    with caplog.at_level(logging.WARNING, logger="sagemaker_debugger_ext.hooks"):
        hook, expected = _train(tmp_path / "run", between=edit)
    guard = hook._device_reductions.live
    assert guard.copy_only == {WEIGHTS} and guard.live(GRADIENTS)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "Sequential_0.weight" in warnings[0] and f"step {at}" in warnings[0], warnings
    _check(tmp_path / "run", expected, dropped=frozenset({("Sequential_0.weight", at)}))


@pytest.mark.parametrize("how", ["in_place", "data"])
def test_weights_changed_before_the_optimizer_in_the_learning_window_stay_copied(tmp_path: Path, how: str) -> None:
    """Weights changed between the step's start and the optimizer's step at every step (in
    place, or through ``.data``, which bumps no version: caught by the values) are never read
    live; every value is stored and right."""

    def edit(step: int, net: torch.nn.Module) -> None:
        with torch.no_grad():
            if how == "data":
                net[2].bias.data.add_(1.0)
            else:
                net[2].bias.add_(1.0)

    hook, expected = _train(tmp_path / "run", between=edit)
    guard = hook._device_reductions.live
    assert guard.copy_only == {WEIGHTS} and not guard.live(WEIGHTS) and guard.live(GRADIENTS)
    _check(tmp_path / "run", expected)


@pytest.mark.parametrize("update", ["manual", "data"])
def test_an_update_outside_torch_optimizers_keeps_weights_copied(tmp_path: Path, update: str) -> None:
    """An update made without ``torch.optim.Optimizer`` has no barrier: the weights stay
    copied (in place or through ``.data``), the gradients (never changed) are read live."""
    hook, expected = _train(tmp_path / "run", update=update)
    guard = hook._device_reductions.live
    assert not guard.live(WEIGHTS) and WEIGHTS in guard.copy_only and guard.live(GRADIENTS)
    _check(tmp_path / "run", expected)


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


def test_live_reads_env_turns_them_off_and_bad_values_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """``$SAGEMAKER_DEBUGGER_EXT_LIVE_READS``: a boolean (default on); anything else is refused
    naming the variable."""
    assert LiveGuard("test").enabled
    monkeypatch.setenv(LIVE_READS_ENV, "off")
    assert not LiveGuard("test").enabled and not LiveGuard("t").learning(WEIGHTS)
    monkeypatch.setenv(LIVE_READS_ENV, "maybe")
    with pytest.raises(HookConfigError, match=LIVE_READS_ENV):
        LiveGuard("test")


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


def test_weights_read_live_in_evaluation_steps_are_settled_at_the_next_step(tmp_path: Path) -> None:
    """Evaluation steps (no optimizer) between training steps: the weights handed over there
    are settled when the next step starts, before training changes them; every value right."""
    config = ReductionConfig(reductions=["min", "max", "mean", "std"], abs_reductions=["mean"], norms=["l2"])
    hook = Hook(out_dir=tmp_path / "run", save_config=SaveConfig(save_interval=1), reduction_config=config,
                include_collections=["weights", "biases"], context=TrainingContext())  # fmt: skip
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Tanh(), torch.nn.Linear(64, 4))
    hook.register_module(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(32, 16, generator=torch.Generator().manual_seed(1))
    names = {p: f"Sequential_{n}" for n, p in net.named_parameters()}
    expected: dict[tuple[str, int], list[np.ndarray]] = {}
    for step in range(3 * STEPS):
        for p, name in names.items():
            expected[name, step] = _expected(p)
        if step % 3 == 2:  # evaluation
            hook.set_mode(smd_modes.EVAL)
            with torch.no_grad():
                net(x)
            continue
        hook.set_mode(smd_modes.TRAIN)
        opt.zero_grad()
        net(x).square().mean().backward()
        opt.step()
    hook.close()
    guard = hook._device_reductions.live
    assert guard.live(WEIGHTS) and not guard.copy_only and guard.handed_over > 0
    _check(tmp_path / "run", expected)
