"""Built-in rule configs and actions: ``smdebug_rulesconfig`` re-exported.

Same names as ``sagemaker.debugger.rule_configs`` (which *is* ``smdebug_rulesconfig``):
built-in rule functions (``vanishing_gradient()``, ...), profiler rule classes
(``ProfilerReport``, ``LowGPUUtilization``, ...) and actions. ``StopTraining``, ``Email``,
``SMS`` and ``ActionList`` here are subclasses of the smdebug_rulesconfig classes that reject
bad input with a message naming the value; they are accepted anywhere the originals are.
"""

from __future__ import annotations

import re
from typing import Any

import smdebug_rulesconfig as _src
from smdebug_rulesconfig import *
from smdebug_rulesconfig import (
    actions,
    debugger_rules,
    get_collection,
    is_valid_action_object,
    profiler_rules,
)
from smdebug_rulesconfig.actions.actions import Action

from .._exceptions import ConfigTypeError, ConfigValueError, field_error_message

_PREFIX_RE = re.compile(r"[A-Za-z0-9\-]+")
_EMAIL_RE = re.compile(r"[a-z0-9]+[@]\w+[.]\w{2,3}")
_PHONE_RE = re.compile(r"\+\d{1,15}")


def _check(field: str, value: Any, pattern: re.Pattern[str], expected: str) -> None:
    if not isinstance(value, str):
        raise ConfigTypeError(field_error_message(field, "a string", value), field=field, value=value)
    if not pattern.fullmatch(value):
        raise ConfigValueError(field_error_message(field, expected, value), field=field, value=value)


class StopTraining(_src.StopTraining):
    """Stop the training job when the rule fires (prefix defaults to the job name)."""

    def __init__(self, training_job_prefix: str | None = None) -> None:
        if training_job_prefix is not None:
            _check(
                "StopTraining.training_job_prefix", training_job_prefix, _PREFIX_RE, "letters, digits and hyphens only"
            )
        super().__init__(training_job_prefix=training_job_prefix)


class Email(_src.Email):
    """Send an email (through SNS) when the rule fires."""

    def __init__(self, email_address: str) -> None:
        _check(
            "Email.email_address",
            email_address,
            _EMAIL_RE,
            "an address of lower-case letters and digits, then @domain.tld (e.g. name@example.com)",
        )
        super().__init__(email_address)


class SMS(_src.SMS):
    """Send an SMS (through SNS) when the rule fires."""

    def __init__(self, phone_number: str) -> None:
        _check("SMS.phone_number", phone_number, _PHONE_RE, "an E.164 number like +15551234567")
        super().__init__(phone_number)


class ActionList(_src.ActionList):
    """Several actions for one rule."""

    def __init__(self, *items: Action) -> None:
        for index, action in enumerate(items):
            if not isinstance(action, Action):
                msg = field_error_message(
                    f"ActionList.actions[{index}]", "an Action (StopTraining, Email or SMS)", action
                )
                raise ConfigTypeError(msg, field="ActionList.actions", value=action)
        super().__init__(*items)


__all__ = [
    "SMS",
    "ActionList",
    "BatchSize",
    "CPUBottleneck",
    "Email",
    "GPUMemoryIncrease",
    "IOBottleneck",
    "LoadBalancing",
    "LowGPUUtilization",
    "MaxInitializationTime",
    "OverallSystemUsage",
    "ProfilerReport",
    "StepOutlier",
    "StopTraining",
    "actions",
    "all_zero",
    "check_input_images",
    "class_imbalance",
    "confusion",
    "create_xgboost_report",
    "dead_relu",
    "debugger_rules",
    "exploding_tensor",
    "feature_importance_overweight",
    "get_collection",
    "is_valid_action_object",
    "loss_not_decreasing",
    "nlp_sequence_ratio",
    "overfit",
    "overtraining",
    "poor_weight_initialization",
    "profiler_rules",
    "saturated_activation",
    "similar_across_runs",
    "stalled_training_rule",
    "tensor_variance",
    "tree_depth",
    "unchanged_tensor",
    "vanishing_gradient",
    "weight_update_ratio",
]
