"""The rule benchmark's tensor selections find tensors in its own cases' runs.

``benchmarks/bench_rules.py`` gives some rules a ``tensor_regex`` / ``collection_names`` /
``regex``. A selection that matches no saved tensor leaves the rule evaluating nothing
("NoIssuesFound", not evaluated), which the benchmark reports as a missed fault: AllZero's
``.*relu_output`` regex went stale that way when the PyTorch hook took smdebug's names
(``act1_output_0``). Each selection is checked here on a short real run of the case script.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.bench_rules import JOBS, _hook_config, rule_params
from sagemaker_debugger_ext.trials import create_trial

pytest.importorskip("torch")

CASES = Path(__file__).resolve().parents[2] / "benchmarks" / "rule_cases"
SELECTION_KEYS = ("tensor_regex", "collection_names", "regex")


def _selections(scenario: str) -> dict[str, dict[str, str]]:
    """rule -> its selection parameters, for the torch jobs of ``scenario``."""
    found: dict[str, dict[str, str]] = {}
    for _, script, hps, _, rules in JOBS:
        if script == "torch_case.py" and hps.get("scenario") == scenario:
            for rule in rules:
                chosen = {k: v for k, v in rule_params(rule).items() if k in SELECTION_KEYS}
                if chosen:
                    found[rule] = chosen
    return found


@pytest.mark.parametrize("scenario", ["mlp", "image"])
def test_benchmark_selections_match_saved_tensors(tmp_path: Path, scenario: str) -> None:
    selections = _selections(scenario)
    assert selections, f"no rule of the {scenario} jobs selects tensors"
    out = tmp_path / "debug"
    config = tmp_path / "hook.json"
    config.write_text(json.dumps(_hook_config(out, "torch_case.py")))
    env = {**os.environ, "SMDEBUG_CONFIG_FILE_PATH": str(config)}
    args = ["--scenario", scenario, "--fault", "none", "--steps", "4"]
    subprocess.run([sys.executable, str(CASES / "torch_case.py"), *args], env=env, check=True, timeout=300)
    trial = create_trial(str(out))
    for rule, params in selections.items():
        names: set[str] = set()
        for regex in filter(None, (params.get("tensor_regex"), params.get("regex"))):
            names.update(trial.tensor_names(regex=[r.strip() for r in regex.split(",")]))
        for coll in filter(None, params.get("collection_names", "").split(",")):
            names.update(trial.tensor_names(collection=coll.strip()))
        assert names, f"{rule} {params} selects nothing among {sorted(trial.tensor_names())}"
