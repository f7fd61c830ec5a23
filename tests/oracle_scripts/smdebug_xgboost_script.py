"""One XGBoost training script, run unchanged but for its package under real smdebug and under us.

Usage: python smdebug_xgboost_script.py PACKAGE WORK_DIR OUT.json COLLECTIONS(comma list)
The docs' XGBoost flow (docs/xgboost.md): ``smd.SaveConfig``, ``Hook(..., export_tensorboard=True)``,
``save_scalar`` before and after ``xgboost.train``, ``get_hook``/``set_hook``/``del_hook``,
``from <pkg>.xgboost.hook import Hook``, then the trial read back. Never imported by the tests.
"""

import importlib
import json
import os
import sys

import numpy as np
import xgboost

os.environ.setdefault("SMDEBUG_LOG_LEVEL", "error")
pkg, work, out, colls = sys.argv[1:5]
smd = importlib.import_module(pkg)
sxgb = importlib.import_module(f"{pkg}.xgboost")
HookFromSubmodule = importlib.import_module(f"{pkg}.xgboost.hook").Hook
CollectionKeys = importlib.import_module(f"{pkg}.xgboost.collection").CollectionKeys
create_trial = importlib.import_module(f"{pkg}.trials").create_trial

rng = np.random.RandomState(42)
dtrain = xgboost.DMatrix(rng.rand(40, 4), label=rng.randint(2, size=40))
dtest = xgboost.DMatrix(rng.rand(20, 4), label=rng.randint(2, size=20))
params = {"max_depth": 2, "eta": 0.3, "objective": "binary:logistic", "eval_metric": "logloss", "seed": 0}
res = {"hook_submodule": HookFromSubmodule is sxgb.Hook, "keys": [CollectionKeys.METRICS, CollectionKeys.TREES]}

out_dir = os.path.join(work, "run")
hook = sxgb.Hook(
    out_dir=out_dir,
    include_collections=colls.split(","),
    export_tensorboard=True,
    save_config=smd.SaveConfig(save_steps=[0, 2, 4, 6, 8]),
    hyperparameters=params,
    validation_data=dtest,
)
res["get_hook_is_hook"] = sxgb.get_hook() is hook
hook.save_scalar("before_train", 1.5)
hook.set_mode(smd.modes.TRAIN)
xgboost.train(params, dtrain, evals=[(dtrain, "train"), (dtest, "test")], num_boost_round=10, callbacks=[hook])
hook.save_scalar("after_train", 2.5)
hook.close()
sxgb.del_hook()
res["get_hook_after_del"] = sxgb.get_hook() is None
sxgb.set_hook(hook)
res["get_hook_after_set"] = sxgb.get_hook() is hook

t = create_trial(out_dir)
res["steps"] = t.steps()
res["train_steps"] = t.steps(mode=smd.modes.TRAIN)
res["collections"] = sorted(t.collections())
names = t.tensor_names()
res["names_no_trees"] = sorted(n for n in names if not n.startswith("trees/"))
res["has_trees"] = any(n.startswith("trees/") for n in names)
res["scalars"] = {
    n: {str(s): float(np.ravel(t.tensor(n).value(s))[0]) for s in t.tensor(n).steps()}
    for n in names
    if n.startswith("scalar/")
}
res["metric_steps"] = t.tensor("train-logloss").steps() if "train-logloss" in names else None
res["hyper_eta"] = (
    float(np.ravel(t.tensor("hyperparameters/eta").value(0))[0]) if "hyperparameters/eta" in names else None
)
res["shapes"] = {
    n: list(np.shape(t.tensor(n).value(t.tensor(n).steps()[0]))) for n in names if not n.startswith("trees/")
}
tb = os.path.join(out_dir, "tensorboard")
res["tensorboard_files"] = bool(os.path.isdir(tb) and any(files for _, _, files in os.walk(tb)))
with open(out, "w") as fh:
    json.dump(res, fh, default=str)
