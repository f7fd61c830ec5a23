"""Screenshot job 2 (XGBoost): two of ten features carry the target (FeatureImportanceOverweight)."""

from __future__ import annotations

import numpy as np
import xgboost as xgb

import sagemaker_debugger_ext.xgboost as smx


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 10))
    y = (3 * x[:, 0] - 2 * x[:, 1] + 0.05 * rng.normal(size=400) > 0).astype(float)
    dtrain, dvalid = xgb.DMatrix(x[:300], label=y[:300]), xgb.DMatrix(x[300:], label=y[300:])
    params = {"max_depth": 3, "eta": 0.3, "objective": "binary:logistic", "eval_metric": "logloss"}
    hook = smx.Hook.create_from_json_file()
    hook.validation_data = dvalid
    hook.hyperparameters = params
    xgb.train(
        params,
        dtrain,
        num_boost_round=30,
        evals=[(dtrain, "train"), (dvalid, "validation")],
        callbacks=[hook],
        verbose_eval=False,
    )
    hook.close()


if __name__ == "__main__":
    main()
