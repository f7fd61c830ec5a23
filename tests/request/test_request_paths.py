"""Artifact path helpers: single slashes, s3:// and file://, and None for a missing base."""

from __future__ import annotations

import pytest

from sagemaker_debugger_ext import request

CASES = [
    ("s3://bucket/", "job", "s3://bucket/job/debug-output"),
    ("s3://bucket", "job", "s3://bucket/job/debug-output"),
    ("s3://bucket/prefix//", "job", "s3://bucket/prefix/job/debug-output"),
    ("file:///tmp/out/", "job", "file:///tmp/out/job/debug-output"),
    ("file:///", "job", "file:///job/debug-output"),
    ("/tmp/out", "job", "/tmp/out/job/debug-output"),
    ("", "job", "job/debug-output"),
]


@pytest.mark.parametrize(("base", "job", "expected"), CASES, ids=[c[0] or "empty" for c in CASES])
def test_debugger_artifacts_path(base: str, job: str, expected: str) -> None:
    """``<base>/<job>/debug-output`` with no double slashes."""
    assert request.debugger_artifacts_path(base, job) == expected


def test_other_path_helpers() -> None:
    """TensorBoard, profiler and rule output paths."""
    assert request.tensorboard_artifacts_path("s3://b/", "j") == "s3://b/j/tensorboard-output"
    assert request.profiler_artifacts_path("s3://b", "j") == "s3://b/j/profiler-output"
    assert request.rule_output_path("s3://b/x/", "j", "LossNotDecreasing") == "s3://b/x/j/rule-output/LossNotDecreasing"


def test_missing_base_gives_none() -> None:
    """A ``None`` base gives ``None`` instead of raising."""
    assert request.debugger_artifacts_path(None, "j") is None
