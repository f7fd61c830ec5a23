"""The SageMaker XGBoost container's Debugger pattern (algorithm mode of the 1.x images), run
unchanged but for its package under real smdebug and under us.

Usage: python smdebug_xgboost_container_script.py PACKAGE WORK_DIR OUT.json
The container builds its hook with ``Hook.hook_from_config(json_config_path)`` from the
``debughookconfig.json`` SageMaker writes, then sets ``hyperparameters``, ``train_data`` and
``validation_data`` on it as attributes and appends it to the callbacks. Never imported by the tests.
"""

import importlib
import json
import os
import sys

import numpy as np
import xgboost

os.environ.setdefault("SMDEBUG_LOG_LEVEL", "error")
pkg, work, out = sys.argv[1:4]
sxgb = importlib.import_module(f"{pkg}.xgboost")
create_trial = importlib.import_module(f"{pkg}.trials").create_trial

out_dir = os.path.join(work, "tensors")
config = {
    "LocalPath": out_dir,
    "HookParameters": {"save_interval": "2"},
    "CollectionConfigurations": [
        {"CollectionName": name}
        for name in ("metrics", "feature_importance", "average_shap", "predictions", "labels", "hyperparameters")
    ],
}
config_path = os.path.join(work, "debughookconfig.json")
with open(config_path, "w") as fh:
    json.dump(config, fh)

rng = np.random.RandomState(7)
dtrain = xgboost.DMatrix(rng.rand(60, 4), label=rng.randint(2, size=60))
dval = xgboost.DMatrix(rng.rand(30, 4), label=rng.randint(2, size=30))
params = {"max_depth": 2, "eta": 0.3, "objective": "binary:logistic", "eval_metric": "logloss", "seed": 0}

res = {}
os.environ["SMDEBUG_CONFIG_FILE_PATH"] = config_path
from_env = sxgb.Hook.hook_from_config()  # the container's call, from the environment
res["from_env_is_hook"] = isinstance(from_env, sxgb.Hook)
del from_env  # smdebug 1.0.34 fails closing a hook that never trained
hook = sxgb.Hook.hook_from_config(config_path)  # and with the path, as the container passes it
hook.hyperparameters = params
hook.train_data = dtrain
hook.validation_data = dval
xgboost.train(params, dtrain, evals=[(dtrain, "train"), (dval, "validation")], num_boost_round=6, callbacks=[hook])
hook.close()
try:
    sxgb.Hook.hook_from_config(os.path.join(work, "missing.json"))
    res["missing"] = None
except Exception as exc:  # the type is what is compared
    res["missing"] = type(exc).__name__

t = create_trial(out_dir)
names = sorted(t.tensor_names())
res["steps"] = t.steps()
res["names"] = names
res["collections_saved"] = sorted(c for c in ("metrics", "average_shap", "predictions", "labels", "hyperparameters")
                                  if any(n in t.tensor_names(collection=c) for n in names))  # fmt: skip
# steps, not values: the two venvs' xgboost versions differ (1.7 beside smdebug)
res["validation_logloss_steps"] = t.tensor("validation-logloss").steps()
res["shapes"] = {n: list(np.shape(t.tensor(n).value(t.tensor(n).steps()[0]))) for n in names}
with open(out, "w") as fh:
    json.dump(res, fh, default=str)
