"""Rule outcome values, re-exported from their one home (:mod:`sagemaker_debugger_ext.rule_contract._result`)."""

from __future__ import annotations

from ..rule_contract._result import EvaluationStatus, Finding, RuleResult, RuleStatus

__all__ = ["EvaluationStatus", "Finding", "RuleResult", "RuleStatus"]
