"""EventBridge event patterns: check a pattern, then match events against it.

The subset of EventBridge content filtering that rules on SageMaker events use:

- exact values in arrays: ``{"source": ["aws.sagemaker"]}`` (strings, numbers, booleans, null);
- nested objects: ``{"detail": {"TrainingJobStatus": ["Failed", "Stopped"]}}``;
- arrays in the event match when any element matches, so
  ``{"detail": {"DebugRuleEvaluationStatuses": {"RuleEvaluationStatus": ["IssuesFound"]}}}``
  matches a job with at least one rule in ``IssuesFound``;
- the operators ``{"prefix": s}``, ``{"suffix": s}``, ``{"equals-ignore-case": s}``,
  ``{"anything-but": v | [v, ...] | {"prefix": s}}``, ``{"exists": bool}`` and
  ``{"numeric": [">", 0, "<=", 5]}``.

Anything else is rejected when the pattern is registered (:func:`check_pattern`), naming the
place in the pattern, so a typo never silently matches nothing.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from ..._exceptions import ConfigValueError, field_error_message

__all__ = ["check_pattern", "pattern_matches"]

_OPERATORS = ("prefix", "suffix", "equals-ignore-case", "anything-but", "exists", "numeric")
_NUMERIC: dict[str, Callable[[float, float], bool]] = {
    "=": operator.eq, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}  # fmt: skip
_MISSING = object()


def _fail(where: str, expected: str, value: Any) -> None:
    raise ConfigValueError(field_error_message(where, expected, value), field=where, value=value)


def _check_matcher(where: str, matcher: Any) -> None:
    if isinstance(matcher, Mapping):
        if len(matcher) != 1 or next(iter(matcher)) not in _OPERATORS:
            _fail(where, f"a value or an object with one operator of {list(_OPERATORS)}", dict(matcher))
        (name, arg), = matcher.items()  # fmt: skip
        if name == "exists" and not isinstance(arg, bool):
            _fail(f"{where}.exists", "true or false", arg)
        if name in ("prefix", "suffix", "equals-ignore-case") and not isinstance(arg, str):
            _fail(f"{where}.{name}", "a string", arg)
        if name == "numeric":
            ok = isinstance(arg, list) and len(arg) in (2, 4)
            ok = ok and all(isinstance(op, str) and op in _NUMERIC for op in arg[::2])
            ok = ok and all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in arg[1::2])
            if not ok:
                _fail(f"{where}.numeric", "[op, number] or [op, number, op, number] with op in = < <= > >=", arg)
    elif isinstance(matcher, list):
        _fail(where, "a value or an operator object, not a nested array", matcher)


def check_pattern(pattern: Any, where: str = "pattern") -> dict[str, Any]:
    """Return ``pattern`` as a dict if it is a valid event pattern, else raise ConfigValueError.

    Leaves are arrays of values or operator objects; inner nodes are objects.
    """
    if not isinstance(pattern, Mapping) or not pattern:
        _fail(where, "a non-empty object", pattern)
    for key, value in pattern.items():
        here = f"{where}.{key}"
        if isinstance(value, Mapping):
            check_pattern(value, here)
        elif isinstance(value, list) and value:
            for i, matcher in enumerate(value):
                _check_matcher(f"{here}[{i}]", matcher)
        else:
            _fail(here, "a non-empty array of values or a nested object", value)
    return dict(pattern)


def _scalar_matches(matcher: Any, value: Any) -> bool:
    if not isinstance(matcher, Mapping):
        return bool(matcher == value and type(matcher) is type(value)) or (
            isinstance(matcher, (int, float)) and isinstance(value, (int, float))
            and not isinstance(matcher, bool) and not isinstance(value, bool) and matcher == value
        )  # fmt: skip
    (name, arg), = matcher.items()  # fmt: skip
    if name == "exists":
        return bool((value is not _MISSING) == arg)
    if value is _MISSING:
        return False
    if name == "prefix":
        return isinstance(value, str) and value.startswith(arg)
    if name == "suffix":
        return isinstance(value, str) and value.endswith(arg)
    if name == "equals-ignore-case":
        return isinstance(value, str) and value.lower() == arg.lower()
    if name == "numeric":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return all(_NUMERIC[op](value, bound) for op, bound in zip(arg[::2], arg[1::2], strict=True))
    # anything-but
    if isinstance(arg, Mapping):
        return not _scalar_matches(arg, value)
    excluded = arg if isinstance(arg, list) else [arg]
    return not any(_scalar_matches(x, value) for x in excluded)


def _leaf_matches(matchers: list[Any], value: Any) -> bool:
    values = value if isinstance(value, list) else [value]
    if value is _MISSING:
        return any(isinstance(m, Mapping) and m.get("exists") is False for m in matchers)
    return any(_scalar_matches(m, v) for m in matchers for v in values)


def pattern_matches(pattern: Mapping[str, Any], event: Any) -> bool:
    """Whether ``event`` matches ``pattern`` (every key of the pattern must match)."""
    if isinstance(event, list):
        return any(pattern_matches(pattern, item) for item in event)
    if not isinstance(event, Mapping):
        return False
    for key, sub in pattern.items():
        value = event.get(key, _MISSING)
        if isinstance(sub, Mapping):
            if value is _MISSING or not pattern_matches(sub, value):
                return False
        elif not _leaf_matches(sub, value):
            return False
    return True
