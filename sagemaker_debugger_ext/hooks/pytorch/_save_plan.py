"""What a PyTorch step that saves something attaches and writes: its save plan.

A plan is made once per set of due collections and mode kind (training or not), the first
time a step saves that set, and kept (``Hook._plans``) until the collections change
(``Hook._forget_plans``): which modules get a forward hook (inputs and/or outputs saved),
which parameters get a gradient hook, and which parameters are saved with which due
collections at the step's start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from .._collections import GRADIENT_PREFIX, Collection

if TYPE_CHECKING:
    from ._hook import Hook

__all__ = ["SavePlan", "io_collections", "make_plan"]


class SavePlan(NamedTuple):
    """The hooks and parameter saves of a step, for one set of due collections."""

    forward: list[tuple[torch.nn.Module, Any]]
    grads: list[tuple[torch.nn.Parameter, Any]]
    params: list[tuple[str, torch.nn.Parameter, tuple[Collection, ...]]]


def make_plan(hook: Hook, train: bool) -> SavePlan:
    """What a step of ``hook`` with its current due collections saves (``train``: gradients too)."""
    due = hook._due
    forward = []
    for mod, name in () if hook._own_forward else (*hook._modules.items(), *hook._loss_modules.items()):
        inputs, outputs = (hook._own_write or any(c in due for c in io_collections(hook, mod, f"{name}_{side}_0"))
                           for side in ("input", "output"))  # fmt: skip
        if inputs or outputs:
            forward.append((mod, hook._forward_callback(name, inputs, outputs)))
    grads = []
    if train and not hook._own_backward:  # all parameters, frozen too: requires_grad is checked when attaching
        for name, param in hook._params:
            gname = GRADIENT_PREFIX + name
            # matched, not registered: a frozen parameter's gradient is listed in its
            # collections only once one is saved (by the gradient hook)
            colls = tuple(c for c in hook._to_save if c in due and c.matches(gname))
            if colls:  # reductions only on the device (no TensorBoard): saved at the backward pass's end
                deferred = hook._tb is None and hook._device_reductions.defers(colls, param)
                grads.append((param, hook._grad_callback(gname, deferred)))
    params = [(name, param, colls) for name, param in hook._params
              if (colls := tuple(c for c in hook._collections_of(name) if c in due))]  # fmt: skip
    return SavePlan(forward, grads, params)


def io_collections(hook: Hook, mod: torch.nn.Module, probe: str) -> tuple[Collection, ...]:
    """The collections of ``mod``'s tensor ``probe`` (``<name>_input_0`` / ``_output_0``):
    by name, or by the module's class (activation collections); cached per module."""
    colls = hook._io_colls.get((mod, probe))
    if colls is None:
        by_class = hook._activation_prefixes.get(probe[:-1], ())
        colls = tuple(c for c in hook._to_save if c.matches(probe) or c.name in by_class)
        hook._io_colls[(mod, probe)] = colls
    return colls
