"""Rule outcome values, re-exported from their one home (:mod:`sagemaker_debugger_ext._rule_result`)."""

from __future__ import annotations

from .._rule_result import EvaluationStatus, Finding, RuleResult, RuleStatus

__all__ = ["EvaluationStatus", "Finding", "RuleResult", "RuleStatus"]
