"""Tensor names of the PyTorch hook: exactly smdebug 1.0.34's.

Parameters ``<ModelClass>_<param path>``, gradients ``gradient/<ModelClass>_<param path>``,
module inputs/outputs ``<module path>_input_<i>`` / ``<module path>_output_<i>``, where the
registered module itself is named by its class and every submodule by its
``named_modules()`` path. Wrappers are not looked through, as in smdebug: a registered
``nn.DataParallel`` names its model ``module`` and its parameters
``DataParallel_module.<path>`` (``DistributedDataParallel_module.<path>`` likewise).
Sharded models are named as the model they shard: fully_shard's ``FSDP<Model>`` class is
``<Model>`` (:func:`unwrapped_class_name`) and FSDP1 / checkpoint wrapper path parts are
dropped (:func:`clean_name`).

Activation modules keep these names; the hook records them in the activation collections
(``relu_input``/``relu_output``, ``tanh_input``, ``sigmoid_input``) by the module's class,
so rules find ``layers.1_output_0`` of an ``nn.ReLU`` without renaming it.
"""

from __future__ import annotations

import sys

import torch

__all__ = ["activation_collections", "clean_name", "module_names", "parameter_names", "unwrapped_class_name"]

WRAPPER_PARTS = frozenset({"_fsdp_wrapped_module", "_checkpoint_wrapped_module"})
_FSDP2_CLASS_PREFIX = "FSDP"


def clean_name(name: str) -> str:
    """``name`` (a dotted module or parameter path) without FSDP1 / activation-checkpoint
    wrapper components: ``fc1._checkpoint_wrapped_module.weight`` -> ``fc1.weight``."""
    if "_wrapped_module" not in name:
        return name
    return ".".join(part for part in name.split(".") if part not in WRAPPER_PARTS)


def _fsdp2_module_class() -> type | None:
    if "torch.distributed.fsdp" not in sys.modules and "torch.distributed._composable.fsdp" not in sys.modules:
        return None  # fully_shard was never imported: no module can be an FSDPModule
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:  # pragma: no cover - torch without FSDP2
        return None
    return FSDPModule


def unwrapped_class_name(module: torch.nn.Module) -> str:
    """``module._get_name()``, with the class fully_shard made (``FSDP<Model>``) named ``<Model>``
    and an FSDP1 ``FullyShardedDataParallel`` wrapper named after the model it wraps."""
    fsdp2 = _fsdp2_module_class()
    if fsdp2 is not None and isinstance(module, fsdp2):
        for base in type(module).__mro__[1:]:
            if base is not fsdp2 and not issubclass(base, fsdp2) and issubclass(base, torch.nn.Module):
                return base.__name__
    inner = getattr(module, "_fsdp_wrapped_module", None)
    if isinstance(inner, torch.nn.Module) and type(module).__name__ == "FullyShardedDataParallel":
        return unwrapped_class_name(inner)
    return module._get_name()


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
