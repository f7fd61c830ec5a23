"""The Debugger arguments of a trainer, converted to this package's config objects (no SDK import).

``rules``, ``debugger_hook_config``, ``tensorboard_output_config``, ``profiler_config`` and
``disable_profiler`` arrive as our objects or ``sagemaker[.core].debugger``'s; the v2
``Estimator`` and the v3 ``ModelTrainer`` both convert them here, with the same checks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._exceptions import ConfigTypeError, ConfigValueError, field_error_message
from ._convert import to_hook_config, to_profiler_config, to_rule, to_tensorboard_config
from ._rules import Rule, RuleBase

__all__ = ["convert_debugger_arguments"]

_MAX_RULES = 20


def _convert_rules(value: Any) -> list[RuleBase] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, Iterable):
        raise ConfigTypeError(
            field_error_message("rules", "a list of Rule/ProfilerRule", value), field="rules", value=value
        )
    rules = [to_rule(rule, field=f"rules[{i}]") for i, rule in enumerate(value)]
    seen: dict[str, int] = {}
    for index, rule in enumerate(rules):
        if rule.name in seen:
            expected = (
                f"unique rule names (rules[{seen[rule.name]}] has the same name; pass name=... to Rule.sagemaker)"
            )
            raise ConfigValueError(
                field_error_message(f"rules[{index}].name", expected, rule.name),
                field=f"rules[{index}].name",
                value=rule.name,
            )
        seen[rule.name] = index
    n_debugger = sum(isinstance(rule, Rule) for rule in rules)
    n_profiler = len(rules) - n_debugger
    if n_debugger > _MAX_RULES or n_profiler > _MAX_RULES:
        got = f"{n_debugger} Debugger rules and {n_profiler} profiler rules"
        expected = f"at most {_MAX_RULES} Debugger rules and {_MAX_RULES} profiler rules"
        raise ConfigValueError(field_error_message("rules", expected, got), field="rules", value=got)
    return rules


def _convert_hook(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, dict):
        if value:
            raise ConfigTypeError(
                field_error_message("debugger_hook_config", "a DebuggerHookConfig, True, False or None", value),
                field="debugger_hook_config",
                value=value,
            )
        return {}
    return to_hook_config(value)


def convert_debugger_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """Return ``arguments`` with Debugger arguments converted to our config objects (new dict)."""
    out = dict(arguments)
    if "rules" in out:
        out["rules"] = _convert_rules(out["rules"])
    if "debugger_hook_config" in out:
        out["debugger_hook_config"] = _convert_hook(out["debugger_hook_config"])
    if out.get("tensorboard_output_config") is not None:
        out["tensorboard_output_config"] = to_tensorboard_config(out["tensorboard_output_config"])
    if out.get("profiler_config") is not None:
        out["profiler_config"] = to_profiler_config(out["profiler_config"])
    disable = out.get("disable_profiler")
    if disable is not None and not isinstance(disable, bool):
        raise ConfigTypeError(
            field_error_message("disable_profiler", "a bool", disable), field="disable_profiler", value=disable
        )
    return out
