"""smdebug.pytorch's public surface and its extension points for hook subclasses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

import sagemaker_debugger_ext.pytorch as smd
from sagemaker_debugger_ext.trials import create_trial


def _model() -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())


def test_submodules_and_singleton_functions() -> None:
    """``pytorch.hook.Hook``, ``pytorch.collection``, ``set_hook``/``del_hook`` as in smdebug."""
    from sagemaker_debugger_ext.pytorch.collection import Collection, CollectionManager
    from sagemaker_debugger_ext.pytorch.hook import Hook
    from sagemaker_debugger_ext.pytorch.singleton_utils import del_hook, get_hook, set_hook

    assert Hook is smd.Hook and Collection is smd.Collection and CollectionManager is not None
    assert (set_hook, del_hook, get_hook) == (smd.set_hook, smd.del_hook, smd.get_hook)
    hook = Hook(out_dir="/nonexistent-never-written", dry_run=True)
    assert smd.get_hook() is hook
    smd.del_hook()
    assert smd.get_hook() is None
    smd.set_hook(hook)
    assert smd.get_hook() is hook
    smd.del_hook()


def test_add_module_tensors(tmp_path: Path) -> None:
    """A collection holding a module's inputs and outputs (api.md), added before registration."""
    model = _model()
    hook = smd.Hook(out_dir=str(tmp_path), save_config=smd.SaveConfig(save_interval=1), include_collections=["l_mod"])
    hook.get_collection("l_mod").add_module_tensors(model[0], inputs=True, outputs=True)
    hook.get_collection("relu_only").add_module_tensors(model[1])
    hook.register_module(model)
    model(torch.randn(2, 4))
    hook.close()
    trial = create_trial(str(tmp_path))
    assert trial.tensor_names() == ["0_input_0", "0_output_0"]
    assert trial.tensor_names(collection="l_mod") == ["0_input_0", "0_output_0"]


def test_forward_hook_override_names_tensors(tmp_path: Path) -> None:
    """The issue's example: the override is called for every module, with ``_module_name``."""

    class CustomHook(smd.Hook):
        def forward_hook(self, module: Any, inputs: Any, outputs: Any) -> None:
            self._write_outputs(module._module_name + "_custom", outputs)

    model = _model()
    hook = CustomHook(out_dir=str(tmp_path), save_config=smd.SaveConfig(save_interval=1), include_regex=[".*"])
    hook.register_module(model)
    model(torch.randn(2, 4)).sum().backward()
    hook.close()
    assert create_trial(str(tmp_path)).tensor_names() == [
        "0_custom_output_0", "1_custom_output_0", "Sequential_0.bias", "Sequential_0.weight",
        "Sequential_custom_output_0", "gradient/Sequential_0.bias", "gradient/Sequential_0.weight",
    ]  # fmt: skip


def test_backward_and_pre_hook_overrides_and_write_outputs(tmp_path: Path) -> None:
    """backward_hook's closures, forward_pre_hook and _write_outputs overrides all run;
    super() keeps the default behaviour; not-saved steps still call them (as smdebug)."""
    calls: dict[str, int] = {"pre": 0, "grad": 0, "out": 0}

    class CustomHook(smd.Hook):
        def forward_pre_hook(self, module: Any, inputs: Any) -> None:
            calls["pre"] += 1
            super().forward_pre_hook(module, inputs)

        def backward_hook(self, tname: str) -> Any:
            default = super().backward_hook(tname)

            def back(grad: torch.Tensor) -> None:
                calls["grad"] += 1
                default(grad)
                self._save_for_tensor("gradient/twice_" + tname, grad * 2)

            return back

        def _write_outputs(self, name: str, outputs: Any) -> None:
            calls["out"] += 1
            super()._write_outputs("my_" + name, outputs)

    model = _model()
    hook = CustomHook(out_dir=str(tmp_path), save_config=smd.SaveConfig(save_interval=2),
                      include_collections=["gradients", "relu_output"])  # fmt: skip
    hook.register_module(model)
    for _ in range(3):
        model(torch.randn(2, 4)).sum().backward()
    hook.close()
    assert calls["pre"] == 3 and calls["grad"] == 3 * 2 and calls["out"] == 2 * 3  # saved steps, every module
    trial = create_trial(str(tmp_path))
    assert trial.steps() == [0, 2]
    names = trial.tensor_names()
    assert "gradient/twice_Sequential_0.weight" in names and "gradient/Sequential_0.bias" in names
    g, g2 = (
        trial.tensor("gradient/Sequential_0.weight").value(2),
        trial.tensor("gradient/twice_Sequential_0.weight").value(2),
    )
    assert (g2 == 2 * g).all()


def test_module_names_attribute_and_map() -> None:
    """register_module sets smdebug's ``_module_name`` (top module: its class) and ``module_maps``."""

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.block = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())

    net = Net()
    hook = smd.Hook(out_dir="/nonexistent-never-written", dry_run=True)
    hook.register_module(net)
    assert [m._module_name for m in net.modules()] == ["Net", "block", "block.0", "block.1"]
    assert hook.module_maps[net.block[1]] == "block.1"
    smd.del_hook()


def test_smdebug_private_names_scripts_call(tmp_path: Path) -> None:
    """``hook._cleanup()`` closes the run and ``_get_worker_name()`` names the worker (smdebug)."""
    model = _model()
    hook = smd.Hook(out_dir=str(tmp_path), save_config=smd.SaveConfig(save_interval=1), include_collections=["weights"])
    hook.register_module(model)
    model(torch.randn(2, 4))
    assert hook._get_worker_name() == "worker_0"
    hook._cleanup()
    assert (tmp_path / "training_job_end.ts").exists()
    assert create_trial(str(tmp_path)).steps() == [0]


def test_model_with_hook_can_be_saved_and_loaded(tmp_path: Path) -> None:
    """torch.save(model) does not pickle the hook (smdebug); the loaded model runs, hook inert."""
    model = _model()
    hook = smd.Hook(
        out_dir=str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1), include_collections=["weights"]
    )
    hook.register_module(model)
    model(torch.randn(2, 4)).sum().backward()
    torch.save(model, tmp_path / "model.pt")
    loaded = torch.load(tmp_path / "model.pt", weights_only=False)
    loaded(torch.randn(2, 4)).sum().backward()
    hook.close()
    assert create_trial(str(tmp_path / "run")).steps() == [0]
