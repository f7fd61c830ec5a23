"""smdebug.xgboost's surface without the oracle: singleton, submodules, TensorBoard with every
collection (string trees columns), scalars after train(), scalar shapes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xgboost as xgb

import sagemaker_debugger_ext as smd
import sagemaker_debugger_ext.xgboost as smx
from sagemaker_debugger_ext.format import TensorBoardWriter
from sagemaker_debugger_ext.trials import create_trial


def _train(hook: smx.Hook, rounds: int = 4) -> None:
    rng = np.random.RandomState(0)
    dtrain = xgb.DMatrix(rng.rand(30, 3), label=rng.randint(2, size=30))
    xgb.train({"max_depth": 2, "objective": "binary:logistic"}, dtrain, num_boost_round=rounds,
              evals=[(dtrain, "train")], callbacks=[hook])  # fmt: skip


def test_singleton_and_submodules(tmp_path: Path) -> None:
    """get_hook() is the hook created last; del_hook forgets it; set_hook replaces it."""
    from sagemaker_debugger_ext.xgboost.collection import CollectionKeys
    from sagemaker_debugger_ext.xgboost.hook import Hook

    assert Hook is smx.Hook and CollectionKeys.TREES == "trees"
    hook = smx.Hook(out_dir=str(tmp_path / "a"))
    assert smx.get_hook() is hook
    smx.del_hook()
    assert smx.get_hook() is None  # no JSON config here
    smx.set_hook(hook)
    assert smx.get_hook() is hook
    smx.del_hook()


def test_tensorboard_with_all_collections_and_scalar_after_train(tmp_path: Path) -> None:
    """include_collections=['all'] + export_tensorboard trains; a scalar saved after train() is kept."""
    out = tmp_path / "run"
    hook = smx.Hook(out_dir=str(out), include_collections=["all"], export_tensorboard=True,
                    save_config=smd.SaveConfig(save_interval=1))  # fmt: skip
    _train(hook)
    hook.save_scalar("after", 7.0)
    hook.close()
    trial = create_trial(out)
    assert any(n.startswith("trees/") for n in trial.tensor_names())
    after = trial.tensor("scalar/after")
    assert after.steps() == [4] and after.value(4).tolist() == [7.0]  # the last step already had files
    assert trial.tensor("train-logloss").value(0).shape == (1,)  # smdebug's shape for scalars
    assert any((out / "tensorboard").rglob("*.tfevents"))


def test_scalar_after_train_joins_an_unsaved_last_step(tmp_path: Path) -> None:
    """When the last iteration saved nothing, the scalar lands on it (smdebug's step)."""
    hook = smx.Hook(out_dir=str(tmp_path), save_config=smd.SaveConfig(save_steps=[0, 2]))
    _train(hook)
    hook.save_scalar("after", 1.0)
    hook.close()
    assert create_trial(tmp_path).tensor("scalar/after").steps() == [3]


def test_histogram_of_strings_is_skipped(tmp_path: Path) -> None:
    """TensorBoardWriter.add_histogram writes nothing for non-numeric values (no exception)."""
    writer = TensorBoardWriter(tmp_path, mode_name="TRAIN")
    assert writer.add_histogram("t", np.array(["0-0", "0-1"]), 0) is False
    assert writer.add_histogram("o", np.array([object()]), 0) is False
    assert writer.add_histogram("n", np.array([1.0, 2.0]), 0) is True
    writer.close()
