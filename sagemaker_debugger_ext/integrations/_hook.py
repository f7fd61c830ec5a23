"""The hook the trainer integrations use: one step per optimizer step.

A trainer runs several forward passes per optimizer step when it accumulates gradients.
:class:`TrainerHook` is the PyTorch hook with its ``forward_pre_hook`` gated: in TRAIN mode
a forward pass opens a new step only when the integration said an optimizer step happened
since the last one (:meth:`TrainerHook.optimizer_stepped`); the other micro-batches of the
step run with the step's forward and gradient hooks removed (the step keeps what the first
micro-batch saved). EVAL and PREDICT forwards open one step each, as with the plain hook.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from .._container_env import (
    CONFIG_FILE_DEBUG_HOOK,
    SMDEBUG_CONFIG_FILE_PATH_ENV,
    ContainerPaths,
)
from .._exceptions import HookConfigError, field_error_message
from ..hooks.pytorch._hook import Hook
from ..modes import ModeKeys

__all__ = ["LOSS_NAME", "LOSS_TENSOR_NAME", "TrainerHook", "config_file_present", "resolve_hook", "to_float"]

#: ``record_tensor_value`` name of the trainer's loss: saved as ``loss_output_0`` (collection
#: ``losses``, by its default regex), in every mode, on the steps the collection saves.
LOSS_NAME = "loss"
LOSS_TENSOR_NAME = LOSS_NAME + Hook.OUTPUT_TENSOR_SUFFIX + "0"


class TrainerHook(Hook):
    """A PyTorch :class:`~sagemaker_debugger_ext.pytorch.Hook` whose TRAIN steps are optimizer steps.

    Same constructor and ``create_from_json_file()`` as ``Hook``. The integrations call
    :meth:`optimizer_stepped` after each optimizer step; a script driving it by hand does the same.
    """

    scalars_wait_for_saved_step = False  # trainers' numbers: in the step they were logged in (docs/hook.md)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._new_step_due = True
        self._external_steps = False  # True: steps only via begin_step() (Lightning)
        #: the mode of forward passes in eval mode (``model.eval()``): EVAL, or PREDICT during a prediction
        self.inference_mode = ModeKeys.EVAL

    def optimizer_stepped(self) -> None:
        """The optimizer just stepped: the next TRAIN forward pass opens the next step."""
        self._new_step_due = True

    def _record_step_loss(self, losses: Sequence[torch.Tensor], *, summed: bool) -> None:
        """Save the optimizer step's loss from its micro-batches' losses (nothing without any): their
        sum when each is its share of the step's loss (scaled for gradient accumulation), else their mean."""
        if losses:
            stacked = torch.stack(list(losses))
            self.record_tensor_value(LOSS_NAME, stacked.sum() if summed else stacked.mean())

    def _save_trainer_metrics(self, metrics: Mapping[str, Any], skip: Collection[str] = ()) -> None:
        """The trainer's metrics as scalars of the current step, SageMaker metrics too; values that are
        not numbers and the names in ``skip`` are left out; nothing before the first step."""
        if self.step < 0:
            return
        for name, value in metrics.items():
            number = to_float(value)
            if number is not None and name not in skip:
                self.save_scalar(name, number, sm_metric=True)

    def begin_step(self, mode: ModeKeys) -> None:
        """Open the next step in ``mode`` now (for trainers that signal batch starts)."""
        if self._disabled or self._closed:
            return
        if self.mode != mode:
            self.set_mode(mode)
        super().forward_pre_hook(None, ())  # type: ignore[arg-type]

    def begin_train_batch(self) -> None:
        """A training batch starts (for trainers that signal batch starts): the first one
        after an optimizer step opens the next TRAIN step; the others run unobserved."""
        if self._disabled or self._closed:
            return
        if not self._new_step_due:
            self._detach()
            return
        self._new_step_due = False
        self.begin_step(ModeKeys.TRAIN)

    def follow_forward(self, follow: bool) -> None:
        """Whether the registered model's forward calls open steps (default) or only :meth:`begin_step`."""
        self._external_steps = not follow

    def forward_pre_hook(self, module: torch.nn.Module, inputs: Any) -> None:
        """Open a step on the model's forward, once per optimizer step in TRAIN mode."""
        if self._external_steps or self._disabled or self._closed:
            return
        if module is not None and module.training:
            if self.mode != ModeKeys.TRAIN:
                self.set_mode(ModeKeys.TRAIN)
            if not self._new_step_due:
                # a further micro-batch of the same optimizer step: nothing more is saved for it
                self._detach()
                return
            self._new_step_due = False
        elif module is not None and self.mode != self.inference_mode:
            self.set_mode(self.inference_mode)
        super().forward_pre_hook(module, inputs)


def config_file_present() -> bool:
    """Whether the job has a Debugger hook config (``$SMDEBUG_CONFIG_FILE_PATH`` or the container's file)."""
    path = os.environ.get(SMDEBUG_CONFIG_FILE_PATH_ENV) or ContainerPaths().config_file(CONFIG_FILE_DEBUG_HOOK)
    return Path(path).is_file()


def resolve_hook(hook: TrainerHook | None, hook_kwargs: dict[str, Any]) -> TrainerHook | None:
    """The given hook, else one built from ``hook_kwargs``, else from the job's
    ``debughookconfig.json``; None when there is neither (the callback does nothing).

    Raises:
        HookConfigError: ``hook`` is not a ``TrainerHook``, or both ``hook`` and hook arguments were given.
    """
    if hook is not None:
        if not isinstance(hook, TrainerHook):
            msg = field_error_message("hook", "a sagemaker_debugger_ext.integrations.TrainerHook "
                                      "(it counts optimizer steps; same arguments as Hook)", type(hook).__name__)  # fmt: skip
            raise HookConfigError(msg, field="hook")
        if hook_kwargs:
            msg = field_error_message("hook", "either a hook or hook arguments, not both", sorted(hook_kwargs))
            raise HookConfigError(msg, field="hook")
        return hook
    if hook_kwargs:
        return TrainerHook(**hook_kwargs)
    if config_file_present():
        return TrainerHook.create_from_json_file()
    return None


def to_float(value: Any) -> float | None:
    """A metric value as a float (tensors and numpy scalars too); None when it is not a number."""
    if isinstance(value, torch.Tensor):
        return float(value.detach().float().reshape(-1)[0]) if value.numel() == 1 else None
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
