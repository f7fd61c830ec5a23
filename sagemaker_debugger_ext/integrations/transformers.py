"""Hugging Face ``transformers.Trainer`` integration.

Example::

    from sagemaker_debugger_ext.integrations.transformers import DebuggerCallback
    trainer = Trainer(model=model, args=args, train_dataset=ds, callbacks=[DebuggerCallback()])

``DebuggerCallback()`` builds its hook from the job's ``debughookconfig.json`` (nothing
happens without one), ``DebuggerCallback(out_dir=..., save_config=...)`` from the ``Hook``
arguments, ``DebuggerCallback(hook=TrainerHook(...))`` uses the given hook. What is saved
and when: docs/hook.md, "Trainer integrations".
"""

from __future__ import annotations

import functools
from typing import Any

import torch
import transformers

from ..modes import ModeKeys
from ._hook import LOSS_NAME, TrainerHook, resolve_hook, to_float

__all__ = ["DebuggerCallback", "add_debugger"]


class DebuggerCallback(transformers.TrainerCallback):
    """Saves the model's tensors, the loss, the learning rate and the metrics while ``Trainer`` runs.

    Args:
        hook: a :class:`~sagemaker_debugger_ext.integrations.TrainerHook` to use.
        **hook_kwargs: ``Hook`` arguments (``out_dir``, ``save_config``, ``include_collections``, ...).

    Raises:
        HookConfigError: a bad hook or hook argument.
    """

    def __init__(self, hook: TrainerHook | None = None, **hook_kwargs: Any) -> None:
        self.hook = resolve_hook(hook, hook_kwargs)
        self._model: torch.nn.Module | None = None
        self._losses: list[torch.Tensor] = []
        self._loss_is_partial = False
        self._lr: float | None = None

    # --- registration ----------------------------------------------------------------
    def _register(self, model: torch.nn.Module | None) -> None:
        if self.hook is None or model is None or self._model is not None:
            return
        self._model = model
        if model not in self.hook.module_maps:  # a second Trainer of the same model shares the hook
            self.hook.register_module(model)
        model.register_forward_hook(self._capture_loss, with_kwargs=True)

    def _capture_loss(self, module: torch.nn.Module, args: Any, kwargs: dict[str, Any], outputs: Any) -> None:
        hook = self.hook
        if hook is None or hook._disabled or hook._closed:
            return
        loss = outputs.get("loss") if isinstance(outputs, dict) else None
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            return
        loss = loss.detach().float().reshape(())
        if module.training:
            # with num_items_in_batch the model returns this micro-batch's share of the step's loss
            self._loss_is_partial = kwargs.get("num_items_in_batch") is not None
            self._losses.append(loss)
        else:
            hook.record_tensor_value(LOSS_NAME, loss)

    # --- Trainer events --------------------------------------------------------------
    def on_init_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        self._register(model)

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        self._register(model)

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._losses.clear()

    def on_optimizer_step(self, args: Any, state: Any, control: Any, optimizer: Any = None, **kwargs: Any) -> None:
        # the learning rate this optimizer step used (the scheduler steps after this event)
        self._lr = (
            to_float(optimizer.param_groups[0]["lr"]) if optimizer is not None and optimizer.param_groups else None
        )

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        hook = self.hook
        if hook is None or hook.step < 0:
            return
        hook._record_step_loss(self._losses, summed=self._loss_is_partial)
        self._losses.clear()
        if self._lr is not None:
            hook.save_scalar("learning_rate", self._lr)
        hook.optimizer_stepped()

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        # the trainer's logs (loss, grad_norm, epoch, eval_* metrics, the run summary);
        # learning_rate is saved at every optimizer step already
        self._save_metrics(logs, skip=("learning_rate",))

    def on_predict(
        self, args: Any, state: Any, control: Any, metrics: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        self._save_metrics(metrics)  # predict() does not log its metrics

    def _save_metrics(self, metrics: dict[str, Any] | None, skip: tuple[str, ...] = ()) -> None:
        if self.hook is not None and metrics:
            self.hook._save_trainer_metrics(metrics, skip)


def add_debugger(
    trainer: transformers.Trainer, hook: TrainerHook | None = None, **hook_kwargs: Any
) -> DebuggerCallback:
    """Add a :class:`DebuggerCallback` to ``trainer`` and report its ``predict()`` calls as PREDICT.

    Returns the callback (``callback.hook`` is None when there is no Debugger config).
    """
    callback = DebuggerCallback(hook, **hook_kwargs)
    trainer.add_callback(callback)
    callback._register(trainer.model)
    hook = callback.hook
    if hook is not None:
        predict = trainer.predict

        @functools.wraps(predict)
        def predict_in_predict_mode(*args: Any, **kwargs: Any) -> Any:
            hook.inference_mode = ModeKeys.PREDICT
            try:
                return predict(*args, **kwargs)
            finally:
                hook.inference_mode = ModeKeys.EVAL

        trainer.predict = predict_in_predict_mode  # type: ignore[method-assign]
    return callback
