"""Rule detection on Keras data: the seeded fault-injection cases of ``bench_rules`` trained
with Keras 3 (``rule_cases/keras_case.py``, the twin of ``torch_case.py``), faulty and clean,
over 3 seeds; per-rule precision and recall.

Each case trains in this process through the ``KerasHook`` built from a JSON hook config
(every collection the rules read, every step), then each rule runs on the trial through
``invoke_rule``. A rule that fires on a fault run at or after the onset is a true positive;
firing on a clean run or before the onset a false positive; a fault run without firing a
false negative. The runs are short (the Keras twins of ``tests/rules/test_rules_keras_parity.py``),
so the windowed rules use windows sized to them (``SHORT_WINDOWS``); the rest run with the
package's recommended settings. Writes ``benchmarks/rules_results_keras.md``.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = HERE / "rule_cases"
SEEDS = (0, 1, 2)
ONSET = 10
COLLECTIONS = {
    "weights": None, "gradients": None, "losses": None, "biases": None, "relu_output": ".*relu_output",
    "relu_input": ".*relu_input", "tanh_input": ".*tanh_input", "outputs": None,
    "inputs": None, "layers": ".*embedding0/inputs",
}  # fmt: skip
SELECTION = {  # Keras' tensor names
    "AllZero": {"collection_names": "relu_output"},
    "CheckInputImages": {"regex": "^inputs$", "channel": "3"},  # channels-last
    "NLPSequenceRatio": {"tensor_regex": ".*embedding0/inputs"},
}
SHORT_WINDOWS = {"LossNotDecreasing": {"num_steps": "5"}, "Overtraining": {"patience_train": "5", "delta": "0"}}
MLP_RULES = (
    "VanishingGradient", "ExplodingTensor", "WeightUpdateRatio", "AllZero", "DeadRelu", "LossNotDecreasing",
    "Overtraining", "PoorWeightInitialization", "SaturatedActivation",
)  # fmt: skip
# (scenario, fault, hyperparameters, onset or None, rules)
JOBS: list[tuple[str, str, dict[str, str], int | None, tuple[str, ...]]] = [
    ("mlp", "none", {"steps": "34"}, None, MLP_RULES),
    ("mlp", "dead", {"steps": "14"}, ONSET, ("VanishingGradient", "AllZero", "DeadRelu")),
    ("mlp", "nan", {"steps": "14"}, ONSET, ("ExplodingTensor",)),
    ("mlp", "freeze", {"steps": "34"}, ONSET, ("WeightUpdateRatio", "LossNotDecreasing", "Overtraining")),
    ("mlp", "scale", {"steps": "14"}, ONSET, ("SaturatedActivation",)),
    ("mlp", "badinit", {"steps": "6", "onset": "0"}, 0, ("PoorWeightInitialization",)),
    ("cls", "none", {"steps": "6"}, None, ("ClassImbalance",)),
    ("cls", "imbalance", {"steps": "12", "onset": "0"}, 0, ("ClassImbalance",)),
    ("image", "none", {"steps": "4"}, None, ("CheckInputImages",)),
    ("image", "unnormalized", {"steps": "4", "onset": "0"}, 0, ("CheckInputImages",)),
    ("nlp", "none", {"steps": "14"}, None, ("NLPSequenceRatio",)),
    ("nlp", "padding", {"steps": "14"}, ONSET, ("NLPSequenceRatio",)),
    ("overfit", "none", {"steps": "30"}, None, ("Overfit",)),
    ("overfit", "memorize", {"steps": "30"}, ONSET, ("Overfit",)),
]


def _params(rule: str) -> dict[str, str]:
    from sagemaker_debugger_ext.rules import RECOMMENDED_RULE_PARAMETERS

    return {**RECOMMENDED_RULE_PARAMETERS.get(rule, {}), **SHORT_WINDOWS.get(rule, {}), **SELECTION.get(rule, {})}


def _train(work: Path, scenario: str, fault: str, hps: dict[str, str], seed: int) -> Path:
    debug = work / "debug-output"
    colls = [{"CollectionName": n, "CollectionParameters": {"save_interval": "1", **({"include_regex": r} if r else {})}}
             for n, r in COLLECTIONS.items()]  # fmt: skip
    config = work / "debughookconfig.json"
    config.write_text(json.dumps({"LocalPath": str(debug), "HookParameters": {"save_interval": "1"},
                                  "CollectionConfigurations": colls}))  # fmt: skip
    argv = ["keras_case.py", "--scenario", scenario, "--fault", fault, "--onset", str(ONSET), "--seed", str(seed)]
    for k, v in hps.items():
        argv += [f"--{k}", v]
    saved = dict(os.environ), list(sys.argv)
    os.environ["SMDEBUG_CONFIG_FILE_PATH"] = str(config)
    os.environ.pop("TRAINING_JOB_NAME", None)
    sys.argv = argv
    try:
        runpy.run_path(str(CASES / "keras_case.py"), run_name="__main__")
    finally:
        os.environ.clear()
        os.environ.update(saved[0])
        sys.argv = saved[1]
    return debug


def _first_fire(trial_path: Path, rule: str) -> int | None:
    from sagemaker_debugger_ext.exceptions import NoMoreData, RuleEvaluationConditionMet
    from sagemaker_debugger_ext.rules import invoke_rule
    from sagemaker_debugger_ext.rules.builtin import BUILTIN_RULES
    from sagemaker_debugger_ext.trials import create_trial

    instance = BUILTIN_RULES[rule](create_trial(str(trial_path)), **_params(rule))
    try:
        invoke_rule(instance, raise_eval_cond=True)
    except RuleEvaluationConditionMet as exc:
        return int(exc.step)
    except NoMoreData:
        return None
    return None


def run() -> dict[str, object]:
    """Return ``rules_keras_<Rule>_precision`` / ``_recall`` for every rule, and the time taken."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    t0 = time.perf_counter()
    counts: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as d:
        for seed in SEEDS:
            for scenario, fault, hps, onset, rules in JOBS:
                work = Path(d) / f"{scenario}-{fault}-{seed}"
                work.mkdir()
                trial = _train(work, scenario, fault, hps, seed)
                for rule in rules:
                    c = counts.setdefault(rule, {"tp": 0, "fp": 0, "fn": 0, "tn": 0})
                    step = _first_fire(trial, rule)
                    if onset is None:
                        c["fp" if step is not None else "tn"] += 1
                    elif step is None:
                        c["fn"] += 1
                    else:
                        c["tp" if step >= onset else "fp"] += 1
    out: dict[str, object] = {"rules_keras_bench_seconds": round(time.perf_counter() - t0, 1)}
    lines = ["# Rule detection on Keras data", "", f"Seeds {', '.join(map(str, SEEDS))}; see benchmarks/bench_rules_keras.py.",
             "", "| rule | TP | FP | FN | clean runs quiet | precision | recall |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for rule, c in sorted(counts.items()):
        precision = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 1.0
        recall = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 1.0
        out[f"rules_keras_{rule}_precision"] = round(precision, 3)
        out[f"rules_keras_{rule}_recall"] = round(recall, 3)
        lines.append(f"| {rule} | {c['tp']} | {c['fp']} | {c['fn']} | {c['tn']} | {precision:.2f} | {recall:.2f} |")
    (HERE / "rules_results_keras.md").write_text("\n".join(lines) + "\n")
    return out
