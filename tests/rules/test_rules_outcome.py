"""One rule-outcome path: RuleResult.from_findings, the status vocabulary, one StatusDetails cut."""

from __future__ import annotations

import json
from pathlib import Path

import botocore.session
import pytest

from sagemaker_debugger_ext.exceptions import RuleEvaluationConditionMet
from sagemaker_debugger_ext.local.store._job_store import JobPaths
from sagemaker_debugger_ext.local.supervisor._rule_containers import RuleContainer, RuleSpec
from sagemaker_debugger_ext.rule_contract._result import Finding, RuleResult, RuleStatus
from sagemaker_debugger_ext.rule_contract._status import MAX_DETAILS, EvaluationStatus, status_record, truncate_details
from sagemaker_debugger_ext.rules.builtin import BUILTIN_RULES


@pytest.mark.parametrize(
    ("findings", "seen", "expected"),
    [
        ([Finding(step=3, message="x")], False, RuleStatus.CONDITION_MET),
        ([Finding(step=3, message="x")], True, RuleStatus.CONDITION_MET),
        ([], True, RuleStatus.NOT_MET),
        ([], False, RuleStatus.INSUFFICIENT_DATA),
    ],
    ids=["finding-unseen", "finding-seen", "seen", "nothing"],
)
def test_from_findings(findings: list[Finding], seen: bool, expected: RuleStatus) -> None:
    """Findings make a met result; otherwise data seen is not met, no data is insufficient."""
    result = RuleResult.from_findings(findings, seen=seen)
    assert result.status is expected and list(result.findings) == findings


def test_evaluation_status_is_the_services_enum() -> None:
    """EvaluationStatus holds exactly botocore's RuleEvaluationStatus values (Stopping and Stopped were missing)."""
    model = botocore.session.get_session().get_service_model("sagemaker")
    assert {s.value for s in EvaluationStatus} == set(model.shape_for("RuleEvaluationStatus").enum)
    assert {s for s in EvaluationStatus if s.terminal} == {
        EvaluationStatus.NO_ISSUES_FOUND,
        EvaluationStatus.ISSUES_FOUND,
        EvaluationStatus.ERROR,
        EvaluationStatus.STOPPED,
    }


def test_rule_container_cuts_details_like_the_status_writer(tmp_path: Path) -> None:
    """The local rule container keeps the head of long details, as the status file does (it kept the tail)."""
    job = JobPaths(tmp_path / "job")
    spec = RuleSpec(
        name="R",
        kind="debug",
        module="no_such_rule_module_for_this_test",
        trial_path=tmp_path / "trial",
        parameters={},
        output_uri="file:///x",
        arn="arn",
    )
    container = RuleContainer(spec, job, env={})
    long = "head " + "x" * 3000 + " tail"
    container.status_file.write_text(json.dumps({"RuleEvaluationStatus": "IssuesFound", "StatusDetails": long}))
    container.refresh()
    assert container.status["StatusDetails"] == status_record("IssuesFound", long)["StatusDetails"]
    assert container.status["StatusDetails"] == truncate_details(long)
    assert container.status["StatusDetails"].startswith("head ") and len(truncate_details(long)) == MAX_DETAILS


def test_builtin_rule_result_is_what_invoke_raises_from(make_trial) -> None:  # type: ignore[no-untyped-def]
    """result_at() returns the RuleResult; invoke() raises RuleEvaluationConditionMet exactly when it is met."""
    trial = make_trial({step: {"loss": float(10 - step)} for step in range(4)}, collections={"losses": ["loss"]})

    class Fires(BUILTIN_RULES["LossNotDecreasing"]):  # type: ignore[misc]
        def evaluate(self, step: int) -> RuleResult:
            if step == 2:
                return RuleResult.met(Finding(step=step, message="m"), end_of_rule=True)
            return RuleResult.not_met()

    rule = Fires(trial)
    assert rule.result_at(1).status is RuleStatus.NOT_MET
    result = rule.result_at(2)
    assert result.fired and result.end_of_rule and rule.fired_steps == [2]
    with pytest.raises(RuleEvaluationConditionMet) as exc:
        rule.invoke(2)
    assert exc.value.step == 2 and exc.value.end_of_rule
