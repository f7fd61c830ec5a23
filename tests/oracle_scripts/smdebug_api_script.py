"""One script, run unchanged but for its package under real smdebug and under sagemaker_debugger_ext.

Usage: python smdebug_api_script.py PACKAGE WORK_DIR OUT.json
Exercises the public names of smdebug's docs (api.md, analysis.md): FileWriter, CollectionManager,
SaveConfig / ReductionConfig / Collection JSON round trips, create_trial, LocalTrial, trial.collection,
no_refresh / refresh with a trial or a list, has_passed_step and the errors of a trial. Writes what it
saw as JSON (exception class names stand for errors). Never imported by the tests.
"""

import importlib
import json
import os
import sys

import numpy as np

os.environ.setdefault("SMDEBUG_LOG_LEVEL", "error")
pkg, work, out = sys.argv[1:4]


def mod(name):
    return importlib.import_module(f"{pkg}.{name}" if name else pkg)


def err(fn):
    try:
        return ["ok", fn()]
    except Exception as exc:
        return ["error", type(exc).__name__]


smd = mod("")
modes = smd.modes
ModeKeys = mod("core.modes").ModeKeys
FileWriter = mod("core.writer").FileWriter
CollectionManager = mod("core.collection_manager").CollectionManager
Collection = mod("core.collection").Collection
CollectionKeys = mod("core.collection").CollectionKeys
SaveConfig, SaveConfigMode = mod("core.save_config").SaveConfig, mod("core.save_config").SaveConfigMode
ReductionConfig = mod("core.reduction_config").ReductionConfig
StepState = mod("core.tensor").StepState
consts = mod("core.config_constants")
trials = mod("trials")
no_refresh, refresh = mod("analysis.utils").no_refresh, mod("analysis.utils").refresh
training_has_ended = mod("core.access_layer.utils").training_has_ended
has_training_ended = mod("core.access_layer.utils").has_training_ended
get_path_to_collections = mod("core.utils").get_path_to_collections

res = {}
# configs: the top level and core modules name the same classes; JSON round trips
res["top_level_same"] = [
    smd.SaveConfig is SaveConfig,
    smd.SaveConfigMode is SaveConfigMode,
    smd.ReductionConfig is ReductionConfig,
    modes.TRAIN == ModeKeys.TRAIN,
]
sc = SaveConfig(save_interval=3, start_step=1, save_steps=[7])
res["save_config"] = [
    SaveConfig.from_json(sc.to_json()) == sc,
    [sc.should_save_step(modes.TRAIN, s) for s in range(10)],
]
mode_sc = SaveConfig({ModeKeys.TRAIN: SaveConfigMode(save_interval=2), ModeKeys.EVAL: SaveConfigMode(start_step=1)})
res["save_config_modes"] = [[mode_sc.should_save_step(m, s) for s in range(4)] for m in (modes.TRAIN, modes.EVAL)]
rc = ReductionConfig(reductions=["min", "max"], abs_norms=["l2"], save_raw_tensor=True)
res["reduction_config"] = ReductionConfig.from_json(rc.to_json()) == rc
coll = Collection("c1", include_regex=["conv2d"], tensor_names=["a", "b"], reduction_config=ReductionConfig())
res["collection"] = [
    Collection.from_json(coll.to_json()) == coll,
    sorted(Collection.from_json(coll.to_json()).tensor_names),
]
res["collection_keys"] = [CollectionKeys.WEIGHTS, CollectionKeys.GRADIENTS, CollectionKeys.LOSSES]
res["consts"] = [
    consts.DEFAULT_COLLECTIONS_FILE_NAME,
    consts.INCOMPLETE_STEP_WAIT_WINDOW_KEY,
    consts.CONFIG_FILE_PATH_ENV_STR,
    mod("core.json_config").DEFAULT_RESOURCE_CONFIG_FILE,
]

# a trial written with FileWriter: even steps TRAIN, odd steps EVAL
trial_dir = os.path.join(work, "trial")
for step in range(6):
    mode = ModeKeys.TRAIN if step % 2 == 0 else ModeKeys.EVAL
    with FileWriter(trial_dir=trial_dir, step=step, worker="worker_0") as fw:
        for i in range(3):
            fw.write_tensor(
                tdata=np.full((2, 3), step * 10 + i, dtype=np.float32), tname=f"foo_{i}", mode=mode, mode_step=step // 2
            )
        fw.write_tensor(tdata=np.array(["x", "yz"]), tname="strings", mode=mode, mode_step=step // 2)
cm = CollectionManager()
cm.add("default")
cm.get("default").tensor_names = ["foo_0", "foo_1"]
cm.add(Collection("losses", include_regex=["foo_2"]))
cm.export(trial_dir, consts.DEFAULT_COLLECTIONS_FILE_NAME)
loaded = CollectionManager.load(os.path.join(get_path_to_collections(trial_dir), consts.DEFAULT_COLLECTIONS_FILE_NAME))
res["manager_round_trip"] = [loaded == cm, sorted(loaded.collections)]
res["ended_before"] = has_training_ended(trial_dir)

t = trials.create_trial(trial_dir)
res["steps"] = [t.steps(), t.steps(mode=modes.TRAIN), t.steps(mode=modes.EVAL), sorted(m.name for m in t.modes())]
res["mode_of"] = [[t.mode(s).name, t.mode_step(s)] for s in t.steps()]
res["global_step"] = t.global_step(modes.EVAL, 2)
res["tensor_names"] = [t.tensor_names(), t.tensor_names(collection="default"), t.tensor_names(regex="foo_[12]")]
res["values"] = [
    t.tensor("foo_1").value(4).tolist(),
    t.tensor("foo_2").value(1, mode=modes.EVAL).tolist(),
    t.tensor("strings").value(0).tolist(),
]
res["tensor_steps"] = [t.tensor("foo_0").steps(), t.tensor("foo_0").steps(mode=modes.TRAIN)]
res["collections"] = sorted(t.collections())
new = t.collection("mine")
new.include("foo_[02]")
res["new_collection"] = t.tensor_names(collection=new)
res["errors"] = [err(lambda: t.tensor("nope")), err(lambda: t.tensor("foo_0").value(99))]
res["has_passed_running"] = [t.has_passed_step(3).name, t.has_passed_step(10).name]

# a seventh step arrives: no_refresh (a trial, a list) does not see it, refresh does
with FileWriter(trial_dir=trial_dir, step=6, worker="worker_0") as fw:
    fw.write_tensor(tdata=np.zeros(2), tname="foo_0", mode=ModeKeys.TRAIN, mode_step=3)
with no_refresh(t) as same:
    res["no_refresh_one"] = [same is t, t.steps()]
with no_refresh([t]) as as_list:
    res["no_refresh_list"] = [as_list == [t], t.steps()]
with refresh(t):
    res["refresh"] = t.steps()
training_has_ended(trial_dir)
res["ended_after"] = has_training_ended(trial_dir)
t2 = trials.LocalTrial("local", trial_dir)
res["local_trial"] = [isinstance(t2, trials.Trial), t2.steps(), t2.has_passed_step(7).name, t2.loaded_all_steps]
res["state_names"] = [s.name for s in StepState]

with open(out, "w") as fh:
    json.dump(res, fh, default=str)
