"""The callbacks a saved PyTorch step attaches, and their attaching and detaching.

:class:`StepHooks` is the part of the PyTorch :class:`~._hook.Hook` that, on a step where some
collection is due, attaches the step's save plan (``_save_plan``): forward hooks on the modules
whose inputs / outputs are saved and gradient hooks on the parameters whose gradients are. They
stay attached while the following steps save the same (same due collections, same mode kind)
and are detached when a step saves something else, or nothing (``Hook._next_step``).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any, cast

import torch

from ...modes import ModeKeys
from .._collections import Collection
from .._hook import BaseHook
from ._live_raw import LiveRaw
from ._save_plan import SavePlan, make_plan

if TYPE_CHECKING:
    from ._device_reductions import DeviceReductions
    from ._hook import Hook

__all__ = ["StepHooks"]

#: the key of the gradient hooks ``_attach`` sets without ``register_hook`` (torch's handles: ints from 0)
_GRAD_HOOK = -0x5D0


class StepHooks(BaseHook):
    """Attaches and detaches a saved step's forward and gradient callbacks (the PyTorch hook's base)."""

    _device_reductions: DeviceReductions  # set by the Hook's _init_adapter

    if TYPE_CHECKING:  # the Hook's smdebug extension points, which the forward callbacks call

        def _write_inputs(self, name: str, inputs: Any) -> None: ...
        def _write_outputs(self, name: str, outputs: Any) -> None: ...

    def _init_step_hooks(self) -> None:
        self._live_raw = LiveRaw()  # the saved steps' raw CPU weights, read live when allowed
        self._handles: list[Any] = []
        self._hooked_params: list[torch.nn.Parameter] = []
        self._grads_left = 0  # gradient hooks of this step that have not run yet
        self._attached: tuple[bool, frozenset[Collection]] | None = None  # the plan of self._handles
        self._plans: dict[tuple[bool, frozenset[Collection]], SavePlan] = {}
        self._callbacks: dict[tuple[str, bool, bool] | tuple[str, bool], Any] = {}

    def _attach(self) -> SavePlan:
        """Attach forward and gradient hooks for this (saved) step only."""
        train = self._train_mode()
        key = (train, self._due)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = make_plan(cast("Hook", self), train)
        if not self._handles and not self._hooked_params:  # else attached by the last step, which saved the same
            self._attached = key
            for mod, callback in plan.forward:
                self._handles.append(mod.register_forward_hook(callback))
            for param, callback in plan.grads:
                if param.requires_grad:  # may have been frozen since the plan was made
                    if param._backward_hooks is None and param.__class__ is torch.nn.Parameter:
                        # nobody else's hook on it: ours set in one call, as register_hook
                        # would (without its handle's Python, 5 us a parameter)
                        param._backward_hooks = OrderedDict(((_GRAD_HOOK, callback),))
                    else:
                        self._handles.append(param.register_hook(callback))
                    self._hooked_params.append(param)
        self._grads_left = len(self._hooked_params)
        return plan

    def _forget_plans(self) -> None:
        self._plans.clear()
        self._attached = None  # the attached hooks follow a forgotten plan: re-attached next step

    def _train_mode(self) -> bool:
        return self._clock.mode not in (ModeKeys.EVAL, ModeKeys.PREDICT)

    def _detach(self) -> None:
        self._attached = None
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        for param in self._hooked_params:
            hooks = param._backward_hooks
            if hooks:  # ours, set by _attach (hooks registered since then by others stay)
                hooks.pop(_GRAD_HOOK, None)
            # Removing a tensor hook leaves an empty ``_backward_hooks`` dict whose C++ side
            # still runs on every backward (GIL, a tensor wrapper per parameter): about 1 % of
            # a short step, on every step after the first saved one. Drop it when empty.
            if not hooks and hooks is not None:
                param._backward_hooks = None
        self._hooked_params.clear()

    def _forward_callback(self, name: str, inputs: bool, outputs: bool) -> Any:
        """The (cached) forward hook saving module ``name``'s inputs and/or outputs."""
        key = (name, inputs, outputs)
        callback = self._callbacks.get(key)
        if callback is None:

            def callback(module: torch.nn.Module, args: Any, result: Any) -> None:
                if self._disabled:
                    return
                if inputs:
                    self._write_inputs(name, args)
                if outputs:
                    self._write_outputs(name, result)

            self._callbacks[key] = callback
        return callback

    def _grad_callback(self, name: str, deferred: bool = False) -> Any:
        """The (cached) gradient hook saving ``name`` (``gradient/<parameter>``); ``deferred``:
        saved when the backward pass ends (reductions only, see ``DeviceReductions.defer``)."""
        key = (name, deferred)
        callback = self._callbacks.get(key)
        if callback is None:

            def callback(grad: torch.Tensor) -> None:
                if not self._disabled and grad is not None:
                    if deferred:
                        self._device_reductions.defer(self._save_deferred, name, grad)
                    else:
                        self._guarded(self._save_for_tensor, name, grad)
                self._grads_left -= 1
                if self._grads_left == 0 and self._output is not None:
                    # the backward pass is over: reduce its gradients while the optimizer runs
                    self._output.hand_over()

            self._callbacks[key] = callback
        return callback

    def _save_deferred(self, grads: list[tuple[str, torch.Tensor]]) -> None:
        """Save the gradients deferred to the backward pass's end (``DeviceReductions.defer``),
        in one call of the failure boundary."""
        if not self._disabled:
            self._guarded(self._save_each, grads)

    def _save_each(self, grads: list[tuple[str, torch.Tensor]]) -> None:
        save = self._save_for_tensor
        for name, grad in grads:
            save(name, grad)
