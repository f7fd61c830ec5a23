"""Healthy-runs benchmark: how often the built-in rules fire on training that is fine.

The runs are not a fixed suite the settings could be tuned to: each is drawn by
:func:`draw_spec` from a fresh seed (``RULES_HEALTHY_SEED`` replays a benchmark; default: a new
base seed every invocation, printed and recorded): architecture family (PyTorch MLP
classifier, CNN, GRU, MLP regressor with or without BatchNorm; a Keras MLP; XGBoost), width,
depth, optimizer, learning rate within the optimizer's healthy range, batch size, dataset
shape, noise level, minimum epochs and save interval (``benchmarks/rule_cases/generated_case.py``
trains it, CPU, seconds). Every applicable rule is evaluated on the finished trial
twice: at its SageMaker defaults (plus the tensor selection a rule requires) and with the
recommended settings (``RECOMMENDED_RULE_PARAMETERS``). Every firing is a false alarm.

What counts as a healthy run (fixed before the acceptance draw, never after): the generator
trains each run its minimum epochs and then on until it has **converged** (the best held-out
evaluation loss improved by less than 5 % over the last 2 evaluations; XGBoost: over the last
20 rounds, checked every 10), up to 30 epochs (XGBoost 400 rounds). A drawn run is then
rejected, counted and reported by reason (never dropped silently), when
- ``unlearned``: its final evaluation loss is not under 0.9x a constant predictor's;
- ``unconverged``: it reached the budget still improving (a model still learning is not a
  trained model: a class it has not learned yet is a true ClassImbalance/Confusion finding);
- ``dead_layer``: a ReLU layer has more than ``DEAD_LAYER + DEAD_MARGIN`` (78 %) of its units
  never active on any held-out sample after training (measured by the generator on the held-out
  set, not by a rule). Such a layer has lost most of its units: DeadRelu saying so is true,
  whether or not the task needed those units (a 2-class task often does not; no rule sees the
  task), so the run is not counted as healthy.

DeadRelu near its threshold (fixed before the draw that follows it): ``DEAD_LAYER`` is the
recommended ``threshold_layer`` (70 %), and the rule and the generator estimate the same
quantity differently (the rule: activity under 1 % beyond sampling error over the last >= 688
training samples; the generator: never active on the held-out set with the final weights). A
run whose largest held-out dead fraction lies within ``DEAD_MARGIN`` of it (62 % < dead <= 78 %)
is **ambiguous for DeadRelu**: DeadRelu's verdict on it (either setting) is not scored, neither
false alarm nor correct, and reported apart (count, how often it fired); for every other rule
it is a healthy run as any. The case: the acceptance draw from base seed 1328588991 had
DeadRelu find relu2 70.0-70.7 % dead on a CNN the generator measured at 69.8 %, a coin flip
between two estimators, not a finding either way. The margin is at least twice the largest
excess of the rule's figure over the generator's on development runs (seeds 7000-7100, never a
draw's): 3.9 points over 27 runs, so 8 (docs/rules.md). Below the band DeadRelu firing is a
false alarm.

Reported: false alarms per rule run that evaluated a step, and runs with any false alarm per
run, each with a 95 % Wilson interval; per rule in ``benchmarks/rules_results.md``.
``RULES_HEALTHY_RUNS`` (default 48),
``RULES_BENCH_WORKERS`` (default 2). ``python -m benchmarks rules_healthy`` runs it alone.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from ._local_jobs import CASES_DIR
from .bench_rules import HERE, replace_section

DEAD_LAYER = 0.70  # the recommended DeadRelu threshold_layer: the healthy cut for held-out dead units
DEAD_MARGIN = 0.08  # within it of DEAD_LAYER DeadRelu is not scored; beyond it above, a dead layer (docstring)
REASONS = ("unlearned", "unconverged", "dead_layer")
FAMILIES = ("mlp", "cnn", "gru", "mlp_reg", "keras_mlp", "xgb")
FAMILY_WEIGHTS = (0.2, 0.2, 0.15, 0.2, 0.1, 0.15)  # Keras runs cost the most (TensorFlow's start)
Z95 = 1.959964

# the selection a rule needs to evaluate anything (AWS requires it; not a tuning)
REQUIRED: dict[str, dict[str, str]] = {
    "AllZero": {"collection_names": "weights,relu_output"},
    "UnchangedTensor": {"collection_names": "weights"},
}
# model-specific names the user sets with the recommended settings (the default names MXNet's input)
MODEL_SPECIFIC: dict[str, dict[str, str]] = {"CheckInputImages": {"regex": ".*GeneratedCNN_input_0"}}
NN_RULES = (
    "VanishingGradient", "ExplodingTensor", "WeightUpdateRatio", "AllZero", "DeadRelu", "SaturatedActivation",
    "TensorVariance", "UnchangedTensor", "LossNotDecreasing", "Overtraining", "Overfit", "PoorWeightInitialization",
)  # fmt: skip
XGB_RULES = (
    "ExplodingTensor",
    "LossNotDecreasing",
    "Overtraining",
    "Overfit",
    "FeatureImportanceOverweight",
    "TreeDepth",
)
OPTIMIZERS = {"sgd": (0.01, 0.05), "adam": (5e-4, 5e-3), "adamw": (5e-4, 5e-3)}  # healthy learning rates


def draw_spec(seed: int) -> dict[str, Any]:
    """One healthy run's configuration, drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    family = str(rng.choice(FAMILIES, p=FAMILY_WEIGHTS))
    optimizer = str(rng.choice(["adam", "adamw"] if family == "gru" else list(OPTIMIZERS)))  # SGD: GRUs crawl
    low, high = OPTIMIZERS[optimizer]
    spec: dict[str, Any] = {
        "seed": seed, "family": family, "optimizer": optimizer,
        "lr": float(np.exp(rng.uniform(np.log(low), np.log(high)))),
        "width": int(rng.choice([16, 32, 64, 128])), "depth": int(rng.integers(1, 4)),
        "batch": int(rng.choice([32, 64, 128])), "features": int(rng.integers(6, 41)),
        "classes": int(rng.integers(2, 6)), "side": int(rng.choice([8, 12, 16])),
        "noise": float(rng.uniform(0.5, 1.5)), "snr": float(rng.uniform(2.5, 4.0)),
        "batchnorm": bool(rng.random() < 0.5), "epochs": int(rng.integers(4, 7)),
        "train_batches": int(rng.integers(20, 36)), "eval_batches": int(rng.integers(4, 9)),
        "save_interval": int(rng.choice([2, 5, 10])),
    }  # fmt: skip
    # class centres ~ N(0, separation^2): distance between two centres / noise ~ snr (every class learnable)
    dims = spec["side"] ** 2 if family == "cnn" else spec["features"]  # a CNN class is a pattern over side^2 pixels
    spec["separation"] = float(spec["snr"] * spec["noise"] / np.sqrt(2 * dims))
    if family == "cnn":  # convolutions and pooling see a template less directly than a linear layer
        spec["separation"] *= 1.5
    if family == "gru":  # recurrent nets train slower: the upper half of the range, doubled
        spec["lr"] = float(np.exp(rng.uniform(np.log(np.sqrt(low * high)), np.log(2 * high))))
    if family == "xgb":
        spec["lr"] = float(rng.uniform(0.05, 0.15))  # eta; max_depth 3 + depth (4-6), subsample 0.8: regularised
        spec["optimizer"] = "boosting"
    return spec


def rules_for(family: str) -> tuple[str, ...]:
    """Every rule that applies to ``family``."""
    rules = XGB_RULES if family == "xgb" else NN_RULES
    if family in ("mlp", "cnn", "gru", "xgb"):  # labels and predictions saved
        rules += ("ClassImbalance", "Confusion")
    if family == "cnn":
        rules += ("CheckInputImages",)
    if family == "gru":
        rules += ("NLPSequenceRatio",)
    return rules


def rule_parameters(rule: str, setting: str) -> dict[str, str]:
    """RuleParameters of ``rule`` under ``setting`` ('defaults' or 'recommended')."""
    from sagemaker_debugger_ext.rules import RECOMMENDED_RULE_PARAMETERS

    params = dict(REQUIRED.get(rule, {}))
    if setting == "recommended":
        params.update(RECOMMENDED_RULE_PARAMETERS.get(rule, {}))
        params.update(MODEL_SPECIFIC.get(rule, {}))
    return params


def hook_config(local_path: Path, spec: Mapping[str, Any]) -> dict[str, Any]:
    """The run's DebuggerHookConfig as SMDEBUG_CONFIG_FILE_PATH JSON; labels/predictions every 2 steps."""
    if spec["family"] == "xgb":
        names: dict[str, str | None] = dict.fromkeys(
            ("metrics", "losses", "feature_importance", "trees", "labels", "predictions", "hyperparameters")
        )
    else:
        names = {
            "weights": None, "biases": None, "gradients": None, "losses": None, "relu_output": ".*relu_output",
            "relu_input": ".*relu_input", "tanh_input": ".*tanh_input", "sigmoid_input": ".*sigmoid_input",
            "labels": "^labels$", "predictions": "^predictions$", "input_image": ".*GeneratedCNN_input_0",
            "input_sequence": ".*embedding0_input_0",
        }  # fmt: skip
    every = 1 if spec["family"] == "xgb" else spec["save_interval"]
    colls = []
    for name, regex in names.items():
        interval = min(every, 2) if name in ("labels", "predictions") else every
        params = {"save_interval": str(interval), **({"include_regex": regex} if regex else {})}
        colls.append({"CollectionName": name, "CollectionParameters": params})
    hook = {"save_interval": str(every)}
    return {"LocalPath": str(local_path), "HookParameters": hook, "CollectionConfigurations": colls}


def _evaluate(trial: Any, rule: str, params: Mapping[str, str]) -> dict[str, Any]:
    from sagemaker_debugger_ext.exceptions import NoMoreData
    from sagemaker_debugger_ext.rules import invoke_rule
    from sagemaker_debugger_ext.rules.builtin import BUILTIN_RULES

    try:
        obj = BUILTIN_RULES[rule](trial, **params)
        try:
            invoke_rule(obj)
        except NoMoreData:
            pass
    except Exception as exc:  # a rule error is counted, not fatal to the benchmark
        return {"status": "Error", "evaluated": 0, "first": None, "finding": f"{type(exc).__name__}: {exc}"}
    fired = bool(obj.fired_steps)
    return {
        "status": "IssuesFound" if fired else "NoIssuesFound",
        "evaluated": obj.steps_evaluated,
        "first": obj.fired_steps[0] if fired else None,
        "finding": obj.findings[0].message if obj.findings else None,
    }


def run_one(root: Path, seed: int) -> dict[str, Any]:
    """Train the run drawn from ``seed`` and evaluate its rules at both settings (in a worker process)."""
    from sagemaker_debugger_ext.trials import create_trial

    work = root / f"run-{seed}"
    spec = draw_spec(seed) | {"report": str(work / "report.json")}
    debug = work / "debug-output"
    work.mkdir(parents=True, exist_ok=True)
    cfg = work / "hook.json"
    cfg.write_text(json.dumps(hook_config(debug, spec)))
    env = {k: v for k, v in os.environ.items() if k != "TRAINING_JOB_NAME"}
    env |= {"SMDEBUG_CONFIG_FILE_PATH": str(cfg), "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), env.get("PYTHONPATH", "")])
    t0 = time.perf_counter()
    argv = [sys.executable, str(CASES_DIR / "generated_case.py"), "--spec", json.dumps(spec)]
    train = subprocess.run(argv, env=env, capture_output=True, timeout=600, check=False)
    train_s = time.perf_counter() - t0
    if train.returncode != 0:
        tail = (train.stdout + train.stderr).decode(errors="replace")[-800:]
        return {"spec": spec, "error": f"training failed: {tail}", "results": {}}
    (debug / "training_job_end.ts").touch()
    health = json.loads((work / "report.json").read_text())
    reason = rejected(health)
    if reason:
        return {"spec": spec, "unhealthy": reason, "health": health, "results": {}, "train_s": round(train_s, 1)}
    trial = create_trial(str(debug))
    results = {
        setting: {rule: _evaluate(trial, rule, rule_parameters(rule, setting)) for rule in rules_for(spec["family"])}
        for setting in ("defaults", "recommended")
    }
    s = round(time.perf_counter() - t0, 1)
    return {"spec": spec, "health": health, "results": results, "train_s": round(train_s, 1), "s": s}


def rejected(health: Mapping[str, Any]) -> str | None:
    """Why a trained run is not a healthy run (``unlearned``, ``unconverged``, ``dead_layer``), or None."""
    if not health["eval_losses"][-1] < 0.9 * health["baseline"]:
        return "unlearned"
    if not health["converged"]:
        return "unconverged"
    if max_dead(health) > DEAD_LAYER + DEAD_MARGIN:
        return "dead_layer"
    return None


def max_dead(health: Mapping[str, Any]) -> float:
    """The largest held-out fraction of a ReLU layer's units never active (0 without ReLUs)."""
    return max(health["dead"].values(), default=0.0)


def dead_ambiguous(health: Mapping[str, Any]) -> bool:
    """Whether the run's largest dead fraction lies within ``DEAD_MARGIN`` of ``DEAD_LAYER``."""
    return DEAD_LAYER - DEAD_MARGIN < max_dead(health) <= DEAD_LAYER + DEAD_MARGIN


def scored(run: Mapping[str, Any], rule: str) -> bool:
    """Whether ``rule``'s verdict on a healthy ``run`` counts: all but DeadRelu's on an ambiguous run."""
    return not (rule == "DeadRelu" and dead_ambiguous(run["health"]))


def wilson95(k: int, n: int) -> tuple[float, float]:
    """95 % Wilson score interval of ``k / n``."""
    if n == 0:
        return 0.0, 1.0
    p, z2 = k / n, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def tally(runs: list[dict[str, Any]], setting: str) -> dict[str, Any]:
    """Alarms, evaluated rule runs, runs with an alarm, per rule, for one setting."""
    per_rule: dict[str, dict[str, int]] = {}
    alarms: list[tuple[dict[str, Any], str, dict[str, Any]]] = []
    runs_alarmed = errors = ambiguous_fired = 0
    for r in runs:
        any_alarm = False
        for rule, res in r["results"].get(setting, {}).items():
            if not scored(r, rule):  # reported apart: neither a false alarm nor a correct silence
                ambiguous_fired += res["status"] == "IssuesFound"
                continue
            d = per_rule.setdefault(rule, {"alarms": 0, "evaluated": 0, "errors": 0})
            d["evaluated"] += bool(res["evaluated"])
            d["errors"] += res["status"] == "Error"
            errors += res["status"] == "Error"
            if res["status"] == "IssuesFound":
                d["alarms"] += 1
                any_alarm = True
                alarms.append((r["spec"], rule, res))
        runs_alarmed += any_alarm
    evaluated = sum(d["evaluated"] for d in per_rule.values())
    return {"per_rule": per_rule, "alarms": alarms, "evaluated": evaluated, "runs_alarmed": runs_alarmed,
            "errors": errors, "ambiguous_fired": ambiguous_fired}  # fmt: skip


def run() -> dict[str, Any]:
    """Draw and run ``RULES_HEALTHY_RUNS`` healthy runs; return the false-alarm rates with intervals."""
    n_runs = int(os.environ.get("RULES_HEALTHY_RUNS", "48"))
    base = int(os.environ.get("RULES_HEALTHY_SEED") or secrets.randbits(31))
    print(f"   rules_healthy: {n_runs} runs from base seed {base} (RULES_HEALTHY_SEED={base} replays)", flush=True)
    root = Path(tempfile.mkdtemp(prefix="sdx-bench-healthy-"))
    t0 = time.perf_counter()
    workers = int(os.environ.get("RULES_BENCH_WORKERS", "2"))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        runs = list(pool.map(run_one, [root] * n_runs, [base + i for i in range(n_runs)]))
    out, tallies = summarise(runs, base, round(time.perf_counter() - t0, 1))
    dump = root / "runs.json"  # every run's spec and per-rule verdicts, for a closer look
    dump.write_text(json.dumps({"out": out, "runs": runs}, indent=1, default=str) + "\n")
    print(f"   rules_healthy: runs and verdicts in {dump}", flush=True)
    replace_section(HERE / "rules_results.md", "healthy", markdown(out, tallies, runs))
    return out


def summarise(runs: list[dict[str, Any]], base: int, seconds: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """The benchmark's figures (``rules_healthy_*``) and per-setting tallies from ``run_one``'s results."""
    failed = [r for r in runs if r.get("error")]
    unhealthy = [r for r in runs if r.get("unhealthy")]
    ok = [r for r in runs if not r.get("error") and not r.get("unhealthy")]
    out: dict[str, Any] = {
        "rules_healthy_runs": len(ok),
        "rules_healthy_failed_runs": len(failed),
        "rules_healthy_draws": len(runs),
        **{f"rules_healthy_rejected_{why}": sum(r["unhealthy"] == why for r in unhealthy) for why in REASONS},
        "rules_healthy_deadrelu_ambiguous_runs": sum(dead_ambiguous(r["health"]) for r in ok),
        "rules_healthy_base_seed": base,
        "rules_healthy_seconds": seconds,
        "rules_healthy_families": {f: sum(r["spec"]["family"] == f for r in ok) for f in FAMILIES},
    }
    tallies = {}
    for setting in ("defaults", "recommended"):
        t = tallies[setting] = tally(ok, setting)
        k, n = len(t["alarms"]), t["evaluated"]
        out[f"rules_healthy_false_alarms_{setting}"] = k
        out[f"rules_healthy_evaluated_{setting}"] = n
        out[f"rules_healthy_false_alarm_rate_{setting}"] = round(k / max(n, 1), 4)
        out[f"rules_healthy_false_alarm_ci95_{setting}"] = [round(x, 4) for x in wilson95(k, n)]
        out[f"rules_healthy_runs_with_alarm_{setting}"] = t["runs_alarmed"]
        out[f"rules_healthy_runs_with_alarm_ci95_{setting}"] = [
            round(x, 4) for x in wilson95(t["runs_alarmed"], len(ok))
        ]
        out[f"rules_healthy_errors_{setting}"] = t["errors"]
        out[f"rules_healthy_deadrelu_ambiguous_fired_{setting}"] = t["ambiguous_fired"]
    return out, tallies


def markdown(out: Mapping[str, Any], tallies: Mapping[str, Any], runs: list[dict[str, Any]]) -> str:
    """The healthy section of ``rules_results.md``."""
    failed = [r for r in runs if r.get("error")]
    unhealthy = [r for r in runs if r.get("unhealthy")]
    ambiguous = [r for r in runs if not r.get("error") and not r.get("unhealthy") and dead_ambiguous(r["health"])]

    def rate(k: int, n: int) -> str:
        low, high = wilson95(k, n)
        return f"{k}/{n} [{low:.3f}, {high:.3f}]"

    d, r = tallies["defaults"], tallies["recommended"]
    n = out["rules_healthy_runs"]
    lines = [
        "# Healthy-runs benchmark (false alarms)",
        "",
        f"{n} healthy runs of {out['rules_healthy_draws']} drawn (base seed {out['rules_healthy_base_seed']}; "
        f"families {out['rules_healthy_families']}), {out['rules_healthy_seconds']} s; "
        f"{out['rules_healthy_failed_runs']} failed to train; rejected as not healthy (rules in the module docstring): "
        f"{out['rules_healthy_rejected_unlearned']} unlearned, {out['rules_healthy_rejected_unconverged']} unconverged "
        f"within the budget, {out['rules_healthy_rejected_dead_layer']} with a dead layer (listed below). "
        f"{len(ambiguous)} healthy runs ambiguous for DeadRelu (a layer {DEAD_LAYER - DEAD_MARGIN:.0%}-"
        f"{DEAD_LAYER + DEAD_MARGIN:.0%} dead on the held-out set; its verdict not scored, listed below): DeadRelu fired "
        f"on {tallies['defaults']['ambiguous_fired']} at the defaults, {tallies['recommended']['ambiguous_fired']} recommended.",
        f"False alarms per rule run that evaluated a step (95 % Wilson interval): defaults **{rate(len(d['alarms']), d['evaluated'])}**, "
        f"recommended **{rate(len(r['alarms']), r['evaluated'])}**.",
        f"Runs with any false alarm: defaults **{rate(d['runs_alarmed'], n)}**, recommended **{rate(r['runs_alarmed'], n)}**.",
        "",
        "| rule | defaults: false alarms / runs evaluated [95 % CI] | recommended |",
        "|---|---|---|",
    ]
    for rule in sorted(d["per_rule"]):
        a, b = d["per_rule"][rule], r["per_rule"][rule]
        lines.append(f"| {rule} | {rate(a['alarms'], a['evaluated'])} | {rate(b['alarms'], b['evaluated'])} |")
    lines += ["", "Firings (first finding of each):", ""]
    for setting, t in tallies.items():
        for spec, rule, res in t["alarms"]:
            what = f"{spec['family']} seed {spec['seed']} {spec['optimizer']} lr {spec['lr']:.3g} every {spec['save_interval']}"
            lines.append(f"- {setting} {rule} ({what}): {res['finding']}")
    for u in unhealthy + ambiguous:
        spec, h = u["spec"], u["health"]
        what = f"{spec['family']} seed {spec['seed']} {spec['optimizer']} lr {spec['lr']:.3g}"
        dead = ", ".join(f"{k} {v:.1%}" for k, v in h["dead"].items() if v > DEAD_LAYER - DEAD_MARGIN)
        if u.get("unhealthy"):
            head = f"rejected {u['unhealthy']}"
        else:
            res = {s: u["results"][s].get("DeadRelu", {}) for s in ("defaults", "recommended")}
            said = "; ".join(f"{s} {v.get('status')}" + (f": {v['finding']}" if v.get("first") is not None else "")
                             for s, v in res.items())  # fmt: skip
            head = f"ambiguous for DeadRelu, not scored ({said})"
        lines.append(f"- {head} ({what}): {h['evaluations']} evaluations, last "
                     f"{[round(x, 3) for x in h['eval_losses'][-3:]]}, constant predictor {h['baseline']:.3f}"
                     + (f", dead {dead}" if dead else ""))  # fmt: skip
    lines += [f"- failed to train: seed {f['spec']['seed']} {f['spec']['family']}: {f['error'][-200:]}" for f in failed]
    return "\n".join(lines)
