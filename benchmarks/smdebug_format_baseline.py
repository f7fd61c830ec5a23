"""smdebug 1.0.34's writer and reader on the reference §5 workload (run under .venv-smdebug).

Usage: python smdebug_format_baseline.py WORKDIR STEPS TENSORS SIZE [WORKERS]
Prints one JSON line: {"write_s", "create_trial_s", "read_s", "write_cpu_s", "read_cpu_s"}.
``python smdebug_format_baseline.py read WORKDIR`` only reads an existing trial (every value of
every tensor, step by step, of every worker) and prints {"create_trial_s", "read_s", "read_cpu_s"};
it also writes ``progress STEPS_DONE CREATE_TRIAL_S READ_S`` to stderr after every step, so a
caller that stops it at a deadline knows exactly how far it got.
Not imported by the package or the tests; ``bench_format`` runs it in a subprocess.
"""

import json
import os
import sys
import time

os.environ.setdefault("SMDEBUG_LOG_LEVEL", "error")
os.environ.setdefault("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0")

import numpy as np
from smdebug.core.modes import ModeKeys
from smdebug.core.writer import FileWriter
from smdebug.trials import create_trial


def write(workdir, steps, tensors, size, workers=1):
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=size).astype(np.float32) for _ in range(tensors)]
    names = [f"layer{i}/weight" for i in range(tensors)]
    c0, t0 = time.process_time(), time.perf_counter()
    for step in range(steps):
        for worker in range(workers):
            w = FileWriter(trial_dir=workdir, step=step, worker=f"worker_{worker}")
            for name, arr in zip(names, arrays):
                w.write_tensor(arr, name, mode=ModeKeys.TRAIN, mode_step=step)
            w.close()
    write_s, write_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    os.makedirs(os.path.join(workdir, "collections", "000000000"), exist_ok=True)
    for worker in range(workers):
        with open(os.path.join(workdir, "collections", "000000000", f"worker_{worker}_collections.json"), "w") as fh:
            json.dump({"collections": {}, "_meta": {"num_workers": workers}}, fh)
    open(os.path.join(workdir, "training_job_end.ts"), "w").close()
    return {"write_s": write_s, "write_cpu_s": write_cpu_s}


def read(workdir):
    c0, t0 = time.process_time(), time.perf_counter()
    trial = create_trial(workdir)
    t1 = time.perf_counter()
    objs = [trial.tensor(n) for n in trial.tensor_names()]
    workers = sorted(trial.workers())
    for done, step in enumerate(trial.steps(), 1):
        for t in objs:
            if len(workers) == 1:
                t.value(step)
            else:
                for worker in workers:
                    t.value(step, worker=worker)
        print(f"progress {done} {t1 - t0:.3f} {time.perf_counter() - t1:.3f}", file=sys.stderr, flush=True)
    t2, read_cpu_s = time.perf_counter(), time.process_time() - c0
    return {"create_trial_s": t1 - t0, "read_s": t2 - t1, "read_cpu_s": read_cpu_s}


def main(argv):
    if argv[0] == "read":
        print(json.dumps(read(argv[1])))
        return
    out = write(argv[0], *(int(a) for a in argv[1:]))
    out.update(read(argv[0]))
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
