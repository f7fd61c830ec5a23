"""A tiny XGBoost training script with the Debugger hook as a training callback."""

import argparse

import numpy as np
import xgboost

import sagemaker_debugger_ext.xgboost as smd


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_round", type=int, default=10)
    parser.add_argument("--max_depth", type=int, default=6)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 5))
    y = 3 * x[:, 0] + 0.5 * x[:, 1] + rng.normal(scale=0.1, size=400)
    dtrain = xgboost.DMatrix(x[:300], label=y[:300], feature_names=[f"f{i}" for i in range(5)])
    dval = xgboost.DMatrix(x[300:], label=y[300:], feature_names=[f"f{i}" for i in range(5)])

    hook = smd.Hook.create_from_json_file()
    hook.train_data = dtrain
    hook.validation_data = dval
    params = {"max_depth": args.max_depth, "eta": 0.3, "objective": "reg:squarederror"}
    xgboost.train(
        params,
        dtrain,
        num_boost_round=args.num_round,
        evals=[(dtrain, "train"), (dval, "validation")],
        callbacks=[hook],
    )


if __name__ == "__main__":
    main()
