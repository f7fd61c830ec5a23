"""Tensor names of the PyTorch hook.

smdebug's names are kept (reference §1.4): parameters ``<ModelClass>_<param path>``,
gradients ``gradient/<ModelClass>_<param path>``, module inputs/outputs
``<module path>_input_<i>`` / ``<module path>_output_<i>``, the registered top module named
by its class. One change: an activation module (``torch.nn.modules.activation``: ReLU,
Tanh, Sigmoid, LeakyReLU, GELU, ...) whose path does not already end with its lowercase
class name gets it appended, so SageMaker's rule regexes (``.*relu_output``,
``.*tanh_input``, ``.*sigmoid_input``) match: ``layers.1`` (an ``nn.ReLU``) becomes
``layers.1_relu`` -> ``layers.1_relu_output_0``; a module named ``relu`` stays ``relu``.
``nn.DataParallel`` / ``DistributedDataParallel`` wrappers are looked through, so names
never carry their ``module.`` prefix.
"""

from __future__ import annotations

import torch

__all__ = ["activation_suffix", "module_names", "parameter_names", "unwrap"]

_ACTIVATION_MODULE = "torch.nn.modules.activation"


def unwrap(module: torch.nn.Module) -> torch.nn.Module:
    """The model inside DataParallel / DistributedDataParallel wrappers (nested too)."""
    wrappers = (torch.nn.DataParallel, torch.nn.parallel.DistributedDataParallel)
    while isinstance(module, wrappers):
        module = module.module
    return module


def activation_suffix(module: torch.nn.Module) -> str | None:
    """Lowercase class name of an activation module, else None."""
    for cls in type(module).__mro__:
        if cls.__module__ == _ACTIVATION_MODULE:
            return cls.__name__.lower()
    return None


def _display_name(path: str, module: torch.nn.Module) -> str:
    suffix = activation_suffix(module)
    if suffix is None or path.rsplit(".", 1)[-1].lower().endswith(suffix):
        return path
    return f"{path}_{suffix}"


def module_names(model: torch.nn.Module) -> dict[torch.nn.Module, str]:
    """Every submodule of ``model`` (unwrapped) -> its tensor-name prefix."""
    inner = unwrap(model)
    names: dict[torch.nn.Module, str] = {}
    for path, sub in inner.named_modules():
        if sub in names:
            continue
        names[sub] = type(inner).__name__ if path == "" else _display_name(path, sub)
    return names


def parameter_names(model: torch.nn.Module) -> list[tuple[str, torch.nn.Parameter]]:
    """``(<ModelClass>_<param path>, parameter)`` for every parameter of ``model`` (unwrapped)."""
    inner = unwrap(model)
    prefix = type(inner).__name__
    return [(f"{prefix}_{name}", p) for name, p in inner.named_parameters()]
