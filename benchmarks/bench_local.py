"""Local mode: job overhead and NaN-detection latency.

``local_job_overhead_s``: wall time of ``Estimator.fit()`` (our Estimator, instance_type
"local") for a no-op script with three built-in rules (LossNotDecreasing, VanishingGradient,
ExplodingTensor) and the default profiler; target <= 3 s. Baseline in the same run:
``local_plain_script_s``, the same script run as a plain ``python`` subprocess; the ratio is
``local_job_overhead_ratio``.

``nan_detect_latency_s`` / ``nan_detect_latency_steps``: a script saves a ``loss`` tensor every
step (0.1 s per step) and injects NaN at step 10; ExplodingTensor with StopTraining runs as a
real rule process. Seconds from writing the NaN step to the job's ``Stopping`` transition,
and saved steps after the NaN step; target <= 1 step.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

NOOP = "print('no-op training')\n"

NAN_SCRIPT = """
import argparse, json, os, time
from pathlib import Path
import numpy as np
from sagemaker_debugger_ext.modes import ModeKeys
from sagemaker_debugger_ext.format import StepWriter, write_collections_file
p = argparse.ArgumentParser(); p.add_argument("--nan-step", type=int); p.add_argument("--marker")
a, _ = p.parse_known_args()
root = json.loads(Path(os.environ["SMDEBUG_CONFIG_FILE_PATH"]).read_text())["LocalPath"]
write_collections_file(root, "worker_0", {"losses": {"name": "losses", "include_regex": [], "tensor_names": ["loss"],
    "reduction_config": None, "save_config": None, "save_histogram": False}}, 1)
for step in range(400):
    value = float("nan") if step == a.nan_step else 1.0 / (step + 1)
    with StepWriter(root, global_step=step, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=step) as w:
        w.write_tensor("loss", np.array([value], dtype=np.float32))
    if step == a.nan_step:
        Path(a.marker).write_text(repr(time.time()))
    time.sleep(0.1)
"""

ROLE = "arn:aws:iam::000000000000:role/bench"


def _estimator(script: Path, *, rules: list[Any], out: Path, hps: dict[str, Any] | None = None) -> Any:
    from sagemaker_debugger_ext import Estimator

    return Estimator(
        image_uri="local", role=ROLE, instance_type="local", instance_count=1, entry_point=str(script),
        rules=rules, output_path=out.as_uri(), hyperparameters=hps or {},
    )  # fmt: skip


def _overhead(work: Path) -> dict[str, float]:
    from sagemaker_debugger_ext import Rule, rule_configs

    script = work / "noop.py"
    script.write_text(NOOP)
    plain = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, str(script)], check=True, capture_output=True)
        plain.append(time.perf_counter() - t0)
    runs = []
    for i in range(3):
        rules = [
            Rule.sagemaker(rule_configs.loss_not_decreasing()),
            Rule.sagemaker(rule_configs.vanishing_gradient()),
            Rule.sagemaker(rule_configs.exploding_tensor()),
        ]
        est = _estimator(script, rules=rules, out=work / "out")
        t0 = time.perf_counter()
        est.fit(job_name=f"bench-noop-{os.getpid()}-{i}", logs="None")
        runs.append(time.perf_counter() - t0)
        statuses = [r["RuleEvaluationStatus"] for r in est.latest_training_job.rule_job_summary()]
        if est.latest_training_job.describe()["TrainingJobStatus"] != "Completed":
            raise RuntimeError(f"no-op job did not complete: {statuses}")
    overhead = statistics.median(runs)
    base = statistics.median(plain)
    return {
        "local_job_overhead_s": round(overhead, 3),
        "local_plain_script_s": round(base, 3),
        "local_job_overhead_ratio": round(overhead / base, 2),
    }


def _nan_latency(work: Path) -> dict[str, float]:
    from sagemaker_debugger_ext import Rule, rule_configs
    from sagemaker_debugger_ext.local import LocalTrainingClient

    script = work / "nan_train.py"
    script.write_text(NAN_SCRIPT)
    marker = work / "nan-written"
    nan_step = 10
    rule = Rule.sagemaker(rule_configs.exploding_tensor(), actions=rule_configs.ActionList(rule_configs.StopTraining()))
    est = _estimator(script, rules=[rule], out=work / "out", hps={"nan-step": nan_step, "marker": str(marker)})
    job = f"bench-nan-{os.getpid()}"
    est.fit(job_name=job, logs="None")
    desc = est.latest_training_job.describe()
    if desc["TrainingJobStatus"] != "Stopped":
        raise RuntimeError(f"NaN job ended {desc['TrainingJobStatus']}, not Stopped")
    stopping = next(t for t in desc["SecondaryStatusTransitions"] if t["Status"] == "Stopping")
    nan_time = float(marker.read_text())
    debug = LocalTrainingClient().store.paths(job).debug_dir
    steps = sorted(int(p.name.split("_")[0]) for p in debug.glob("events/*/*_worker_0.tfevents"))
    return {
        "nan_detect_latency_s": round(stopping["StartTime"].timestamp() - nan_time, 3),
        "nan_detect_latency_steps": max(steps) - nan_step,
        "nan_to_job_stopped_s": round(desc["TrainingEndTime"].timestamp() - nan_time, 3),
    }


def run() -> dict[str, Any]:
    """Measure local-mode overhead and NaN-to-stop latency."""
    with tempfile.TemporaryDirectory(prefix="bench-local-") as tmp:
        work = Path(tmp)
        old_home = os.environ.get("SAGEMAKER_DEBUGGER_EXT_HOME")
        os.environ["SAGEMAKER_DEBUGGER_EXT_HOME"] = str(work / "home")
        os.environ.setdefault("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
        try:
            out = _overhead(work)
            out.update(_nan_latency(work))
        finally:
            if old_home is None:
                os.environ.pop("SAGEMAKER_DEBUGGER_EXT_HOME", None)
            else:
                os.environ["SAGEMAKER_DEBUGGER_EXT_HOME"] = old_home
    return out


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
