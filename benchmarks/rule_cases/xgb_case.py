"""Seeded XGBoost runs for the rules benchmark (hook from ``SMDEBUG_CONFIG_FILE_PATH``).

Faults (from round 0): ``onefeature`` (the label depends almost only on one of ten features),
``shallow`` (``min_child_weight`` so large that trees cannot split); ``none`` is the control.
"""

from __future__ import annotations

import argparse

import numpy as np
import xgboost as xgb

import sagemaker_debugger_ext.xgboost as smd


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--fault", default="none")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=int, default=8)
    args, _ = p.parse_known_args()
    rng = np.random.default_rng(args.seed)
    x = rng.standard_normal((2000, 10))
    if args.fault == "onefeature":  # the label hangs on one feature
        y = (np.sin(3 * x[:, 0]) + 0.1 * x[:, 1:].sum(axis=1) > 0).astype(np.float64)
    else:
        y = (np.sin(x).sum(axis=1) + 0.5 * (x[:, 0] * x[:, 1]) > 0).astype(np.float64)
    dtrain = xgb.DMatrix(x[:1500], label=y[:1500])
    dval = xgb.DMatrix(x[1500:], label=y[1500:])
    params = {"objective": "binary:logistic", "max_depth": 3, "eta": 0.3, "seed": args.seed, "nthread": 1}
    if args.fault == "shallow":
        params["min_child_weight"] = 400.0
    hook = smd.Hook.create_from_json_file()
    hook.validation_data = dval
    hook.hyperparameters = params
    xgb.train(
        params,
        dtrain,
        num_boost_round=args.rounds,
        evals=[(dtrain, "train"), (dval, "validation")],
        callbacks=[hook],
        verbose_eval=False,
    )
    hook.close()


if __name__ == "__main__":
    main()
