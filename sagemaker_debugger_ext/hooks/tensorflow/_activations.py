"""Keras activation layers by class: the activation collections their tensors belong to.

As the PyTorch hook does for ``nn.ReLU``/``nn.Tanh``/``nn.Sigmoid`` modules, the Keras hook
lists the tensors of activation layers in the collections the rules read (``relu_output``,
``relu_input``, ``tanh_input``, ``sigmoid_input``) and keeps smdebug's names:

- ``keras.layers.ReLU`` and ``keras.layers.Activation("relu" | "tanh" | "sigmoid")``: the
  layer's inputs and outputs (``relu_1/inputs``, ``relu_1/outputs``);
- a layer with a fused ``activation`` argument (``Dense(64, activation="relu")``, ``Conv2D``):
  its outputs are the activation's output (``dense/outputs`` in ``relu_output``); the
  activation's input, which no other tensor holds, is saved as ``dense/activation_inputs``
  (only when one of its activation collections is saved; it is not in ``layers``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["activation_collections", "activation_of"]

_BY_FUNCTION: dict[str, dict[str, tuple[str, ...]]] = {
    "relu": {"input": ("relu_input",), "output": ("relu_output",)},
    "tanh": {"input": ("tanh_input",)},
    "sigmoid": {"input": ("sigmoid_input",)},
}


def activation_of(layer: Any) -> tuple[str | None, bool]:
    """(activation function name or None, whether it is fused into a computing layer)."""
    import keras

    if isinstance(layer, keras.layers.ReLU):
        plain = not getattr(layer, "negative_slope", 0) and not getattr(layer, "threshold", 0)
        return ("relu", False) if plain else (None, False)
    fn = getattr(layer, "activation", None)
    name = getattr(fn, "__name__", None)
    if name not in _BY_FUNCTION:
        return None, False
    if isinstance(layer, keras.layers.Activation):
        return name, False
    # fused: only layers that hold the function themselves (Dense, Conv*), not RNN cells' properties
    return (name, True) if "activation" in vars(layer) else (None, False)


def activation_collections(function: str | None, side: str) -> tuple[str, ...]:
    """The collections of ``function``'s ``side`` ('input' / 'output') tensors."""
    return _BY_FUNCTION.get(function or "", {}).get(side, ())
