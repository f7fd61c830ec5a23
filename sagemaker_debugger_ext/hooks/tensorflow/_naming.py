"""smdebug.tensorflow's tensor names, computed from Keras 3 objects.

Keras 3 variables have a ``path`` (``sequential/dense/kernel``); Keras 2 (smdebug's TF <= 2.12)
named the same variable ``dense/kernel:0``. The model's own name is dropped and ``:0`` added.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "gradient_name",
    "layer_tensor_name",
    "model_io_names",
    "optimizer_variable_name",
    "tape_weight_name",
    "variable_tf_name",
    "weight_name",
]


def variable_tf_name(variable: Any) -> str:
    """The Keras-2 style TensorFlow name of a variable: ``dense/kernel:0``."""
    path = getattr(variable, "path", None)
    if isinstance(path, str) and path:
        parts = path.split("/")
        name = "/".join(parts[1:]) if len(parts) >= 3 else path
        return name + ":0"
    name = str(getattr(variable, "name", "variable"))
    return name if ":" in name else name + ":0"


def optimizer_variable_name(optimizer: Any, variable: Any) -> str:
    """``<OptimizerClass>/<variable>:0`` (``Adam/iteration:0``): stable across optimizer
    instances (Keras numbers their paths ``adam_1/...``)."""
    return f"{type(optimizer).__name__}/{getattr(variable, 'name', 'variable')}:0"


def weight_name(layer_name: str, variable: Any) -> str:
    """A Keras layer's variable saved from ``model.fit``: ``dense/weights/dense/kernel:0``."""
    return f"{layer_name}/weights/{variable_tf_name(variable)}"


def tape_weight_name(variable: Any) -> str:
    """A variable saved from a GradientTape loop: ``weights/dense/kernel:0``."""
    return "weights/" + variable_tf_name(variable)


def gradient_name(variable: Any) -> str:
    """``gradients/dense/kernelGrad`` (smdebug drops the ``:0``)."""
    return "gradients/" + variable_tf_name(variable).split(":")[0] + "Grad"


def layer_tensor_name(layer_name: str, side: str, index: int | None) -> str:
    """``dense/inputs``, ``dense/outputs`` (``_<i>`` when the layer has several)."""
    base = f"{layer_name}/{side}s"
    return base if index is None else f"{base}_{index}"


def model_io_names(prefix: str, count: int, nested: bool) -> list[str]:
    """``inputs`` / ``labels`` / ``predictions``, or ``<prefix>_<i>`` for lists and dicts."""
    return [f"{prefix}_{i}" for i in range(count)] if nested else [prefix]
