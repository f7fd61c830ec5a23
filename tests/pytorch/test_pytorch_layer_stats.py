"""The ``layer_stats`` collection: per-layer gradient norms and update ratios on real training."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

import sagemaker_debugger_ext.pytorch as smd
from sagemaker_debugger_ext.hooks import TrainingContext
from sagemaker_debugger_ext.hooks.pytorch._layer_stats import layer_of
from sagemaker_debugger_ext.trials import create_trial


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 5)
        self.fc2 = torch.nn.Linear(5, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def _norm(arrays: list[np.ndarray]) -> float:
    return float(np.sqrt(sum(float(np.sum(a.astype(np.float64) ** 2)) for a in arrays)))


def test_layer_of_names_the_owning_module() -> None:
    """A parameter's layer is its name without the last component."""
    assert layer_of("Net_fc1.weight") == "Net_fc1"
    assert layer_of("transformer.h.0.attn.c_attn.bias") == "transformer.h.0.attn.c_attn"
    assert layer_of("scale") == "scale"


def test_gradient_norms_and_update_ratios_equal_the_training_values(tmp_path: Path) -> None:
    """Each TRAIN step saves per-layer gradient norm and update ratio equal to what the model
    saw; EVAL steps and frozen layers save none; a step without optimizer step has ratio 0."""
    torch.manual_seed(0)
    model = Net()
    model.fc2.bias.requires_grad_(False)  # a partly frozen layer: only its weight counts
    hook = smd.Hook(out_dir=tmp_path / "run", save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["layer_stats"], context=TrainingContext())  # fmt: skip
    hook.register_module(model)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.3)
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    expected: dict[int, dict[str, float]] = {}
    hook.set_mode(smd.modes.TRAIN)
    for step in range(4):
        before = {n: p.detach().numpy().copy() for n, p in model.named_parameters()}
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        grads = {n: p.grad.numpy().copy() for n, p in model.named_parameters() if p.grad is not None}
        if step != 2:  # step 2 accumulates: no optimizer step
            opt.step()
        after = {n: p.detach().numpy() for n, p in model.named_parameters()}
        expected[step] = {}
        for layer, names in (("fc1", ["fc1.weight", "fc1.bias"]), ("fc2", ["fc2.weight"])):
            expected[step][f"Net_{layer}/gradient_norm"] = _norm([grads[n] for n in names])
            delta = _norm([after[n] - before[n] for n in names])
            expected[step][f"Net_{layer}/update_ratio"] = delta / (_norm([before[n] for n in names]) + 1e-12)
    hook.set_mode(smd.modes.EVAL)
    with torch.no_grad():
        model(x)
    hook.close()

    trial = create_trial(str(tmp_path / "run"))
    names = sorted(trial.tensor_names(collection="layer_stats"))
    assert names == [
        f"layer_stats/Net_{layer}/{stat}" for layer in ("fc1", "fc2") for stat in ("gradient_norm", "update_ratio")
    ]
    for name in names:
        tensor = trial.tensor(name)
        assert tensor.steps(mode=smd.modes.TRAIN) == [0, 1, 2, 3]
        assert tensor.steps(mode=smd.modes.EVAL) == []
        for step in range(4):
            value = tensor.value(step, mode=smd.modes.TRAIN)
            assert value.shape == (1,) and value.dtype == np.float32
            np.testing.assert_allclose(value[0], expected[step][name.removeprefix("layer_stats/")], rtol=1e-5)
    assert trial.tensor("layer_stats/Net_fc1/update_ratio").value(2, mode=smd.modes.TRAIN)[0] == 0.0


def test_layer_stats_follow_the_collection_interval_and_leave_no_hooks(tmp_path: Path) -> None:
    """Saved every 3rd step only; after training no gradient hook is left on the parameters."""
    model = Net()
    hook = smd.Hook(out_dir=tmp_path / "run", include_collections=["layer_stats"], context=TrainingContext())
    hook.get_collection("layer_stats").save_config = smd.SaveConfig(save_interval=3)
    hook.register_module(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
    for _ in range(7):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    hook.close()
    assert all(not p._backward_hooks for p in model.parameters())
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor("layer_stats/Net_fc2/gradient_norm").steps() == [0, 3, 6]


def test_save_all_leaves_layer_stats_out(tmp_path: Path) -> None:
    """``save_all`` saves what smdebug saves: no ``layer_stats/`` tensors unless named."""
    model = Net()
    hook = smd.Hook(out_dir=tmp_path / "run", save_all=True, context=TrainingContext())
    hook.register_module(model)
    x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
    torch.nn.functional.cross_entropy(model(x), y).backward()
    hook.close()
    names = create_trial(str(tmp_path / "run")).tensor_names()
    assert "gradient/Net_fc1.weight" in names
    assert not [n for n in names if n.startswith("layer_stats/")]
