"""Local rule jobs of the rule benchmarks: one ``Estimator`` job with built-in rules, followed
until every rule is final, in a job store of the benchmark's own."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from sagemaker_debugger_ext.rules.builtin._registry import rule_configs_name

CASES_DIR = Path(__file__).resolve().parent / "rule_cases"


def wait_for_rules(est: Any, timeout_s: float = 600.0) -> dict[str, dict[str, Any]]:
    """Poll the local job (0.25 s, not the SDK's 5 s) until it and all its rules are final."""
    deadline = time.monotonic() + timeout_s
    while True:
        desc = est.latest_training_job.describe()
        rules = {r["RuleConfigurationName"]: r for r in desc.get("DebugRuleEvaluationStatuses", [])}
        done = desc["TrainingJobStatus"] in ("Completed", "Failed", "Stopped")
        if done and all(r["RuleEvaluationStatus"] not in ("InProgress", "Stopping") for r in rules.values()):
            return rules
        if time.monotonic() > deadline:
            return rules
        time.sleep(0.25)


def run_rule_job(
    work: Path,
    *,
    entry_point: str,
    hyperparameters: Mapping[str, str],
    rules: Mapping[str, Mapping[str, str]],
    hook_config: Any,
    base_job_name: str,
) -> tuple[str, dict[str, dict[str, Any]]]:
    """Run ``rule_cases/<entry_point>`` as a local job (output under ``work/out``) with the built-in
    ``rules`` (name -> RuleParameters, empty for the defaults); return the job name and each
    rule's final ``DebugRuleEvaluationStatuses`` entry."""
    from sagemaker_debugger_ext import Estimator, Rule, rule_configs  # Estimator: the SageMaker SDK

    rule_objs = []
    for rule, params in rules.items():
        base = getattr(rule_configs, rule_configs_name(rule))()
        rule_objs.append(Rule.sagemaker(base, rule_parameters=dict(params)) if params else Rule.sagemaker(base))
    est = Estimator(
        entry_point=entry_point,
        source_dir=str(CASES_DIR),
        image_uri="local-python",
        role="arn:aws:iam::000000000000:role/bench",
        instance_count=1,
        instance_type="local",
        hyperparameters=dict(hyperparameters),
        output_path=(work / "out").as_uri(),
        debugger_hook_config=hook_config,
        rules=rule_objs,
        disable_profiler=True,
        base_job_name=base_job_name,
    )
    est.fit(wait=False)
    summary = wait_for_rules(est)
    return est.latest_training_job.name, summary


def rule_report(work: Path, job: str, rule: str) -> dict[str, Any]:
    """The ``rule-report.json`` the rule wrote for ``job`` ({} when there is none)."""
    path = work / "out" / job / "rule-output" / rule / "rule-report.json"
    return json.loads(path.read_text()) if path.exists() else {}


@contextlib.contextmanager
def job_store(root: Path) -> Iterator[None]:
    """Local jobs go to ``root/job-store`` (the user's job store stays clean); ``root`` is removed
    afterwards unless ``RULES_BENCH_KEEP`` is set."""
    saved_home = os.environ.get("SAGEMAKER_DEBUGGER_EXT_HOME")
    os.environ["SAGEMAKER_DEBUGGER_EXT_HOME"] = str(root / "job-store")
    try:
        yield
    finally:
        if saved_home is None:
            os.environ.pop("SAGEMAKER_DEBUGGER_EXT_HOME", None)
        else:
            os.environ["SAGEMAKER_DEBUGGER_EXT_HOME"] = saved_home
        if not os.environ.get("RULES_BENCH_KEEP"):
            shutil.rmtree(root, ignore_errors=True)
