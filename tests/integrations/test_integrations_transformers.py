"""transformers.Trainer with the Debugger callback: real CPU training of a tiny random LM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tiny_lm import TokenDataset, tiny_lm

transformers = pytest.importorskip("transformers")

from sagemaker_debugger_ext import modes
from sagemaker_debugger_ext.integrations.transformers import (
    DebuggerCallback,
    add_debugger,
)
from sagemaker_debugger_ext.pytorch import SaveConfig
from sagemaker_debugger_ext.trials import create_trial


def _args(tmp_path: Path, **kw: Any) -> Any:
    base = {"output_dir": str(tmp_path / "hf"), "per_device_train_batch_size": 4, "per_device_eval_batch_size": 4,
                "learning_rate": 1e-3, "report_to": [], "save_strategy": "no", "logging_steps": 1, "use_cpu": True,
                "disable_tqdm": True, "dataloader_num_workers": 0, "seed": 0}  # fmt: skip
    base.update(kw)
    return transformers.TrainingArguments(**base)


def test_trainer_accumulation_counts_optimizer_steps(tmp_path: Path) -> None:
    """16 rows, batch 4, accumulation 2: 2 optimizer steps per epoch, 2 epochs -> TRAIN steps 0..3
    (not 0..7); eval at each epoch end -> EVAL steps; loss, learning rate, eval metrics, weights
    and gradients read back."""
    out = tmp_path / "tensors"
    callback = DebuggerCallback(
        out_dir=str(out),
        include_collections=["losses", "weights", "gradients"],
        save_config=SaveConfig(save_interval=1),
    )
    trainer = transformers.Trainer(
        model=tiny_lm(), args=_args(tmp_path, gradient_accumulation_steps=2, num_train_epochs=2, eval_strategy="epoch"),
        train_dataset=TokenDataset(16), eval_dataset=TokenDataset(4, seed=1), callbacks=[callback],
    )  # fmt: skip
    trainer.train()
    assert trainer.state.global_step == 4
    callback.hook.close()
    trial = create_trial(str(out))
    train_steps = trial.steps(mode=modes.TRAIN)
    assert train_steps == [0, 1, 2, 3]
    assert trial.steps(mode=modes.EVAL) == [0, 1]  # one batch of 4 rows, twice
    loss = trial.tensor("loss_output_0")
    assert loss.steps(mode=modes.TRAIN) == train_steps and loss.steps(mode=modes.EVAL) == [0, 1]
    assert "loss_output_0" in trial.tensor_names(collection="losses")
    lr = trial.tensor("scalar/learning_rate")
    assert lr.steps(mode=modes.TRAIN) == train_steps
    assert float(lr.value(0, mode=modes.TRAIN)[0]) == pytest.approx(1e-3)  # linear decay: step 0 runs at the full rate
    assert float(lr.value(3, mode=modes.TRAIN)[0]) < 1e-3
    eval_loss = trial.tensor("scalar/eval_loss")
    assert eval_loss.steps(mode=modes.EVAL) == [0, 1]  # in the last eval step of each evaluation
    weight = "GPT2LMHeadModel_transformer.h.0.attn.c_attn.weight"
    assert trial.tensor(weight).steps(mode=modes.TRAIN) == train_steps
    assert trial.tensor("gradient/" + weight).steps(mode=modes.TRAIN) == train_steps
    # the saved weights are those each optimizer step started from: they change between steps
    assert (trial.tensor(weight).value(0) != trial.tensor(weight).value(1)).any()


def test_trainer_step_loss_matches_logged_loss(tmp_path: Path) -> None:
    """The saved per-step loss is the loss the Trainer logs for that optimizer step (logging_steps=1)."""
    out = tmp_path / "tensors"
    callback = DebuggerCallback(out_dir=str(out), save_config=SaveConfig(save_interval=1))
    trainer = transformers.Trainer(
        model=tiny_lm(), args=_args(tmp_path, gradient_accumulation_steps=2, max_steps=3),
        train_dataset=TokenDataset(24), callbacks=[callback],
    )  # fmt: skip
    trainer.train()
    callback.hook.close()
    logged = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    trial = create_trial(str(out))
    saved = [float(trial.tensor("loss_output_0").value(s, mode=modes.TRAIN)) for s in range(3)]
    assert saved == pytest.approx(logged, rel=1e-3)
    logged_scalar = trial.tensor("scalar/loss")
    assert logged_scalar.steps(mode=modes.TRAIN) == [0, 1, 2]


def test_predict_mode_and_no_config_is_a_no_op(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """add_debugger reports predict() as PREDICT; without a Debugger config the callback does nothing."""
    monkeypatch.delenv("SMDEBUG_CONFIG_FILE_PATH", raising=False)
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(tmp_path / "missing.json"))
    assert DebuggerCallback().hook is None
    out = tmp_path / "tensors"
    trainer = transformers.Trainer(model=tiny_lm(), args=_args(tmp_path))
    callback = add_debugger(trainer, out_dir=str(out))
    trainer.predict(TokenDataset(8))
    trainer.evaluate(TokenDataset(4))
    callback.hook.close()
    trial = create_trial(str(out))
    assert trial.steps(mode=modes.PREDICT) == [0, 1]
    assert trial.steps(mode=modes.EVAL) == [0]
    assert "scalar/test_loss" in trial.tensor_names()
