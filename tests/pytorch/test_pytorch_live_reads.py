"""Live reads (``hooks/pytorch/_live.py``): CPU weights and gradients saved as reductions only
are read by the reduction worker after the hand-over instead of copied on the training thread,
guarded by barriers, version counters and a learning window. Every stored value is what a copy
taken at the tensor's time gives; a tensor changed before its barrier is not stored."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

from sagemaker_debugger_ext._reductions import compute_reductions
from sagemaker_debugger_ext.exceptions import TensorUnavailableForStep
from sagemaker_debugger_ext.hooks import TrainingContext
from sagemaker_debugger_ext.hooks.pytorch._batched_reductions import MAX_VALUES
from sagemaker_debugger_ext.hooks.pytorch._live import GRADIENTS, LEARN_STEPS, LIVE_READS_ENV, WEIGHTS
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


def _hooked_net(
    out_dir: Path, collections: list[str], hidden: int
) -> tuple[Hook, torch.nn.Sequential, torch.optim.SGD, torch.Tensor, dict[torch.nn.Parameter, str]]:
    """A hook saving ``collections`` as reductions only every step, on a 16-``hidden``-4 tanh MLP
    with SGD; returns them, the inputs and the parameters' saved names."""
    config = ReductionConfig(reductions=["min", "max", "mean", "std"], abs_reductions=["mean"], norms=["l2"])
    hook = Hook(out_dir=out_dir, save_config=SaveConfig(save_interval=1), reduction_config=config,
                include_collections=collections, context=TrainingContext())  # fmt: skip
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 4))
    hook.register_module(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(32, 16, generator=torch.Generator().manual_seed(1))
    return hook, net, opt, x, {p: f"Sequential_{n}" for n, p in net.named_parameters()}


def test_weights_read_live_in_evaluation_steps_are_settled_at_the_next_step(tmp_path: Path) -> None:
    """Evaluation steps (no optimizer) between training steps: the weights handed over there
    are settled when the next step starts, before training changes them; every value right."""
    hook, net, opt, x, names = _hooked_net(tmp_path / "run", ["weights", "biases"], 64)
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


def test_a_closure_optimizer_keeps_the_weights_copied_and_every_value_right(tmp_path: Path) -> None:
    """``optimizer.step(closure)`` (LBFGS, Lightning's automatic optimization) runs the forward and
    backward passes inside the step: after torch's step pre-hook (the barrier) and right before
    the update, with no barrier between the weights' hand-over and their change. The learning
    window sees the weights changed before their barrier and keeps them copied; the gradients
    (not changed before the next step) may be read live; every stored value is right."""
    hook, net, opt, x, names = _hooked_net(tmp_path / "run", ["weights", "biases", "gradients"], 32)
    expected: dict[tuple[str, int], list[np.ndarray]] = {}
    for step in range(STEPS + 2):

        def closure(step: int = step) -> torch.Tensor:
            opt.zero_grad()
            for p, name in names.items():
                expected[name, step] = _expected(p)
            loss = net(x).square().mean()
            loss.backward()
            for p, name in names.items():
                expected[f"gradient/{name}", step] = _expected(p.grad)  # type: ignore[arg-type]
            return loss

        opt.step(closure)
    hook.close()
    guard = hook._device_reductions.live
    assert WEIGHTS in guard.copy_only and not guard.live(WEIGHTS)
    _check(tmp_path / "run", expected)
