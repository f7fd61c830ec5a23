"""Run under .venv-smdebug (real smdebug 1.0.34) by tests and benchmarks; never imported.

Usage:
    python smdebug_oracle.py write TRIAL_DIR SPEC.npz STEP MODE MODE_STEP WALL_TIME
        write every array of SPEC.npz (in key order) with smdebug.core.writer.FileWriter
    python smdebug_oracle.py dump TRIAL_DIR OUT_PREFIX
        smdebug's view of a trial: OUT_PREFIX.json (names, steps, workers, ...) and
        OUT_PREFIX.npz (values and reductions)
    python smdebug_oracle.py batch COMMANDS.json
        run several commands ([["dump", TRIAL, OUT], ["write", ...], ...]) in one process
"""

import json
import os
import sys

import numpy as np


def write(trial, spec, step, mode, mode_step, wall_time):
    from smdebug.core.modes import ModeKeys
    from smdebug.core.writer import FileWriter

    arrays = np.load(spec)
    w = FileWriter(trial_dir=trial, step=int(step), worker="worker_0")
    for name in arrays.files:
        w.write_tensor(
            arrays[name],
            name.replace("|", "/"),
            mode=ModeKeys[mode],
            mode_step=int(mode_step),
            timestamp=float(wall_time),
        )
    w.close()


def dump(trial_dir, out):
    from smdebug.trials import create_trial

    trial = create_trial(trial_dir)
    info = {
        "steps": trial.steps(),
        "modes": sorted(m.name for m in trial.modes()),
        "workers": sorted(trial.workers()),
        "steps_by_mode": {m.name: trial.steps(mode=m) for m in trial.modes()},
        "tensor_names": trial.tensor_names(),
        "tensor_names_prefixed": trial.tensor_names(show_prefixed_tensors=True),
        "collections": sorted(trial.collections()),
        "loaded_all_steps": trial.loaded_all_steps,
        "tensors": {},
    }
    if trial.modes():
        info["mode_of"] = {str(s): trial.mode(s).name for s in trial.steps()}
    arrays = {}
    names = trial.tensor_names(show_prefixed_tensors=True)
    for name in names:
        t = trial.tensor(name)
        entry = {"steps": t.steps(), "by_mode": {m.name: t.steps(mode=m) for m in trial.modes()}, "values": {}}
        for s in t.steps():
            entry["workers_" + str(s)] = sorted(t.workers(s))
            try:
                v = t.value(s)
                arrays[f"{name}|{s}"] = v
                entry["values"][str(s)] = True
            except Exception as exc:
                entry["values"][str(s)] = type(exc).__name__
            try:
                red = t.reduction_values(s)
                for (op, absval), rv in red.items():
                    arrays[f"{name}|{s}|red|{op}|{int(absval)}"] = np.asarray(rv)
            except Exception as exc:
                entry["reductions_" + str(s)] = type(exc).__name__
        info["tensors"][name] = entry
    with open(out + ".json", "w") as fh:
        json.dump(info, fh, default=str)
    np.savez(out + ".npz", **arrays)


if __name__ == "__main__":
    os.environ.setdefault("SMDEBUG_LOG_LEVEL", "error")
    os.environ.setdefault("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0")
    commands = {"write": write, "dump": dump}
    cmd, *args = sys.argv[1:]
    if cmd == "batch":
        with open(args[0]) as fh:
            for name, *rest in json.load(fh):
                commands[name](*rest)
    else:
        commands[cmd](*args)
