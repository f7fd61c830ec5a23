"""Raw weights read live (``hooks/pytorch/_live_raw.py``): at a saved step the hook's writer
thread copies the CPU weights saved raw, after the guard's learning window, instead of the
training thread. The files are those of copies taken at once; a weight changed in place before
the optimizer's barrier is not written at that step, with a warning, and copied from then on."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

from sagemaker_debugger_ext.hooks import TrainingContext
from sagemaker_debugger_ext.hooks.pytorch import _live_raw
from sagemaker_debugger_ext.hooks.pytorch._live import LEARN_STEPS, LIVE_READS_ENV, WEIGHTS
from sagemaker_debugger_ext.pytorch import Hook, SaveConfig
from sagemaker_debugger_ext.trials import create_trial

STEPS = 2 * (LEARN_STEPS + 4)  # saved every 2nd step: the learning window, then live reads

Edit = Callable[[int, torch.nn.Module], None]


def _train(out_dir: Path, between: Edit | None = None) -> tuple[Hook, dict[tuple[str, int], np.ndarray]]:
    """An MLP trained with SGD, its weights, gradients and loss saved raw every 2nd step (the
    fast step's collections); ``between(step, net)`` runs after the backward pass, before the
    update. Returns the closed hook and each weight's value when each step started."""
    hook = Hook(out_dir=out_dir, save_config=SaveConfig(save_interval=2),
                include_collections=["weights", "gradients", "losses"], context=TrainingContext())  # fmt: skip
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    loss_fn = torch.nn.CrossEntropyLoss()
    hook.register_module(net)
    hook.register_loss(loss_fn)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 16, generator=gen), torch.randint(0, 4, (32,), generator=gen)
    weights = {f"Sequential_{n}": p for n, p in net.named_parameters() if n.endswith("weight")}
    values: dict[tuple[str, int], np.ndarray] = {}
    for step in range(STEPS):
        values.update({(name, step): p.detach().clone().numpy() for name, p in weights.items()})
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        if between is not None:
            between(step, net)
        opt.step()
    hook.close()
    return hook, values


def _index_files(out_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out_dir)): p.read_bytes() for p in sorted((out_dir / "index").rglob("*.json"))}


@pytest.fixture
def small_is_live(monkeypatch: pytest.MonkeyPatch) -> None:
    """This MLP's weights (18 KB) read live, as a model's of LIVE_MIN_BYTES and more are."""
    monkeypatch.setattr(_live_raw, "LIVE_MIN_BYTES", 0)


def test_weights_smaller_than_the_threshold_are_copied_and_never_watched(tmp_path: Path) -> None:
    hook, values = _train(tmp_path / "run")
    guard = hook._live_raw.guard
    assert guard.handed_over == 0 and not guard.live(WEIGHTS) and not guard._clean and guard.enabled
    trial = create_trial(str(tmp_path / "run"))
    for (name, step), value in values.items():
        if step % 2 == 0:
            np.testing.assert_array_equal(trial.tensor(name).value(step), value)


@pytest.mark.usefixtures("small_is_live")
def test_live_raw_weights_write_the_same_files_as_copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LIVE_READS_ENV, "false")
    copied, _ = _train(tmp_path / "copy")
    assert copied._live_raw.guard.handed_over == 0
    monkeypatch.delenv(LIVE_READS_ENV)
    live, values = _train(tmp_path / "live")
    # 2 weights a saved step, after step 0 (copied: its writer thread starts there) and the window
    assert live._live_raw.guard.handed_over == 2 * (STEPS // 2 - 1 - LEARN_STEPS)
    assert not live._live_raw.guard.copy_only
    assert _index_files(tmp_path / "live") == _index_files(tmp_path / "copy") != {}
    a, b = create_trial(str(tmp_path / "copy")), create_trial(str(tmp_path / "live"))
    assert a.tensor_names() == b.tensor_names() and a.steps() == b.steps() == list(range(0, STEPS, 2))
    for name in a.tensor_names():
        for step in a.steps():
            va, vb = a.tensor(name).value(step), b.tensor(name).value(step)
            assert va.dtype == vb.dtype and va.tobytes() == vb.tobytes(), (name, step)
    for (name, step), value in values.items():  # the weights as each saved step started
        if step % 2 == 0:
            np.testing.assert_array_equal(b.tensor(name).value(step), value)


@pytest.mark.usefixtures("small_is_live")
def test_a_weight_changed_in_place_before_the_optimizer_is_not_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """After the learning window, one saved step's first weight is edited in place after the
    backward pass (before the optimizer's barrier): the live read may be torn, so that weight is
    left out at that step, a warning names it, and the later saved steps copy it (right values)."""
    edit_step = 2 * (LEARN_STEPS + 2)  # the second live one (step 0, then the window, by copy)

    def edit(step: int, net: torch.nn.Module) -> None:
        if step == edit_step:
            with torch.no_grad():
                net[0].weight.mul_(2.0)

    with caplog.at_level(logging.WARNING, logger="sagemaker_debugger_ext.hooks"):
        hook, values = _train(tmp_path / "run", between=edit)
    assert WEIGHTS in hook._live_raw.guard.copy_only
    warnings = [r.getMessage() for r in caplog.records if "raw weights" in r.getMessage()]
    assert len(warnings) == 1 and "Sequential_0.weight" in warnings[0] and f"step {edit_step}" in warnings[0]
    trial = create_trial(str(tmp_path / "run"))
    edited, other = trial.tensor("Sequential_0.weight"), trial.tensor("Sequential_2.weight")
    assert edit_step not in edited.steps() and edit_step in other.steps()
    for step in range(0, STEPS, 2):
        if step != edit_step:
            np.testing.assert_array_equal(edited.value(step), values["Sequential_0.weight", step])
        np.testing.assert_array_equal(other.value(step), values["Sequential_2.weight", step])
    assert float(trial.tensor("CrossEntropyLoss_output_0").value(edit_step)) > 0  # the rest of the step is there
