"""Lightning with the Debugger callback: the tiny random LM trained for real on CPU."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tiny_lm import TokenDataset, tiny_lm

pl = pytest.importorskip("lightning.pytorch")
import torch

from sagemaker_debugger_ext import modes
from sagemaker_debugger_ext.integrations.lightning import DebuggerCallback
from sagemaker_debugger_ext.pytorch import SaveConfig
from sagemaker_debugger_ext.trials import create_trial


class LitLM(pl.LightningModule):
    """Calls the inner model from training_step, never ``self.forward``."""

    def __init__(self, lr: float = 1e-3) -> None:
        super().__init__()
        self.model = tiny_lm()
        self.lr = lr
        self.step_losses: list[float] = []

    def training_step(self, batch: dict[str, Any], batch_idx: int) -> torch.Tensor:
        loss = self.model(**batch).loss
        self.step_losses.append(float(loss.detach()))
        return loss

    def validation_step(self, batch: dict[str, Any], batch_idx: int) -> torch.Tensor:
        loss = self.model(**batch).loss
        self.log("val_loss", loss)
        return loss

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=self.lr)


def _loader(n: int, seed: int = 0) -> Any:
    return torch.utils.data.DataLoader(TokenDataset(n, seed), batch_size=4)


def _trainer(callback: DebuggerCallback, tmp_path: Path, **kw: Any) -> Any:
    return pl.Trainer(accelerator="cpu", devices=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                      enable_model_summary=False, default_root_dir=str(tmp_path), callbacks=[callback], **kw)  # fmt: skip


def test_lightning_accumulation_and_validation(tmp_path: Path) -> None:
    """16 rows, batch 4, accumulate 2, 2 epochs: TRAIN steps 0..3 (optimizer steps); the loss
    saved per step is the mean of its micro-batches'; validation after each epoch is EVAL."""
    out = tmp_path / "tensors"
    callback = DebuggerCallback(out_dir=str(out), include_collections=["losses", "weights", "gradients"],
                                save_config=SaveConfig(save_interval=1))  # fmt: skip
    lit = LitLM()
    trainer = _trainer(callback, tmp_path, max_epochs=2, accumulate_grad_batches=2, num_sanity_val_steps=1)
    trainer.fit(lit, _loader(16), _loader(4, seed=1))
    assert trainer.global_step == 4
    callback.hook.close()
    trial = create_trial(str(out))
    assert trial.steps(mode=modes.TRAIN) == [0, 1, 2, 3]
    assert trial.steps(mode=modes.EVAL) == [0, 1]  # the sanity check is not a step
    loss = trial.tensor("loss_output_0")
    expected = [(lit.step_losses[2 * i] + lit.step_losses[2 * i + 1]) / 2 for i in range(4)]
    assert [float(loss.value(s, mode=modes.TRAIN)) for s in range(4)] == pytest.approx(expected, rel=1e-4)
    assert loss.steps(mode=modes.EVAL) == [0, 1]
    assert float(trial.tensor("scalar/learning_rate").value(3, mode=modes.TRAIN)[0]) == pytest.approx(1e-3)
    assert trial.tensor("scalar/val_loss").steps(mode=modes.EVAL) == [0, 1]
    weight = "LitLM_model.transformer.h.0.attn.c_attn.weight"
    assert trial.tensor("gradient/" + weight).steps(mode=modes.TRAIN) == [0, 1, 2, 3]


def test_lightning_predict_is_predict_mode(tmp_path: Path) -> None:
    """Trainer.predict: one PREDICT step per batch (weights saved in each)."""
    out = tmp_path / "tensors"
    callback = DebuggerCallback(
        out_dir=str(out), include_collections=["weights"], save_config=SaveConfig(save_interval=1)
    )

    class PredictLM(LitLM):
        def predict_step(self, batch: dict[str, Any], batch_idx: int) -> torch.Tensor:
            return self.model(input_ids=batch["input_ids"]).logits

    _trainer(callback, tmp_path).predict(PredictLM(), _loader(8))
    callback.hook.close()
    trial = create_trial(str(out))
    assert trial.steps(mode=modes.PREDICT) == [0, 1]
