"""Built-in activation rules find activations saved under smdebug's names (``1_output_0``)
through the collections the hook records by module class."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

import sagemaker_debugger_ext.pytorch as smd
from sagemaker_debugger_ext.rules.builtin import DeadRelu, SaturatedActivation
from sagemaker_debugger_ext.trials import create_trial


def _run(tmp_path: Path, model: torch.nn.Module, x: torch.Tensor, collections: list[str]) -> object:
    hook = smd.Hook(out_dir=str(tmp_path), save_config=smd.SaveConfig(save_interval=1), include_collections=collections)
    hook.register_module(model)
    for _ in range(2):
        model(x).sum().backward()
    hook.close()
    return create_trial(str(tmp_path))


def test_dead_relu_found_in_sequential_by_module_class(tmp_path: Path, fires: Callable[..., int | None]) -> None:
    """A Sequential's ReLU saves ``1_output_0`` (smdebug's name) and DeadRelu fires on it."""
    lin = torch.nn.Linear(4, 8)
    with torch.no_grad():
        lin.bias.fill_(-100.0)  # every unit dead
    trial = _run(tmp_path, torch.nn.Sequential(lin, torch.nn.ReLU()), torch.randn(16, 4), ["relu_output"])
    assert trial.tensor_names(collection="relu_output") == ["1_output_0"]
    assert fires(DeadRelu(trial)) == 0


def test_dead_relu_quiet_on_healthy_relu(tmp_path: Path, fires: Callable[..., int | None]) -> None:
    """The same model with live units does not fire."""
    lin = torch.nn.Linear(4, 8)
    with torch.no_grad():
        lin.bias.fill_(100.0)
    trial = _run(tmp_path, torch.nn.Sequential(lin, torch.nn.ReLU()), torch.randn(16, 4), ["relu_output"])
    assert fires(DeadRelu(trial)) is None


@pytest.mark.parametrize("act", ["tanh", "sigmoid"])
def test_saturated_activation_by_module_class(tmp_path: Path, act: str, fires: Callable[..., int | None]) -> None:
    """``2_input_0`` of an nn.Tanh / nn.Sigmoid is judged with that function's range."""
    module = torch.nn.Tanh() if act == "tanh" else torch.nn.Sigmoid()
    lin = torch.nn.Linear(4, 8)
    with torch.no_grad():
        lin.bias.fill_(50.0)  # far outside both non-saturated ranges
    model = torch.nn.Sequential(lin, torch.nn.Identity(), module)
    trial = _run(tmp_path, model, torch.randn(16, 4), [f"{act}_input"])
    assert trial.tensor_names(collection=f"{act}_input") == ["2_input_0"]
    rule = SaturatedActivation(trial)
    assert fires(rule) == 0
    assert act in rule.findings[0].message
