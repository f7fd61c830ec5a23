"""Rule detection benchmark: seeded fault-injection training runs, every built-in debugging rule.

Each *job* is one training run (``benchmarks/rule_cases/*.py``) with a fault injected at a
known global step (the onset) or none (a clean control), carrying the rules that watch it.
For every rule: at least one fault that must fire it and clean runs that must not, over
``SEEDS`` seeds. A rule that fires on a fault run at or after the onset is a true positive;
firing on a clean run, or before the onset, is a false positive; a fault run without
firing is a false negative. "Saved steps" = first firing step - onset (every step is saved).

Jobs run through local mode's ``Estimator(instance_type="local").fit()`` (two at a time);
``RULES_BENCH_LAUNCH=direct`` runs the script and the rule processes directly instead.
Every rule runs with the package's recommended settings (``RECOMMENDED_RULE_PARAMETERS``,
the settings the healthy-runs benchmark ``bench_rules_healthy`` finds quiet) plus the
case's tensor selection, so a quiet rule that misses faults shows here.
``RULES_BENCH_RULES=A,B`` runs only the jobs of those rules: it updates their per-rule figures, writes its
totals as ``rules_selected_*`` (never over the full run's ``rules_precision``, ``rules_recall``, ...) and
its table in its own section of the results file.
Writes its section of ``benchmarks/rules_results.md`` and returns flat metrics.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ._local_jobs import CASES_DIR, job_store, rule_report, run_rule_job

HERE = Path(__file__).resolve().parent
SEEDS = (0, 1, 2)
ONSET = 10
STALL = {"threshold": "15"}
# runs long enough for the recommended windows (LossNotDecreasing num_steps, Overtraining patience)
LONG, LONG_ONSET = 140, 40

# rule -> RuleParameters (strings, as the SDK sends them)
RULE_PARAMS: dict[str, dict[str, str]] = {
    "VanishingGradient": {},
    "ExplodingTensor": {},
    "WeightUpdateRatio": {},
    # the hook lists nn.ReLU outputs (act1_output_0, smdebug's names) in relu_output by class
    "AllZero": {"collection_names": "relu_output"},
    "DeadRelu": {},
    "TensorVariance": {"tensor_regex": ".*fc1.weight", "max_threshold": "1"},
    "UnchangedTensor": {"collection_names": "weights"},
    "LossNotDecreasing": {},
    "Overtraining": {},
    "PoorWeightInitialization": {},
    "StalledTrainingRule": STALL,
    "SaturatedActivation": {},
    "ClassImbalance": {},
    "Confusion": {},
    "CheckInputImages": {"regex": ".*Net_input_0"},
    "NLPSequenceRatio": {},
    "Overfit": {},
    "FeatureImportanceOverweight": {},
    "TreeDepth": {"depth": "3"},  # the benchmark grows trees of max_depth 3
    "SimilarAcrossRuns": {},
}


def rule_params(rule: str) -> dict[str, str]:
    """The recommended settings (``RECOMMENDED_RULE_PARAMETERS``) plus the case's tensor selection."""
    from sagemaker_debugger_ext.rules import RECOMMENDED_RULE_PARAMETERS

    return {**RECOMMENDED_RULE_PARAMETERS.get(rule, {}), **RULE_PARAMS[rule]}


MLP_RULES = (
    "VanishingGradient", "ExplodingTensor", "WeightUpdateRatio", "AllZero", "DeadRelu", "TensorVariance",
    "UnchangedTensor", "LossNotDecreasing", "Overtraining", "PoorWeightInitialization", "StalledTrainingRule",
    "SaturatedActivation",
)  # fmt: skip

# (job kind, script, hyperparameters, fault onset or None, rules carried)
JOBS: list[tuple[str, str, dict[str, str], int | None, tuple[str, ...]]] = [
    ("mlp-clean", "torch_case.py", {"scenario": "mlp", "fault": "none", "steps": str(LONG)}, None, MLP_RULES),
    (
        "mlp-dead",
        "torch_case.py",
        {"scenario": "mlp", "fault": "dead", "onset": str(ONSET)},
        ONSET,
        ("VanishingGradient", "AllZero", "DeadRelu"),
    ),
    ("mlp-nan", "torch_case.py", {"scenario": "mlp", "fault": "nan", "onset": str(ONSET)}, ONSET, ("ExplodingTensor",)),
    (
        "mlp-freeze",
        "torch_case.py",
        {"scenario": "mlp", "fault": "freeze", "steps": str(LONG), "onset": str(LONG_ONSET)},
        LONG_ONSET,
        ("WeightUpdateRatio", "UnchangedTensor", "LossNotDecreasing", "Overtraining"),
    ),
    (
        "mlp-scale",
        "torch_case.py",
        {"scenario": "mlp", "fault": "scale", "onset": str(ONSET)},
        ONSET,
        ("TensorVariance", "SaturatedActivation"),
    ),
    (
        "mlp-badinit",
        "torch_case.py",
        {"scenario": "mlp", "fault": "badinit", "onset": "0"},
        0,
        ("PoorWeightInitialization",),
    ),
    # the hook writes step s when step s+1 starts: a stall before step 10 delays step 9
    (
        "mlp-stall",
        "torch_case.py",
        {"scenario": "mlp", "fault": "stall", "stall-s": "25", "onset": str(ONSET)},
        ONSET - 1,
        ("StalledTrainingRule",),
    ),
    ("cls-clean", "torch_case.py", {"scenario": "cls", "fault": "none"}, None, ("ClassImbalance", "Confusion")),
    ("cls-imbalance", "torch_case.py", {"scenario": "cls", "fault": "imbalance", "onset": "0"}, 0, ("ClassImbalance",)),
    ("cls-flip", "torch_case.py", {"scenario": "cls", "fault": "flip", "onset": str(ONSET)}, ONSET, ("Confusion",)),
    ("image-clean", "torch_case.py", {"scenario": "image", "fault": "none"}, None, ("CheckInputImages",)),
    (
        "image-raw",
        "torch_case.py",
        {"scenario": "image", "fault": "unnormalized", "onset": "0"},
        0,
        ("CheckInputImages",),
    ),
    ("nlp-clean", "torch_case.py", {"scenario": "nlp", "fault": "none"}, None, ("NLPSequenceRatio",)),
    (
        "nlp-padding",
        "torch_case.py",
        {"scenario": "nlp", "fault": "padding", "onset": str(ONSET)},
        ONSET,
        ("NLPSequenceRatio",),
    ),
    ("overfit-clean", "torch_case.py", {"scenario": "overfit", "fault": "none", "steps": "30"}, None, ("Overfit",)),
    (
        "overfit-memorize",
        "torch_case.py",
        {"scenario": "overfit", "fault": "memorize", "steps": "30", "onset": str(ONSET)},
        ONSET,
        ("Overfit",),
    ),
    ("xgb-clean", "xgb_case.py", {"fault": "none"}, None, ("FeatureImportanceOverweight", "TreeDepth")),
    ("xgb-onefeature", "xgb_case.py", {"fault": "onefeature", "onset": "0"}, 0, ("FeatureImportanceOverweight",)),
    ("xgb-shallow", "xgb_case.py", {"fault": "shallow", "onset": "0"}, 0, ("TreeDepth",)),
]
# second phase: compared against the seed's mlp-clean run (other_trial_0)
SIMILAR_JOBS = [
    ("similar-clean", "torch_case.py", {"scenario": "mlp", "fault": "none"}, None, ("SimilarAcrossRuns",)),
    (
        "similar-perturb",
        "torch_case.py",
        {"scenario": "mlp", "fault": "perturb", "onset": str(ONSET)},
        ONSET,
        ("SimilarAcrossRuns",),
    ),
]

COLLECTIONS = {
    "torch_case.py": {
        "weights": None, "gradients": None, "losses": None, "biases": None,
        "relu_output": ".*relu_output", "relu_input": ".*relu_input", "tanh_input": ".*tanh_input",
        "labels": "^labels$", "predictions": "^predictions$", "input_image": ".*Net_input_0",
        "input_sequence": ".*embedding0_input_0",
    },
    "xgb_case.py": {"metrics": None, "feature_importance": None, "trees": None, "labels": None, "predictions": None, "hyperparameters": None},
}  # fmt: skip


def _hook_config(local_path: Path, script: str) -> dict[str, Any]:
    colls = []
    for name, regex in COLLECTIONS[script].items():
        params = {"save_interval": "1"}
        if regex:
            params["include_regex"] = regex
        colls.append({"CollectionName": name, "CollectionParameters": params})
    return {"LocalPath": str(local_path), "HookParameters": {"save_interval": "1"}, "CollectionConfigurations": colls}


def _job_result(rule_out: Path, status_file: Path) -> dict[str, Any]:
    status = (
        json.loads(status_file.read_text())
        if status_file.exists()
        else {"RuleEvaluationStatus": "Error", "StatusDetails": "no status"}
    )
    report_path = rule_out / "rule-report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    return {
        "status": status["RuleEvaluationStatus"],
        "details": status.get("StatusDetails", ""),
        "first": report.get("FirstFiredStep"),
    }


def _launch_direct(
    work: Path, script: str, hps: Mapping[str, str], rules: tuple[str, ...], others: Mapping[str, str]
) -> dict[str, dict[str, Any]]:
    """Run the training script and one rule process per rule, as local mode would."""
    debug = work / "debug-output"
    cfg = work / "debughookconfig.json"
    cfg.write_text(json.dumps(_hook_config(debug, script)))
    env = {k: v for k, v in os.environ.items() if k != "TRAINING_JOB_NAME"}
    env["SMDEBUG_CONFIG_FILE_PATH"] = str(cfg)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), env.get("PYTHONPATH", "")])
    argv = [sys.executable, str(CASES_DIR / script)]
    for k, v in hps.items():
        argv += [f"--{k}", v]
    procs = []
    for rule in rules:
        params = {"rule_to_invoke": rule, **rule_params(rule), **(others if rule == "SimilarAcrossRuns" else {})}
        (work / f"{rule}.params.json").write_text(json.dumps(params))
        cmd = [sys.executable, "-m", "sagemaker_debugger_ext.rules", "run", "--trial-path", str(debug), "--rule-name", rule,
               "--rule-parameters-file", str(work / f"{rule}.params.json"), "--output-dir", str(work / "rule-output" / rule),
               "--status-file", str(work / f"{rule}.status.json"), "--poll-interval", "0.2"]  # fmt: skip
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=open(work / f"{rule}.log", "wb")))
    train = subprocess.run(argv, env=env, capture_output=True, timeout=300, check=False)
    if train.returncode != 0:
        (work / "train.log").write_bytes(train.stdout + train.stderr)
    debug.mkdir(parents=True, exist_ok=True)
    (debug / "training_job_end.ts").touch()
    for p in procs:
        p.wait(timeout=300)
    return {rule: _job_result(work / "rule-output" / rule, work / f"{rule}.status.json") for rule in rules}


def _launch_local(
    work: Path, script: str, hps: Mapping[str, str], rules: tuple[str, ...], others: Mapping[str, str]
) -> dict[str, dict[str, Any]]:
    """One local-mode job through our Estimator: fit() with every rule of the job."""
    from sagemaker_debugger_ext import CollectionConfig, DebuggerHookConfig

    colls = [
        CollectionConfig(name=n, parameters={"save_interval": "1", **({"include_regex": r} if r else {})})
        for n, r in COLLECTIONS[script].items()
    ]
    params = {rule: {**rule_params(rule), **(others if rule == "SimilarAcrossRuns" else {})} for rule in rules}
    hook = DebuggerHookConfig(hook_parameters={"save_interval": "1"}, collection_configs=colls)
    job, summary = run_rule_job(work, entry_point=script, hyperparameters=hps, rules=params, hook_config=hook,
                                base_job_name=f"bench-{work.name}")  # fmt: skip
    out = {}
    for rule in rules:
        s = summary.get(rule, {})
        first = rule_report(work, job, rule).get("FirstFiredStep")
        out[rule] = {
            "status": s.get("RuleEvaluationStatus", "missing"),
            "details": s.get("StatusDetails", ""),
            "first": first,
        }
    out["_debug_path"] = {"path": str(work / "out" / job / "debug-output")}
    return out


def _run_job(
    root: Path,
    kind: str,
    script: str,
    hps: dict[str, str],
    rules: tuple[str, ...],
    seed: int,
    others: Mapping[str, str],
) -> dict[str, Any]:
    work = root / f"{kind}-s{seed}"
    work.mkdir(parents=True, exist_ok=True)
    hps = {**hps, "seed": str(seed)}
    launch = _launch_direct if os.environ.get("RULES_BENCH_LAUNCH") == "direct" else _launch_local
    t0 = time.perf_counter()
    results = launch(work, script, hps, rules, others)
    debug = results.pop("_debug_path", {"path": str(work / "debug-output")})["path"]
    return {"kind": kind, "seed": seed, "results": results, "debug": debug, "seconds": time.perf_counter() - t0}


def _score(jobs: list[tuple[dict[str, Any], int | None]]) -> tuple[dict[str, Any], list[str]]:
    per_rule: dict[str, dict[str, Any]] = {}
    for job, onset in jobs:
        for rule, res in job["results"].items():
            d = per_rule.setdefault(rule, {"tp": 0, "fp": 0, "fn": 0, "tn": 0, "delays": [], "errors": []})
            fired = res["status"] == "IssuesFound" and res["first"] is not None
            if res["status"] == "Error":
                d["errors"].append(f"{job['kind']} s{job['seed']}: {res['details']}")
            if onset is None:
                d["fp" if fired else "tn"] += 1
            elif fired and res["first"] >= onset:
                d["tp"] += 1
                d["delays"].append(res["first"] - onset)
            elif fired:
                d["fp"] += 1
                d["fn"] += 1
            else:
                d["fn"] += 1
    return per_rule, []


def run() -> dict[str, Any]:
    """Run every job for every seed; return precision, recall and detection delays."""
    root = Path(tempfile.mkdtemp(prefix="sdx-bench-rules-"))
    t0 = time.perf_counter()
    done: list[tuple[dict[str, Any], int | None]] = []
    only = {r for r in os.environ.get("RULES_BENCH_RULES", "").split(",") if r}  # e.g. the rules a change touched
    jobs = [(k, s, h, o, tuple(x for x in r if not only or x in only)) for (k, s, h, o, r) in JOBS]
    jobs = [j for j in jobs if j[4]]
    with job_store(root), ThreadPoolExecutor(max_workers=2) as pool:
        futures = [(pool.submit(_run_job, root, k, s, h, r, seed, {}), o) for seed in SEEDS for (k, s, h, o, r) in jobs]
        done = [(f.result(), o) for f, o in futures]
        refs = {j["seed"]: j["debug"] for j, _ in done if j["kind"] == "mlp-clean"}
        futures = [
            (pool.submit(_run_job, root, k, s, h, r, seed, {"other_trial_0": refs[seed]}), o)
            for seed in SEEDS
            for (k, s, h, o, r) in SIMILAR_JOBS
            if not only or "SimilarAcrossRuns" in only
        ]
        done += [(f.result(), o) for f, o in futures]
    per_rule, _ = _score(done)
    out = summarise(per_rule, jobs=len(done), seconds=time.perf_counter() - t0, selected=sorted(only))
    _write_markdown(out, per_rule)
    return out


def summarise(
    per_rule: Mapping[str, Mapping[str, Any]], *, jobs: int, seconds: float, selected: list[str]
) -> dict[str, Any]:
    """The flat figures of a run: totals over every rule it ran, then each rule's own. A selected
    run (``selected``: the ``RULES_BENCH_RULES`` rules) writes its totals under
    ``rules_selected_*`` (``rules_selected_rules`` names them), never under the full run's
    ``rules_precision``/``rules_recall``/``rules_jobs``/...: ``python -m benchmarks`` merges a run's
    keys into results.json, so those would replace the full run's figures with a subset's.
    """
    tp = sum(d["tp"] for d in per_rule.values())
    fp = sum(d["fp"] for d in per_rule.values())
    fn = sum(d["fn"] for d in per_rule.values())
    delays = [x for d in per_rule.values() for x in d["delays"]]
    totals: dict[str, Any] = {
        "precision": round(tp / (tp + fp), 4) if tp + fp else 0.0,
        "recall": round(tp / (tp + fn), 4) if tp + fn else 0.0,
        "detect_steps_median": statistics.median(delays) if delays else None,
        "jobs": jobs,
        "bench_seconds": round(seconds, 1),
        "launch": os.environ.get("RULES_BENCH_LAUNCH", "local"),
    }
    prefix = "rules_selected_" if selected else "rules_"
    out: dict[str, Any] = {f"{prefix}{k}": v for k, v in totals.items()}
    if selected:
        out["rules_selected_rules"] = ",".join(selected)
    for rule, d in sorted(per_rule.items()):
        out[f"rules_{rule}_precision"] = round(d["tp"] / (d["tp"] + d["fp"]), 4) if d["tp"] + d["fp"] else 0.0
        out[f"rules_{rule}_recall"] = round(d["tp"] / (d["tp"] + d["fn"]), 4) if d["tp"] + d["fn"] else 0.0
        out[f"rules_{rule}_detect_steps_median"] = statistics.median(d["delays"]) if d["delays"] else None
        if d["errors"]:
            out[f"rules_{rule}_errors"] = d["errors"][:3]
    return out


def replace_section(path: Path, name: str, text: str) -> None:
    """Replace the ``name`` section of the markdown file ``path`` (kept between HTML comments), or append it."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    old = path.read_text() if path.exists() else ""
    block = f"{begin}\n{text.rstrip()}\n{end}\n"
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        new = head + block + rest.split(end, 1)[1].lstrip("\n")
    else:
        new = (old.rstrip() + "\n\n" if old.strip() else "") + block
    path.write_text(new)


def _write_markdown(out: Mapping[str, Any], per_rule: Mapping[str, Mapping[str, Any]]) -> None:
    only = out.get("rules_selected_rules", "")
    prefix = "rules_selected_" if only else "rules_"
    t = {k.removeprefix(prefix): v for k, v in out.items() if k.startswith(prefix)}
    lines = [
        "# Rule detection benchmark",
        "",
        f"Seeds {list(SEEDS)}; {t['jobs']} training jobs ({t['launch']} launch), {t['bench_seconds']} s.",
        (
            f"Overall: precision **{t['precision']}**, recall **{t['recall']}**, "
            f"median saved steps from fault onset to IssuesFound **{t['detect_steps_median']}**."
        ),
        "",
        "| rule | fault runs fired (TP/FN) | clean runs fired (FP/TN) | precision | recall | saved steps to detection (median, max) |",
        "|---|---|---|---|---|---|",
    ]
    for rule, d in sorted(per_rule.items()):
        delays = d["delays"]
        med = f"{statistics.median(delays)}, {max(delays)}" if delays else "-"
        lines.append(
            f"| {rule} | {d['tp']}/{d['fn']} | {d['fp']}/{d['tn']} | {out[f'rules_{rule}_precision']} | {out[f'rules_{rule}_recall']} | {med} |"
        )
    if only:  # a partial run keeps the full table and writes its own section
        lines[0] += f" (RULES_BENCH_RULES={only})"
    replace_section(HERE / "rules_results.md", "detection_selected" if only else "detection", "\n".join(lines))


if __name__ == "__main__":
    print(json.dumps(run(), indent=2, sort_keys=True))
