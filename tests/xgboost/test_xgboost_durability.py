"""Every boosting round is on disk when ``xgboost.train()`` returns, with the hook still open
(no ``close()``), as with smdebug: rules read trials while training runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xgboost as xgb

import sagemaker_debugger_ext.xgboost as smx
from sagemaker_debugger_ext.hooks import TrainingContext
from sagemaker_debugger_ext.trials import create_trial


def test_every_round_on_disk_when_train_returns_without_close(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2000, 5))
    y = (x[:, 0] > 0).astype(float)
    dtrain = xgb.DMatrix(x, label=y)
    for attempt in range(2):  # the race this guards against was intermittent: repeat it
        out = tmp_path / f"run{attempt}"
        hook = smx.Hook(out_dir=str(out), save_config=smx.SaveConfig(save_interval=1),
                        include_collections=["all"], train_data=dtrain, context=TrainingContext())  # fmt: skip
        xgb.train({"objective": "binary:logistic", "nthread": 1}, dtrain, num_boost_round=10,
                  evals=[(dtrain, "train")], callbacks=[hook], verbose_eval=False)  # fmt: skip
        trial = create_trial(str(out))
        assert trial.steps() == list(range(10))
        assert trial.tensor("train-logloss").steps() == list(range(10))
        hook.close()
