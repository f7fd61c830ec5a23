"""The PyTorch hook (smdebug.pytorch's ``Hook``).

A forward pre-hook on the registered top module (``forward_pre_hook``) closes the previous
step and starts the next one. Only on a step where some collection is due does the hook
attach its forward hooks (module inputs/outputs, losses) and gradient hooks (``_step_hooks``),
and save parameters; they are removed when the step ends, so steps that save nothing cost one
counter update.

Subclasses keep smdebug's extension points: a subclass that overrides ``forward_hook`` or
``backward_hook`` gets them registered on every module / parameter for the whole run, as
smdebug does (the per-step fast path is then not used for that kind of hook), and the fast
path itself writes through ``_write_inputs`` / ``_write_outputs``, so overriding those is
honoured too. Every registered module carries smdebug's ``_module_name`` attribute.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch

from ..._exceptions import HookError, field_error_message
from .._arena import SlotCopies
from .._collections import GRADIENT_PREFIX, PYTORCH_BUILTIN_REGEXES, Collection, CollectionKeys
from .._step import raw_only
from ._device_reductions import DeviceReductions
from ._distributed import ShardedParams, on_first_step
from ._layer_stats import LayerStats
from ._live import WEIGHTS
from ._naming import activation_collections, module_names, parameter_names
from ._singleton import track
from ._step_hooks import StepHooks
from ._tensors import NUMPY_OK, PLAIN_TENSORS, iter_tensors, tensor_to_numpy

__all__ = ["Hook"]


class Hook(StepHooks):
    """Saves a PyTorch model's tensors while it trains (same API as ``smdebug.pytorch.Hook``).

    Example::

        import sagemaker_debugger_ext.pytorch as smd
        hook = smd.Hook.create_from_json_file()      # or smd.Hook(out_dir=..., ...)
        hook.register_module(model)
        hook.register_loss(criterion)
        hook.set_mode(smd.modes.TRAIN)

    .. versionadded:: 0.1.0
    """

    GRADIENT_PREFIX: ClassVar[str] = GRADIENT_PREFIX
    INPUT_TENSOR_SUFFIX: ClassVar[str] = "_input_"
    OUTPUT_TENSOR_SUFFIX: ClassVar[str] = "_output_"
    builtin_collections: ClassVar[Mapping[str, list[str]]] = PYTORCH_BUILTIN_REGEXES
    default_include_collections: ClassVar[tuple[str, ...]] = (CollectionKeys.LOSSES,)
    scalars_wait_for_saved_step = True  # smdebug: written when a saved step ends, or at close()
    copy_arena = SlotCopies  # each copy's array kept for the next saved step (measured, see hooks/_arena.py)

    def _init_adapter(self) -> None:
        self._roots: list[torch.nn.Module] = []  # the registered modules: their forward starts a step
        self._device_reductions = DeviceReductions()  # reductions-only tensors: reduced where they are
        self._modules: dict[torch.nn.Module, str] = {}
        self._loss_modules: dict[torch.nn.Module, str] = {}
        self._params: list[tuple[str, torch.nn.Parameter]] = []
        self._sharded = ShardedParams()  # FSDP2 DTensor parameters: gathered to save (_distributed)
        self._init_step_hooks()
        self._io_colls: dict[tuple[torch.nn.Module, str], tuple[Collection, ...]] = {}
        self._io_index: dict[str, int] = {}
        self._activation_prefixes: dict[str, tuple[str, ...]] = {}
        self._forward_started = 0.0
        self._layer_stats = LayerStats(self._write_layer_stat)
        self._layer_stats_due: frozenset[Collection] = frozenset()
        # a subclass's override of forward_hook / backward_hook is registered for the whole
        # run, as smdebug does; the per-step fast path is used only for the defaults
        cls = type(self)
        self._own_forward = cls.forward_hook is not Hook.forward_hook
        self._own_backward = cls.backward_hook is not Hook.backward_hook
        # overridden writers may rename: on saved steps every module's callback then runs
        self._own_write = cls._write_inputs is not Hook._write_inputs or cls._write_outputs is not Hook._write_outputs
        self.module_maps: dict[torch.nn.Module, str] = {}  # older smdebug releases' module -> name map
        track(self)  # the newest hook is the process's hook (held weakly unless set_hook'ed)

    # --- registration --------------------------------------------------------------------
    def register_module(self, module: torch.nn.Module) -> None:
        """Save this model's parameters, gradients and module inputs/outputs; its forward
        call starts each step.

        Raises:
            HookError: not an ``nn.Module``, or registered twice.
        """
        if not isinstance(module, torch.nn.Module):
            raise HookError(field_error_message("module", "a torch.nn.Module", type(module).__name__))
        names = module_names(module)
        if any(m in self._modules for m in names):
            raise HookError(field_error_message("module", "a module not registered before", type(module).__name__))
        self._modules.update(names)
        self.module_maps.update(names)
        for sub, name in names.items():
            sub._module_name = name  # type: ignore[assignment]  # smdebug's attribute, read by subclasses' forward_hook
            self._note_activation(sub, name)
        params = self._sharded.add(module, parameter_names(module))
        self._params.extend(params)
        module.register_forward_pre_hook(self.forward_pre_hook)
        self._roots.append(module)
        if self._metrics is not None:  # else at the first step, when profiling (_prepare)
            module.register_forward_hook(self._forward_end)
        if self._own_forward:
            for sub in names:
                sub.register_forward_hook(self.forward_hook)
        if self._own_backward:
            for pname, param in params:
                if param.requires_grad:
                    param.register_hook(self.backward_hook(pname))

    register_hook = register_module  # smdebug's zero-code-change patches call this name

    def register_loss(self, loss_module: torch.nn.Module) -> None:
        """Save this loss module's output (``<LossClass>_output_0``, collection ``losses``).

        Raises:
            HookError: not an ``nn.Module``.
        """
        if not isinstance(loss_module, torch.nn.Module):
            raise HookError(field_error_message("loss_module", "a torch.nn.Module", type(loss_module).__name__))
        name = loss_module._get_name()
        self._loss_modules[loss_module] = name
        self.module_maps[loss_module] = name
        loss_module._module_name = name
        if self._own_forward:
            loss_module.register_forward_hook(self.forward_hook)

    def _note_activation(self, module: torch.nn.Module, name: str) -> None:
        """Remember which activation collections ``module``'s tensors belong to (by class)."""
        for side in (self.INPUT_TENSOR_SUFFIX, self.OUTPUT_TENSOR_SUFFIX):
            colls = activation_collections(module, side)
            if colls:
                self._activation_prefixes[name + side] = colls

    def _prepare(self, *, check: bool = True) -> None:
        on_first_step(self)
        if self._metrics is not None:  # the first step, profiling: the forward pass's end is recorded
            for module in self._roots:
                module.register_forward_hook(self._forward_end)
        # smdebug's _prepare_collections: Collection.add_module_tensors -> the module's names
        for coll in self.collection_manager:
            for mod, (inputs, outputs) in coll.modules.items():
                name = self._modules.get(mod) or self._loss_modules.get(mod) or getattr(mod, "_module_name", None)
                if name is None:
                    continue
                if inputs:
                    coll.include(name + self.INPUT_TENSOR_SUFFIX)
                if outputs:
                    coll.include(name + self.OUTPUT_TENSOR_SUFFIX)
        super()._prepare(check=check)

    # --- per-step callbacks (smdebug's extension points) -----------------------------------
    def forward_pre_hook(self, module: torch.nn.Module, inputs: Any) -> None:
        """Runs before the registered module's forward: ends the previous step, starts the next."""
        if self._disabled or self._closed or self._quiet_step(self._clock.mode):
            return  # a step that saves nothing opened quietly (see hooks._quiet)
        self._guarded(self._next_step)

    def forward_hook(self, module: torch.nn.Module, inputs: Any, outputs: Any) -> None:
        """Saves ``module``'s inputs and outputs under ``module._module_name``.

        The hook calls this method only when a subclass overrides it (then on every module,
        every step, as smdebug); otherwise equivalent callbacks are attached on saved steps only.
        """
        if self._disabled or not self._due:
            return
        name = getattr(module, "_module_name", None) or self.module_maps.get(module) or module._get_name()
        self._write_inputs(name, inputs)
        self._write_outputs(name, outputs)

    def backward_hook(self, tname: str) -> Any:
        """A gradient hook saving ``gradient/<tname>`` (smdebug's closure factory)."""

        def back(grad: torch.Tensor) -> None:
            if not self._disabled and grad is not None and self._due:
                self._guarded(self._save_for_tensor, GRADIENT_PREFIX + tname, grad)

        return back

    def _write_inputs(self, name: str, inputs: Any) -> None:
        """Save the tensors in ``inputs`` as ``<name>_input_<i>`` (numbered on within a step)."""
        self._guarded(self._write_io, name, self.INPUT_TENSOR_SUFFIX, inputs)

    def _write_outputs(self, name: str, outputs: Any) -> None:
        """Save the tensors in ``outputs`` as ``<name>_output_<i>`` (numbered on within a step)."""
        self._guarded(self._write_io, name, self.OUTPUT_TENSOR_SUFFIX, outputs)

    def _get_collections_to_save_for_step(self) -> set[Collection]:
        """The collections due in the current step (smdebug's name)."""
        return set(self._due)

    def _save_custom_tensors_post_step(self) -> None:
        """smdebug's subclasses call this after writing; custom tensors are written at step end here."""

    def _next_step(self) -> None:
        if self._layer_stats.active:  # the optimizer has stepped: the ending step's update ratios
            self._layer_stats.finish()
        self._start_step()
        if (self._handles or self._hooked_params) and self._attached != (self._train_mode(), self._due):
            self._detach()  # kept when this step saves what the last one saved
        if self._io_index:
            self._io_index.clear()
        if self._metrics is not None:
            self._forward_started = time.time()
        if self._due:
            plan = self._attach()
            weights = self._live_raw.weights(self._writer, self._output_for_step, self._clock.step)
            with self._device_reductions.batch(WEIGHTS), weights:  # in a few calls; raw ones maybe read live
                for name, param, colls in plan.params:
                    self._write_for(name, param, colls)
            if any(c.name == CollectionKeys.LAYER_STATS for c in self._due):  # TRAIN steps only (see _due)
                self._layer_stats_due = self._due  # written at the step's end, maybe after set_mode()
                self._layer_stats.begin(self._params)
        if self._sharded:
            self._sharded.on_step(self)
        if self._handles or self._hooked_params or self._sharded or self._layer_stats.active:  # ended next step
            self._quiet.allow(None)

    def _forward_end(self, module: torch.nn.Module, inputs: Any, outputs: Any) -> None:
        if self._metrics is not None and self._forward_started:
            clock = self._clock
            self._metrics.record(
                "forward", self._forward_started, time.time(), clock.mode_steps[clock.mode], clock.mode
            )

    def _write_io(self, name: str, suffix: str, value: Any) -> None:
        key = name + suffix
        idx = self._io_index.get(key, 0)
        by_class = self._activation_prefixes.get(key)
        for tensor in iter_tensors(value):
            tname = f"{key}{idx}"
            if by_class:
                self._record_activation(tname, by_class)
            self._save_for_tensor(tname, tensor)
            idx += 1
        self._io_index[key] = idx

    def _record_activation(self, tname: str, collections: tuple[str, ...]) -> None:
        """List an activation module's tensor in its class's collections (saved JSON)."""
        for cname in collections:
            coll = self.collection_manager.get(cname)
            if tname not in coll.tensor_names:
                coll.add_tensor_name(tname)
                self._tensor_colls.pop(tname, None)
                self._dirty = True

    def record_tensor_value(self, tensor_name: str, tensor_value: torch.Tensor) -> None:
        """Save a tensor computed outside modules (e.g. ``F.mse_loss``) as ``<name>_output_0``.

        Raises:
            HookError: ``tensor_value`` is not a ``torch.Tensor``.
        """
        if not isinstance(tensor_value, torch.Tensor):
            raise HookError(field_error_message("tensor_value", "a torch.Tensor", type(tensor_value).__name__))
        if self._disabled or not self._due:
            return
        self._write_outputs(tensor_name, tensor_value)

    def _to_numpy(self, value: Any) -> tuple[np.ndarray, str | None]:
        if isinstance(value, torch.Tensor):
            return tensor_to_numpy(value)
        return super()._to_numpy(value)

    def _write_for(self, name: str, value: Any, collections: Sequence[Collection], private: bool = False) -> None:
        if self._tb is None:
            if value.__class__ in PLAIN_TENSORS and value.dtype in NUMPY_OK and value.is_cpu and raw_only(collections):
                # the usual saved tensor (a CPU weight, gradient or loss saved raw): its NumPy
                # view copied into the step (or read live), with none of the general path's Python per tensor
                if not self._live_raw.take(name, value):
                    self._output_for_step().write_raw(name, value.detach().numpy(), private=private)
                return
            if self._device_reductions.take(name, value, collections, self._output_for_step):
                return
        super()._write_for(name, value, collections, private)

    def _end_step(self, *, final: bool = False) -> None:
        if self._device_reductions.pending:  # the step's scalars reach the host before its files
            self._guarded(self._device_reductions.finish, self._writer.background)
        self._guarded(self._live_raw.settle)  # the step's live reads done and checked before its files
        super()._end_step(final=final)

    def _write_layer_stat(self, name: str, value: np.ndarray) -> None:
        colls = [c for c in self._collections_of(name) if c in self._layer_stats_due]
        if colls:
            self._write_for(name, value, colls)

    def close(self) -> None:
        """Write the last step and finish the run (also done at interpreter exit)."""
        self._detach()
        if self._layer_stats.active:
            self._guarded(self._layer_stats.finish)
        try:
            super().close()
        finally:  # the CPU reductions' thread (done by now: the last step's files waited for it)
            self._guarded(self._device_reductions.close)
            self._guarded(self._live_raw.close)
