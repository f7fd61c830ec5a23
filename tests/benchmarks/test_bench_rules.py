"""The fault benchmark's figures: a selected-rules run never overwrites the full run's totals."""

from __future__ import annotations

from typing import Any

from benchmarks.bench_rules import _score, summarise


def _job(kind: str, seed: int, results: dict[str, tuple[str, int | None]]) -> dict[str, Any]:
    return {
        "kind": kind,
        "seed": seed,
        "results": {rule: {"status": s, "details": "", "first": first} for rule, (s, first) in results.items()},
    }


# what _run_job returns, with each job's onset (None: a clean run)
FULL = [
    (_job("mlp-clean", 0, {"LossNotDecreasing": ("NoIssuesFound", None), "DeadRelu": ("NoIssuesFound", None)}), None),
    (_job("mlp-freeze", 0, {"LossNotDecreasing": ("IssuesFound", 52)}), 40),
    (_job("mlp-dead", 0, {"DeadRelu": ("IssuesFound", 10)}), 10),
    (_job("mlp-dead", 1, {"DeadRelu": ("NoIssuesFound", None)}), 10),  # a miss: recall 2/3
]
# RULES_BENCH_RULES=LossNotDecreasing: the same jobs, carrying that rule only
SELECTED = [
    ({**job, "results": {"LossNotDecreasing": job["results"]["LossNotDecreasing"]}}, onset)
    for job, onset in FULL
    if "LossNotDecreasing" in job["results"]
]


def test_a_selected_run_writes_its_totals_under_their_own_keys_never_the_full_runs() -> None:
    full = summarise(_score(FULL)[0], jobs=len(FULL), seconds=600.0, selected=[])
    assert full["rules_recall"] == round(2 / 3, 4)
    assert full["rules_jobs"] == 4
    assert full["rules_DeadRelu_recall"] == 0.5
    assert full["rules_DeadRelu_precision"] == 1.0  # the clean run stayed quiet
    totals = {k for k in full if not k.startswith(("rules_LossNotDecreasing_", "rules_DeadRelu_"))}
    assert {"rules_precision", "rules_recall", "rules_jobs", "rules_bench_seconds"} <= totals

    selected = summarise(_score(SELECTED)[0], jobs=len(SELECTED), seconds=60.0, selected=["LossNotDecreasing"])
    assert not totals & set(selected), "a selected run must not write the full run's totals"
    assert selected["rules_selected_recall"] == 1.0
    assert selected["rules_selected_jobs"] == 2
    assert selected["rules_selected_rules"] == "LossNotDecreasing"
    assert selected["rules_LossNotDecreasing_detect_steps_median"] == 12

    merged = full | selected  # what `python -m benchmarks rules` does with results.json
    assert {k: merged[k] for k in totals} == {k: full[k] for k in totals}
    assert merged["rules_DeadRelu_recall"] == 0.5  # a rule the selection did not run keeps its figures
