"""Healthy-runs benchmark: how often the built-in rules fire on training that is fine.

Six healthy architectures (``benchmarks/rule_cases/healthy_case.py``: MLP classifier, small
CNN, GRU, small transformer encoder, MLP regressor with BatchNorm — PyTorch — and an
XGBoost classifier), two seeds each, every applicable rule, through local mode's
``Estimator(instance_type="local").fit()``: once with the rules at their SageMaker defaults
(plus the tensor selection a rule requires), once with the package's recommended settings
(``sagemaker_debugger_ext.rules.RECOMMENDED_RULE_PARAMETERS``). Collections are saved every
10 steps (labels and predictions every 2, so ClassImbalance sees its 500 samples).

Every firing is a false alarm; a rule run that evaluated no step counts as not evaluated.
``python -m benchmarks rules_healthy`` runs it alone. Writes its section of
``benchmarks/rules_results.md`` and returns flat metrics.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ._local_jobs import job_store, rule_report, run_rule_job
from .bench_rules import HERE, replace_section

SEEDS = (0, 1)
ARCHS = ("mlp", "cnn", "gru", "transformer", "mlp_bn", "xgb")
CLASSIFIERS = ("mlp", "cnn", "gru", "transformer", "xgb")

# the selection a rule needs to evaluate anything (AWS requires it; not a tuning)
REQUIRED: dict[str, dict[str, str]] = {
    "AllZero": {"collection_names": "weights,relu_output"},
    "UnchangedTensor": {"collection_names": "weights"},
}
TORCH_RULES = (
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


def rules_for(arch: str) -> tuple[str, ...]:
    """Every rule that applies to ``arch``."""
    rules = XGB_RULES if arch == "xgb" else TORCH_RULES
    if arch in CLASSIFIERS:
        rules += ("ClassImbalance", "Confusion")
    if arch == "cnn":
        rules += ("CheckInputImages",)
    if arch in ("gru", "transformer"):
        rules += ("NLPSequenceRatio",)
    return rules


def _collections(arch: str) -> list[Any]:
    from sagemaker_debugger_ext import CollectionConfig

    if arch == "xgb":
        names: dict[str, str | None] = {
            "metrics": None,
            "losses": None,
            "feature_importance": None,
            "trees": None,
            "labels": None,
            "predictions": None,
            "hyperparameters": None,
        }
    else:
        names = {
            "weights": None, "biases": None, "gradients": None, "losses": None, "relu_output": ".*relu_output",
            "relu_input": ".*relu_input", "tanh_input": ".*tanh_input", "sigmoid_input": ".*sigmoid_input",
            "labels": "^labels$", "predictions": "^predictions$", "input_image": ".*SmallCNN_input_0",
            "input_sequence": ".*embedding0_input_0",
        }  # fmt: skip
    out = []
    for name, regex in names.items():
        interval = "2" if name in ("labels", "predictions") else "10"
        if arch == "xgb":
            interval = "1"  # one step per boosting round
        params = {"save_interval": interval, **({"include_regex": regex} if regex else {})}
        out.append(CollectionConfig(name=name, parameters=params))
    return out


# model-specific names the user sets with the recommended settings (the default names MXNet's input)
MODEL_SPECIFIC: dict[str, dict[str, str]] = {"CheckInputImages": {"regex": ".*SmallCNN_input_0"}}


def rule_parameters(rule: str, setting: str) -> dict[str, str]:
    """RuleParameters of ``rule`` under ``setting`` ('defaults' or 'recommended')."""
    from sagemaker_debugger_ext.rules import RECOMMENDED_RULE_PARAMETERS

    params = dict(REQUIRED.get(rule, {}))
    if setting == "recommended":
        params.update(RECOMMENDED_RULE_PARAMETERS.get(rule, {}))
        params.update(MODEL_SPECIFIC.get(rule, {}))
    return params


def _launch(work: Path, arch: str, seed: int, setting: str) -> dict[str, dict[str, Any]]:
    from sagemaker_debugger_ext import DebuggerHookConfig

    rules = rules_for(arch)
    hook = DebuggerHookConfig(hook_parameters={"save_interval": "10"}, collection_configs=_collections(arch))
    job, summary = run_rule_job(work, entry_point="healthy_case.py", hyperparameters={"arch": arch, "seed": str(seed)},
                                rules={rule: rule_parameters(rule, setting) for rule in rules}, hook_config=hook,
                                base_job_name=f"healthy-{arch.replace('_', '-')}")  # fmt: skip
    out = {}
    for rule in rules:
        s = summary.get(rule, {})
        report = rule_report(work, job, rule)
        out[rule] = {
            "status": s.get("RuleEvaluationStatus", "missing"),
            "details": s.get("StatusDetails", ""),
            "evaluated": report.get("StepsEvaluated"),
            "first": report.get("FirstFiredStep"),
            "finding": (report.get("Findings") or [{}])[0].get("message"),
        }
    return out


def _run_job(root: Path, arch: str, seed: int, setting: str) -> dict[str, Any]:
    work = root / f"{arch}-s{seed}-{setting}"
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    results = _launch(work, arch, seed, setting)
    return {
        "arch": arch,
        "seed": seed,
        "setting": setting,
        "results": results,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def _tally(jobs: list[dict[str, Any]], setting: str) -> dict[str, Any]:
    runs = [(j, rule, r) for j in jobs if j["setting"] == setting for rule, r in j["results"].items()]
    evaluated = [(j, rule, r) for j, rule, r in runs if r["evaluated"]]
    alarms = [(j, rule, r) for j, rule, r in runs if r["status"] == "IssuesFound"]
    errors = [(j, rule, r) for j, rule, r in runs if r["status"] not in ("IssuesFound", "NoIssuesFound")]
    return {"runs": runs, "evaluated": evaluated, "alarms": alarms, "errors": errors}


def run() -> dict[str, Any]:
    """Run every architecture x seed x setting; return the false-alarm rates."""
    root = Path(tempfile.mkdtemp(prefix="sdx-bench-healthy-"))
    t0 = time.perf_counter()
    with job_store(root), ThreadPoolExecutor(max_workers=int(os.environ.get("RULES_BENCH_WORKERS", "2"))) as pool:
        futures = [
            pool.submit(_run_job, root, arch, seed, setting)
            for setting in ("defaults", "recommended")
            for seed in SEEDS
            for arch in ARCHS
        ]
        jobs = [f.result() for f in futures]
    d, r = _tally(jobs, "defaults"), _tally(jobs, "recommended")
    out: dict[str, Any] = {
        "rules_healthy_jobs": len(jobs),
        "rules_healthy_seconds": round(time.perf_counter() - t0, 1),
        "rules_healthy_rule_runs": len(d["runs"]),
        "rules_healthy_false_alarm_rate_defaults": round(len(d["alarms"]) / max(len(d["evaluated"]), 1), 4),
        "rules_healthy_false_alarms_defaults": len(d["alarms"]),
        "rules_healthy_evaluated_defaults": len(d["evaluated"]),
        "rules_healthy_false_alarm_rate_recommended": round(len(r["alarms"]) / max(len(r["evaluated"]), 1), 4),
        "rules_healthy_false_alarms_recommended": len(r["alarms"]),
        "rules_healthy_evaluated_recommended": len(r["evaluated"]),
        "rules_healthy_not_evaluated": len(d["runs"]) - len(d["evaluated"]),
        "rules_healthy_not_evaluated_recommended": len(r["runs"]) - len(r["evaluated"]),
        "rules_healthy_errors": len(d["errors"]) + len(r["errors"]),
    }
    _write_markdown(out, jobs, d, r)
    return out


def _write_markdown(
    out: Mapping[str, Any], jobs: list[dict[str, Any]], d: Mapping[str, Any], r: Mapping[str, Any]
) -> None:
    rules = sorted({rule for j in jobs for rule in j["results"]})
    lines = [
        "# Healthy-runs benchmark (false alarms)",
        "",
        f"{len(ARCHS)} architectures x seeds {list(SEEDS)} x 2 settings = {out['rules_healthy_jobs']} local-mode jobs, {out['rules_healthy_seconds']} s.",
        f"False-alarm rate (firings / rule runs that evaluated at least one step): defaults **{out['rules_healthy_false_alarm_rate_defaults']}** "
        f"({out['rules_healthy_false_alarms_defaults']}/{out['rules_healthy_evaluated_defaults']}), recommended **{out['rules_healthy_false_alarm_rate_recommended']}** "
        f"({out['rules_healthy_false_alarms_recommended']}/{out['rules_healthy_evaluated_recommended']}). Not evaluated: {out['rules_healthy_not_evaluated']} at defaults, "
        f"{out['rules_healthy_not_evaluated_recommended']} recommended. Errors: {out['rules_healthy_errors']}.",
        "",
        "Cells: `F` fired, `.` quiet, `-` evaluated no step, `E` error; one character per seed; defaults / recommended.",
        "",
        "| rule | " + " | ".join(ARCHS) + " |",
        "|---|" + "---|" * len(ARCHS),
    ]

    def cell(arch: str, rule: str, setting: str) -> str:
        chars = ""
        for seed in SEEDS:
            job = next((j for j in jobs if j["arch"] == arch and j["seed"] == seed and j["setting"] == setting), None)
            res = job["results"].get(rule) if job else None
            if res is None:
                continue
            chars += {"IssuesFound": "F", "NoIssuesFound": "." if res["evaluated"] else "-"}.get(res["status"], "E")
        return chars

    for rule in rules:
        cells = []
        for arch in ARCHS:
            dflt, rec = cell(arch, rule, "defaults"), cell(arch, rule, "recommended")
            cells.append(f"{dflt} / {rec}" if dflt else "")
        lines.append(f"| {rule} | " + " | ".join(cells) + " |")
    lines += ["", "Firings (first finding of each):", ""]
    for tally, setting in ((d, "defaults"), (r, "recommended")):
        for j, rule, res in tally["alarms"] + tally["errors"]:
            lines.append(
                f"- {setting} {j['arch']} s{j['seed']} {rule} ({res['status']}): {res['finding'] or res['details']}"
            )
    replace_section(HERE / "rules_results.md", "healthy", "\n".join(lines))
