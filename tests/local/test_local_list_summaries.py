"""list_summaries: the one List*Jobs loop behind ListTrainingJobs and ListProcessingJobs."""

from __future__ import annotations

from typing import Any

import pytest

from sagemaker_debugger_ext.local.store._job_store import list_summaries

_STATUS = {"job-a": "Completed", "job-b": "Failed", "other-c": "Completed", "job-d": "Completed"}


def _summary(name: str) -> dict[str, Any]:
    return {"TrainingJobName": name, "TrainingJobStatus": _STATUS[name]}


@pytest.mark.parametrize(
    ("contains", "equals", "most", "expected"),
    [
        (None, None, 100, ["job-a", "job-b", "other-c", "job-d"]),
        ("job-", None, 100, ["job-a", "job-b", "job-d"]),
        (None, "Completed", 100, ["job-a", "other-c", "job-d"]),
        ("job-", "Completed", 1, ["job-a"]),
        ("none", None, 100, []),
    ],
    ids=["all", "name-contains", "status-equals", "both-and-max", "no-match"],
)
def test_list_summaries_filters_in_order(
    contains: str | None, equals: str | None, most: int, expected: list[str]
) -> None:
    """Names keep the store's order; NameContains, StatusEquals and MaxResults apply as the service's."""
    got = list_summaries(
        list(_STATUS),
        _summary,
        status_key="TrainingJobStatus",
        name_contains=contains,
        status_equals=equals,
        max_results=most,
    )
    assert [s["TrainingJobName"] for s in got] == expected


def test_list_summaries_describes_only_names_that_match() -> None:
    """A name filtered out by NameContains is never described (no work per unrelated job)."""
    described: list[str] = []

    def summary_of(name: str) -> dict[str, Any]:
        described.append(name)
        return _summary(name)

    list_summaries(
        list(_STATUS),
        summary_of,
        status_key="TrainingJobStatus",
        name_contains="other",
        status_equals=None,
        max_results=100,
    )
    assert described == ["other-c"]
