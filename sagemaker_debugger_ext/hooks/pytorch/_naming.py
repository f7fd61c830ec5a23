"""Tensor names of the PyTorch hook: exactly smdebug 1.0.34's.

Parameters ``<ModelClass>_<param path>``, gradients ``gradient/<ModelClass>_<param path>``,
module inputs/outputs ``<module path>_input_<i>`` / ``<module path>_output_<i>``, where the
registered module itself is named by its class and every submodule by its
``named_modules()`` path. Wrappers are not looked through, as in smdebug: a registered
``nn.DataParallel`` names its model ``module`` and its parameters
``DataParallel_module.<path>`` (``DistributedDataParallel_module.<path>`` likewise).
Sharded models are named as the model they shard (``_distributed``): fully_shard's
``FSDP<Model>`` class is ``<Model>`` and FSDP1 / checkpoint wrapper path parts are dropped.

Activation modules keep these names; the hook records them in the activation collections
(``relu_input``/``relu_output``, ``tanh_input``, ``sigmoid_input``) by the module's class,
so rules find ``layers.1_output_0`` of an ``nn.ReLU`` without renaming it.
"""

from __future__ import annotations

import torch

from ._distributed import clean_name, unwrapped_class_name

__all__ = ["activation_collections", "module_names", "parameter_names"]

_ACTIVATIONS: tuple[tuple[type[torch.nn.Module], dict[str, str]], ...] = (
    (torch.nn.ReLU, {"_input_": "relu_input", "_output_": "relu_output"}),
    (torch.nn.Tanh, {"_input_": "tanh_input"}),
    (torch.nn.Sigmoid, {"_input_": "sigmoid_input"}),
)


def activation_collections(module: torch.nn.Module, side: str) -> tuple[str, ...]:
    """The activation collections (by module class) that ``module``'s ``side``
    (``"_input_"`` / ``"_output_"``) tensors belong to."""
    return tuple(sides[side] for cls, sides in _ACTIVATIONS if isinstance(module, cls) and side in sides)


def module_names(model: torch.nn.Module) -> dict[torch.nn.Module, str]:
    """Every submodule of ``model`` -> its tensor-name prefix (smdebug's ``_module_name``)."""
    names: dict[torch.nn.Module, str] = {}
    used: set[str] = set()
    for path, sub in model.named_modules():
        name = clean_name(path)
        if sub not in names and name not in used:  # a wrapper and the module it wraps: the wrapper
            names[sub] = name
            used.add(name)
    names[model] = unwrapped_class_name(model)
    return names


def parameter_names(model: torch.nn.Module) -> list[tuple[str, torch.nn.Parameter]]:
    """``(<ModelClass>_<param path>, parameter)`` for every parameter of ``model``."""
    prefix = unwrapped_class_name(model)
    return [(f"{prefix}_{clean_name(name)}", p) for name, p in model.named_parameters()]
