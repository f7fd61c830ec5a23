"""Every ``<prefix>/<job>/...`` artifact path goes through the one helper, also at the ``file:///`` edge."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import sagemaker_debugger_ext
from sagemaker_debugger_ext.local.api._describe import describe_response
from sagemaker_debugger_ext.local.store._job_store import JobPaths
from sagemaker_debugger_ext.local.supervisor._rule_containers import rule_specs
from sagemaker_debugger_ext.reports._job_report import debug_output_uri, rule_output_uri

PACKAGE = Path(sagemaker_debugger_ext.__file__).parent
HELPER = PACKAGE / "request" / "_paths.py"
# a path built by hand: "/debug-output", "/rule-output/", ... inside an f-string or a concatenation
HAND_BUILT = re.compile(
    r"""f["'][^"'\n]*\}/(debug|tensorboard|profiler|rule)-output|\+\s*["']/(debug|tensorboard|profiler|rule)-output"""
)


def test_no_module_builds_artifact_paths_by_hand() -> None:
    """No package module but the helper joins '<base>/<job>/<kind>-output' itself."""
    offenders = [
        f"{p.relative_to(PACKAGE)}:{n}"
        for p in PACKAGE.rglob("*.py")
        if p != HELPER
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if HAND_BUILT.search(line)
    ]
    assert offenders == []


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        ("file:///", "file:///job/debug-output"),
        ("file:///out/", "file:///out/job/debug-output"),
        ("s3://b/p/", "s3://b/p/job/debug-output"),
    ],
    ids=["file-root", "file-folder", "s3"],
)
def test_report_debug_output_uri_keeps_file_root(base: str, expected: str) -> None:
    """The job report's debug-output URI keeps 'file:///' (it gave 'file:/job/debug-output')."""
    description = {"TrainingJobName": "job", "DebugHookConfig": {"S3OutputPath": base}}
    assert debug_output_uri(description) == expected


def test_report_rule_output_uri_keeps_file_root() -> None:
    """The job report's rule-output URI keeps 'file:///' (it gave 'file:/job/rule-output/R')."""
    description = {"TrainingJobName": "job", "OutputDataConfig": {"S3OutputPath": "file:///"}}
    assert rule_output_uri(description, "R") == "file:///job/rule-output/R"


def test_local_rule_output_and_model_artifacts_keep_file_root(tmp_path: Path) -> None:
    """Local rule containers and DescribeTrainingJob build 'file:///job/...' from a 'file:///' output path."""
    request = {
        "TrainingJobName": "job",
        "DebugRuleConfigurations": [{"RuleConfigurationName": "Loss", "RuleEvaluatorImage": "x", "RuleParameters": {}}],
    }
    specs = rule_specs(
        request, JobPaths(tmp_path), output_path="file:///", region="us-east-1", modules={"debug": "m", "profiler": "p"}
    )
    assert [s.output_uri for s in specs] == ["file:///job/rule-output/Loss"]
    described = describe_response(request, {}, region="us-east-1", output_path="file:///")
    assert described["ModelArtifacts"]["S3ModelArtifacts"] == "file:///job/output/model.tar.gz"
