"""Local mode hooks (CONTRACTS §A): our LocalSession, default file:// output, local rule sources."""

from __future__ import annotations

from pathlib import Path

import pytest
from estimator_harness import ROLE

import sagemaker_debugger_ext as ours


def test_local_request_uses_local_output_and_file_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """instance_type='local': file:// default output under the cwd; a local rule source becomes file://<abs>."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "myrule.py").write_text("# custom rule\n")
    est = ours.Estimator(
        image_uri="python:3",
        role=ROLE,
        instance_count=1,
        instance_type="local",
        rules=[ours.Rule.custom("MyRule", "img", "ml.m5.xlarge", 5, source="myrule.py", rule_to_invoke="MyRule")],
    )
    request = est.training_job_request(job_name="local-job")
    output = request["OutputDataConfig"]["S3OutputPath"]
    assert output.startswith("file://") and output.endswith("/")
    assert request["DebugHookConfig"]["S3OutputPath"] == output
    params = request["DebugRuleConfigurations"][0]["RuleParameters"]
    assert params["source_s3_uri"] == f"file://{tmp_path / 'myrule.py'}"
    assert est.output_path is None
