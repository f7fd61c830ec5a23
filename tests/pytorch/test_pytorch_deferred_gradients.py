"""Gradients saved as reductions only on their device are saved when the backward pass ends,
all together (``DeviceReductions.defer``); other gradients are saved as backward delivers them.
The device path's per-tensor decision follows the collections' reduction configs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from sagemaker_debugger_ext.hooks import TrainingContext
from sagemaker_debugger_ext.pytorch import Hook, ReductionConfig, SaveConfig
from sagemaker_debugger_ext.trials import create_trial

REDUCTIONS = ReductionConfig(reductions=["min", "max", "mean"], norms=["l2"])


def _train_marking(hook: Hook, steps: int = 2) -> tuple[list[tuple[str, bool]], dict[tuple[str, int], torch.Tensor]]:
    """Train a two-layer net with ``hook``; return each gradient save as (name, whether the
    backward pass had reached the first layer by then) and each gradient as backward left it
    (before clipping changes it in place)."""
    torch.manual_seed(0)
    first, second = torch.nn.Linear(8, 16), torch.nn.Linear(16, 2)
    net = torch.nn.Sequential(first, torch.nn.ReLU(), second)
    hook.register_module(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    reached_first = [False]
    saves: list[tuple[str, bool]] = []
    real = hook._save_for_tensor

    def save_for_tensor(name: str, value: Any, private: bool = False) -> None:
        if name.startswith("gradient/"):
            saves.append((name, reached_first[0]))
        real(name, value, private)

    hook._save_for_tensor = save_for_tensor  # type: ignore[method-assign]

    # the first layer's output gets a gradient hook: it runs once the second layer's
    # gradients are delivered, before the first layer's
    def mark(module: Any, args: Any, out: torch.Tensor) -> None:
        out.register_hook(lambda grad: reached_first.__setitem__(0, True))  # type: ignore[no-untyped-call]

    first.register_forward_hook(mark)
    grads: dict[tuple[str, int], torch.Tensor] = {}
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1))
    for step in range(steps):
        reached_first[0] = False
        opt.zero_grad()
        net(x).square().mean().backward()
        for pname, param in net.named_parameters():
            assert param.grad is not None
            grads[f"gradient/Sequential_{pname}", step] = param.grad.clone()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1e-4)  # changes the gradients in place
        opt.step()
    hook.close()
    return saves, grads


def test_reductions_only_gradients_are_saved_when_the_backward_pass_ends(tmp_path: Path) -> None:
    """No gradient is saved while the backward pass runs (the second layer's gradients are
    delivered before the first layer's); each is saved at its end, with the values backward
    left (before clipping)."""
    hook = Hook(out_dir=tmp_path / "run", save_config=SaveConfig(save_interval=1), reduction_config=REDUCTIONS,
                include_collections=["gradients"], context=TrainingContext())  # fmt: skip
    saves, grads = _train_marking(hook)
    assert len(saves) == 2 * 4
    assert all(reached for _, reached in saves), saves
    trial = create_trial(str(tmp_path / "run"))
    for (name, step), grad in grads.items():
        stored = trial.tensor(name).reduction_values(step)
        assert stored[("max", False)] == pytest.approx(float(grad.max()), rel=1e-6)
        assert stored[("l2", False)] == pytest.approx(float(grad.double().norm()), rel=1e-6)


@pytest.mark.parametrize("how", ["raw", "tensorboard"])
def test_other_gradients_are_saved_as_backward_delivers_them(tmp_path: Path, how: str) -> None:
    """Raw gradients (host copies) and gradients with TensorBoard histograms are saved by the
    gradient hook itself: the second layer's before the backward pass reaches the first."""
    extra: dict[str, Any] = (
        {"reduction_config": None}
        if how == "raw"
        else {"reduction_config": REDUCTIONS, "tensorboard_dir": str(tmp_path / "tb")}
    )
    hook = Hook(out_dir=tmp_path / "run", save_config=SaveConfig(save_interval=1),
                include_collections=["gradients"], context=TrainingContext(), **extra)  # fmt: skip
    saves, grads = _train_marking(hook)
    assert {name for name, reached in saves if not reached} == {
        "gradient/Sequential_2.weight",
        "gradient/Sequential_2.bias",
    }
    if how == "raw":
        trial = create_trial(str(tmp_path / "run"))
        for (name, step), grad in grads.items():
            np.testing.assert_array_equal(trial.tensor(name).value(step), grad.numpy())


def test_a_failure_saving_a_deferred_gradient_is_raised_by_the_next_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backward pass itself does not raise; the hook's next step does (its start ends the
    step whose gradients failed)."""
    hook = Hook(out_dir=tmp_path / "run", save_config=SaveConfig(save_interval=1), reduction_config=REDUCTIONS,
                include_collections=["gradients"], context=TrainingContext())  # fmt: skip
    net = torch.nn.Linear(4, 2)
    hook.register_module(net)
    real = hook._device_reductions.take

    def take(name: str, *args: Any) -> bool:
        if name.startswith("gradient/"):
            raise RuntimeError(f"cannot save {name}")
        return real(name, *args)

    monkeypatch.setattr(hook._device_reductions, "take", take)
    net(torch.ones(3, 4)).sum().backward()  # does not raise
    with pytest.raises(RuntimeError, match="cannot save gradient/"):
        net(torch.ones(3, 4))
    monkeypatch.undo()
    hook.close()


def test_never_crash_a_failing_deferred_gradient_stops_saving_and_training_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deferred gradients are saved in one call of the failure boundary: with
    ``never_crash`` the first that fails stops the hook (the others are not tried) and
    training goes on; steps before it stay on disk."""
    hook = Hook(out_dir=tmp_path / "run", save_config=SaveConfig(save_interval=1), reduction_config=REDUCTIONS,
                include_collections=["gradients"], context=TrainingContext(), never_crash=True)  # fmt: skip
    net = torch.nn.Linear(4, 2)
    hook.register_module(net)
    net(torch.ones(3, 4)).sum().backward()  # step 0: saved
    tried: list[str] = []
    real = hook._device_reductions.take

    def take(name: str, *args: Any) -> bool:
        if name.startswith("gradient/"):
            tried.append(name)
            raise RuntimeError(f"cannot save {name}")
        return real(name, *args)

    monkeypatch.setattr(hook._device_reductions, "take", take)
    for _ in range(2):
        net(torch.ones(3, 4)).sum().backward()  # neither raises
    assert len(tried) == 1 and hook._disabled
    monkeypatch.undo()
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor("gradient/Linear_weight").steps() == [0]


def test_a_reduction_config_replaced_between_steps_takes_effect_at_the_next_step(tmp_path: Path) -> None:
    """The device path keeps its plan per collections only while their reduction configs stay:
    a collection given another config saves the new reductions from the next step on."""
    hook = Hook(out_dir=tmp_path / "run", save_config=SaveConfig(save_interval=1), reduction_config=REDUCTIONS,
                include_collections=["weights", "gradients"], context=TrainingContext())  # fmt: skip
    net = torch.nn.Linear(4, 2)
    hook.register_module(net)
    x = torch.ones(3, 4)
    net(x).sum().backward()
    for name in ("weights", "gradients"):
        hook.get_collection(name).reduction_config = ReductionConfig(reductions=["sum"], abs_reductions=["max"])
    net(x).sum().backward()
    net(x)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    for name in ("Linear_weight", "gradient/Linear_weight"):
        assert set(trial.tensor(name).reduction_values(0)) == {
            ("min", False),
            ("max", False),
            ("mean", False),
            ("l2", False),
        }
        assert set(trial.tensor(name).reduction_values(1)) == {("sum", False), ("max", True)}
    weight = net.weight.detach().double()
    assert trial.tensor("Linear_weight").reduction_value(1, "sum") == pytest.approx(float(weight.sum()))
