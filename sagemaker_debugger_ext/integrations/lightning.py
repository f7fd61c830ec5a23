"""PyTorch Lightning integration (``lightning.pytorch``; the ``pytorch_lightning`` package
name works too when it is the same Lightning).

Example::

    from sagemaker_debugger_ext.integrations.lightning import DebuggerCallback
    trainer = lightning.Trainer(max_epochs=3, callbacks=[DebuggerCallback()])

``DebuggerCallback()`` builds its hook from the job's ``debughookconfig.json`` (nothing
happens without one), ``DebuggerCallback(out_dir=..., save_config=...)`` from the ``Hook``
arguments, ``DebuggerCallback(hook=TrainerHook(...))`` uses the given hook. What is saved
and when: docs/hook.md, "Trainer integrations".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import lightning.pytorch as pl
import torch

from ..modes import ModeKeys
from ._hook import LOSS_NAME, TrainerHook, resolve_hook, to_float

__all__ = ["DebuggerCallback"]


def _loss_of(outputs: Any) -> torch.Tensor | None:
    loss = outputs.get("loss") if isinstance(outputs, Mapping) else outputs
    if isinstance(loss, torch.Tensor) and loss.numel() == 1:
        return loss.detach().float().reshape(())
    return None


class DebuggerCallback(pl.Callback):  # type: ignore[misc]
    """Saves the LightningModule's tensors, the loss, the learning rate and the logged metrics.

    Args:
        hook: a :class:`~sagemaker_debugger_ext.integrations.TrainerHook` to use.
        **hook_kwargs: ``Hook`` arguments (``out_dir``, ``save_config``, ``include_collections``, ...).

    Raises:
        HookConfigError: a bad hook or hook argument.
    """

    def __init__(self, hook: TrainerHook | None = None, **hook_kwargs: Any) -> None:
        self.hook = resolve_hook(hook, hook_kwargs)
        self._module: torch.nn.Module | None = None
        self._losses: list[torch.Tensor] = []
        self._stepped = False
        self._lr: float | None = None

    def setup(self, trainer: pl.Trainer, pl_module: pl.LightningModule, stage: str) -> None:
        if self.hook is None or self._module is not None:
            return
        self._module = pl_module
        self.hook.follow_forward(False)  # training_step need not call forward(): batches open steps
        if pl_module not in self.hook.module_maps:  # a second Trainer of the same module shares the hook
            self.hook.register_module(pl_module)

    def _active(self, trainer: pl.Trainer) -> bool:
        return self.hook is not None and self._module is not None and not trainer.sanity_checking

    # --- training ----------------------------------------------------------------------
    def on_train_batch_start(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch: Any, batch_idx: int
    ) -> None:
        if self._active(trainer):
            if self.hook is None:  # _active() checked it; for the type checker
                return
            self.hook.begin_train_batch()

    def on_before_optimizer_step(self, trainer: pl.Trainer, pl_module: pl.LightningModule, optimizer: Any) -> None:
        self._stepped = True
        groups = getattr(optimizer, "param_groups", None)
        self._lr = to_float(groups[0]["lr"]) if groups else None

    def on_train_batch_end(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        hook = self.hook
        if not self._active(trainer) or hook is None:
            return
        loss = _loss_of(outputs)
        if loss is not None:
            self._losses.append(loss)
        if not self._stepped:
            return
        self._stepped = False
        if hook.mode == ModeKeys.TRAIN:
            # automatic optimization returns each micro-batch's loss divided by accumulate_grad_batches
            hook._record_step_loss(self._losses, summed=pl_module.automatic_optimization)
        self._losses.clear()
        if self._lr is not None and hook.mode == ModeKeys.TRAIN:
            hook.save_scalar("learning_rate", self._lr)
        hook.optimizer_stepped()

    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._save_metrics(trainer)

    # --- validation, test, predict -----------------------------------------------------------
    def _begin(self, trainer: pl.Trainer, mode: ModeKeys) -> None:
        if self._active(trainer):
            if self.hook is None:  # _active() checked it; for the type checker
                return
            self.hook.begin_step(mode)

    def _eval_loss(self, trainer: pl.Trainer, outputs: Any) -> None:
        loss = _loss_of(outputs)
        if loss is not None and self._active(trainer):
            if self.hook is None:  # _active() checked it; for the type checker
                return
            self.hook.record_tensor_value(LOSS_NAME, loss)

    def on_validation_batch_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch: Any, batch_idx: int,
                                  dataloader_idx: int = 0) -> None:  # fmt: skip
        self._begin(trainer, ModeKeys.EVAL)

    def on_validation_batch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any,
                                batch_idx: int, dataloader_idx: int = 0) -> None:  # fmt: skip
        self._eval_loss(trainer, outputs)

    def on_test_batch_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch: Any, batch_idx: int,
                            dataloader_idx: int = 0) -> None:  # fmt: skip
        self._begin(trainer, ModeKeys.EVAL)

    def on_test_batch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any,
                          batch_idx: int, dataloader_idx: int = 0) -> None:  # fmt: skip
        self._eval_loss(trainer, outputs)

    def on_predict_batch_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch: Any, batch_idx: int,
                               dataloader_idx: int = 0) -> None:  # fmt: skip
        self._begin(trainer, ModeKeys.PREDICT)

    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._save_metrics(trainer)

    def on_test_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._save_metrics(trainer)

    def _save_metrics(self, trainer: pl.Trainer) -> None:
        """The metrics logged with ``self.log`` (``trainer.callback_metrics``), as scalars of the current step."""
        if self._active(trainer) and self.hook is not None:
            self.hook._save_trainer_metrics(trainer.callback_metrics)
