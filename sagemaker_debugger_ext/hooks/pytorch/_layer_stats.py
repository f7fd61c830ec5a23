"""The ``layer_stats`` collection: per-layer gradient norm and update ratio, as scalars.

For a model too big to save whole, two numbers per layer and step tell most of what
VanishingGradient, ExplodingTensor and WeightUpdateRatio look for:

- ``layer_stats/<layer>/gradient_norm``: the L2 norm of the layer's gradients (all of its own
  parameters together) in the step's backward pass;
- ``layer_stats/<layer>/update_ratio``: ``||w_after - w_before|| / (||w_before|| + 1e-12)``
  over the layer's parameters, ``w_before`` taken when the step starts and ``w_after`` when
  the next one starts (after the optimizer's step); 0 when the optimizer did not step
  (gradient accumulation).

A layer is the module that owns the parameters (``transformer.h.0.attn.c_attn`` for
``transformer.h.0.attn.c_attn.weight``). The collection is saved in TRAIN steps only, as
float32 scalars of shape ``(1,)`` (norms accumulated in float32, one fused call for all
parameters). Cost at a saved step: one norm per gradient in the backward pass, and a copy
of the layers' parameters held from the step's start to the next step's start (the model's
size again, for one step). Parameters sharded by FSDP2 are left out (their norms would be
the local shard's).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from ._distributed import is_sharded

__all__ = ["LAYER_STATS_PREFIX", "LayerStats", "layer_of"]

LAYER_STATS_PREFIX = "layer_stats/"
_EPS = 1e-12


def layer_of(parameter_name: str) -> str:
    """The layer (owning module) of a parameter name: ``a.b.weight`` -> ``a.b``."""
    return parameter_name.rpartition(".")[0] or parameter_name


class LayerStats:
    """Computes one saved step's layer statistics (see the module docstring).

    Args:
        write: ``write(name, float32 array of shape (1,))`` saves a value into the step.
    """

    def __init__(self, write: Callable[[str, np.ndarray], None]) -> None:
        self._write = write
        self._params: list[torch.nn.Parameter] = []
        self._layers: list[str] = []  # the layer of each parameter, in the same order
        self._before: list[torch.Tensor] = []
        self._grad_sq: dict[int, torch.Tensor] = {}
        self._handles: list[Any] = []

    @property
    def active(self) -> bool:
        """Whether a step's statistics are being gathered."""
        return bool(self._params)

    def begin(self, params: Sequence[tuple[str, torch.nn.Parameter]]) -> None:
        """Start gathering for a saved TRAIN step (call before its forward pass)."""
        chosen = [(n, p) for n, p in params if p.requires_grad and not is_sharded(p)]
        if not chosen:
            return
        self._params = [p for _, p in chosen]
        self._layers = [layer_of(n) for n, _ in chosen]
        with torch.no_grad():
            self._before = [p.detach().clone() for p in self._params]
        for index, param in enumerate(self._params):
            self._handles.append(param.register_hook(self._grad_callback(index)))

    def _grad_callback(self, index: int) -> Callable[[torch.Tensor], None]:
        def callback(grad: torch.Tensor) -> None:
            if grad is None:
                return
            with torch.no_grad():
                sq = torch.linalg.vector_norm(grad.detach(), dtype=torch.float32).square()
            previous = self._grad_sq.get(index)  # a parameter used twice gets two gradients
            self._grad_sq[index] = sq if previous is None else previous + sq

        return callback

    def finish(self) -> None:
        """Write the step's statistics (call after the optimizer's step, before the step's
        output closes) and stop gathering."""
        if not self._params:
            return
        for handle in self._handles:
            handle.remove()
        for param in self._params:  # an empty hook dict still costs every backward (see Hook._detach)
            if not param._backward_hooks:
                param._backward_hooks = None
        try:
            with torch.no_grad():
                after = [p.detach() for p in self._params]
                deltas = torch._foreach_sub(after, self._before)  # one fused call per list
                delta_sq = [float(v) ** 2 for v in torch._foreach_norm(deltas)]
                before_sq = [float(v) ** 2 for v in torch._foreach_norm(self._before)]
            grad_sq = {i: float(v) for i, v in self._grad_sq.items()}
            for layer, indices in _by_layer(self._layers).items():
                update = sum(delta_sq[i] for i in indices) ** 0.5
                base = sum(before_sq[i] for i in indices) ** 0.5
                self._write(f"{LAYER_STATS_PREFIX}{layer}/update_ratio", _scalar(update / (base + _EPS)))
                if any(i in grad_sq for i in indices):
                    grad = sum(grad_sq.get(i, 0.0) for i in indices) ** 0.5
                    self._write(f"{LAYER_STATS_PREFIX}{layer}/gradient_norm", _scalar(grad))
        finally:
            self._params, self._layers, self._before = [], [], []
            self._grad_sq.clear()
            self._handles.clear()


def _by_layer(layers: Sequence[str]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for index, layer in enumerate(layers):
        groups.setdefault(layer, []).append(index)
    return groups


def _scalar(value: float) -> np.ndarray:
    return np.array([value], dtype=np.float32)
