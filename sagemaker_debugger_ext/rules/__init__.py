"""Rules: the smdebug-compatible ``Rule`` API, built-in rules and the rule-container runner.

A custom rule written for smdebug runs after changing only its import::

    from sagemaker_debugger_ext.rules import Rule, invoke_rule
    from sagemaker_debugger_ext.trials import create_trial

Built-in rules live in :mod:`sagemaker_debugger_ext.rules.builtin`; ``python -m
sagemaker_debugger_ext.rules run ...`` is the rule-container entry point.
"""

from __future__ import annotations

from ..exceptions import (
    InsufficientInformationForRuleInvocation,
    NoMoreData,
    NoMoreProfilerData,
    RuleEvaluationConditionMet,
    StepUnavailable,
    TensorUnavailable,
    TensorUnavailableForStep,
)
from ._actions import Actions, ActionSpec, parse_action_json
from ._invoker import invoke_rule
from ._req_tensors import RequiredTensors
from ._result import EvaluationStatus, Finding, RuleResult, RuleStatus
from ._rule import Rule
from ._run_rule import RunOutcome, RunRequest, run_rule
from .builtin import BUILTIN_RULES, RECOMMENDED_RULE_PARAMETERS, recommended_rule, recommended_rule_parameters

__all__ = [
    "BUILTIN_RULES",
    "RECOMMENDED_RULE_PARAMETERS",
    "ActionSpec",
    "Actions",
    "EvaluationStatus",
    "Finding",
    "InsufficientInformationForRuleInvocation",
    "NoMoreData",
    "NoMoreProfilerData",
    "RequiredTensors",
    "Rule",
    "RuleEvaluationConditionMet",
    "RuleResult",
    "RuleStatus",
    "RunOutcome",
    "RunRequest",
    "StepUnavailable",
    "TensorUnavailable",
    "TensorUnavailableForStep",
    "invoke_rule",
    "parse_action_json",
    "recommended_rule",
    "recommended_rule_parameters",
    "run_rule",
]
