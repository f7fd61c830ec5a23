"""Rule parameters: declared once per rule, parsed from the strings SageMaker sends.

The service passes every ``RuleParameters`` value as a string (``"1e-7"``, ``"True"``,
``".*relu_output"``); a user calling a rule class from Python may pass real values. Both
go through :func:`parse_parameters`, which rejects unknown names and bad values with a
:class:`~sagemaker_debugger_ext._exceptions.RuleParameterError` naming the parameter, the
value and what is allowed.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from .._exceptions import RuleParameterError, field_error_message
from .._string_values import BOOL_EXPECTED, FLOAT_EXPECTED, INT_EXPECTED, to_bool, to_float, to_int

__all__ = [
    "Kind",
    "Param",
    "at_least",
    "fraction",
    "non_negative",
    "parse_parameters",
    "percent",
    "positive",
    "to_str_list",
]

_NONE_STRINGS = frozenset({"", "none", "null"})


class Kind(enum.Enum):
    """The type a parameter is converted to."""

    FLOAT = "float"
    INT = "int"
    BOOL = "bool"
    STR = "str"
    STR_LIST = "list of strings or a comma-separated string"
    FLOAT_LIST = "list of floats or a comma-separated string of floats"


def to_str_list(value: object) -> list[str]:
    """Convert a list, or a comma-separated string, to a list of non-empty stripped strings."""
    if isinstance(value, str):
        parts = value.split(",")
    elif isinstance(value, Sequence):
        parts = [str(v) for v in value]
    else:
        msg = "a list of strings or a comma-separated string"
        raise TypeError(msg)
    return [p.strip() for p in parts if p.strip()]


def _to_float_list(value: object) -> list[float]:
    text = value.strip().strip("()[]") if isinstance(value, str) else value
    return [to_float(v) for v in to_str_list(text)]


_CONVERTERS: dict[Kind, Callable[[object], Any]] = {
    Kind.FLOAT: to_float,
    Kind.INT: to_int,
    Kind.BOOL: to_bool,
    Kind.STR: lambda v: v if isinstance(v, str) else str(v),
    Kind.STR_LIST: to_str_list,
    Kind.FLOAT_LIST: _to_float_list,
}

_EXPECTED: dict[Kind, str] = {
    Kind.FLOAT: FLOAT_EXPECTED,
    Kind.INT: INT_EXPECTED,
    Kind.BOOL: BOOL_EXPECTED,
    Kind.STR: "a string",
    Kind.STR_LIST: "a list of strings or a comma-separated string",
    Kind.FLOAT_LIST: "a comma-separated string of numbers",
}


@attrs.frozen(kw_only=True)
class Param:
    """One declared rule parameter.

    Attributes:
        name: The ``RuleParameters`` key (SageMaker's name).
        kind: What the value is converted to.
        default: Value used when the parameter is absent (``None`` = not set).
        doc: One line for ``rules list`` and the docs.
        check: Optional ``(value) -> error text or None`` for range checks.
        choices: Allowed values for a string parameter (compared case-insensitively).
    """

    name: str = attrs.field(validator=attrs.validators.instance_of(str))
    kind: Kind = attrs.field(validator=attrs.validators.instance_of(Kind))
    default: Any = None
    doc: str = ""
    check: Callable[[Any], str | None] | None = None
    choices: tuple[str, ...] = ()

    @classmethod
    def percentage(cls, name: str, default: float, doc: str) -> Param:
        """A float parameter that must lie in [0, 100] (checked by :func:`percent`)."""
        return cls(name=name, kind=Kind.FLOAT, default=default, check=percent, doc=doc)

    def convert(self, raw: object, rule_name: str) -> Any:
        """Convert one raw value (string or Python value) or raise RuleParameterError."""
        if raw is None or (isinstance(raw, str) and raw.strip().lower() in _NONE_STRINGS):
            return self.default
        try:
            value = _CONVERTERS[self.kind](raw)
        except (TypeError, ValueError):
            msg = f"{rule_name}: " + field_error_message(self.name, _EXPECTED[self.kind], raw)
            raise RuleParameterError(msg, rule_name=rule_name) from None
        if self.choices and str(value).upper() not in {c.upper() for c in self.choices}:
            msg = f"{rule_name}: " + field_error_message(self.name, f"one of {list(self.choices)}", raw)
            raise RuleParameterError(msg, rule_name=rule_name)
        if self.check is not None:
            problem = self.check(value)
            if problem:
                msg = f"{rule_name}: " + field_error_message(self.name, problem, raw)
                raise RuleParameterError(msg, rule_name=rule_name)
        return value


def parse_parameters(
    declared: Sequence[Param], given: Mapping[str, object], *, rule_name: str, case_insensitive: bool = False
) -> dict[str, Any]:
    """Parse ``given`` against ``declared``: defaults filled in, unknown names rejected.

    Args:
        declared: The rule's parameters.
        given: Raw values by name (strings as the service sends them, or Python values).
        rule_name: Named in every error.
        case_insensitive: Match names ignoring case (profiler rules: ProfilerReport's
            ``<Rule>_<param>`` keys have always been matched that way).

    Raises:
        RuleParameterError: unknown parameter name, or a value that does not convert.
    """
    by_name = {(p.name.lower() if case_insensitive else p.name): p for p in declared}
    values: dict[str, object] = {}
    for key, raw in given.items():
        spec = by_name.get(str(key).lower() if case_insensitive else str(key))
        if spec is None:
            allowed = ", ".join(sorted(p.name for p in declared)) or "none"
            msg = f"{rule_name}: unknown parameter {key!r} (got {raw!r}); allowed parameters: {allowed}"
            raise RuleParameterError(msg, rule_name=rule_name)
        values[spec.name] = raw
    return {p.name: p.convert(values.get(p.name), rule_name) for p in declared}


def positive(value: float) -> str | None:
    """Range check: strictly positive."""
    return None if value > 0 else "> 0"


def non_negative(value: float) -> str | None:
    """Range check: zero or more."""
    return None if value >= 0 else ">= 0"


def percent(value: float) -> str | None:
    """Range check: a percentage in [0, 100]."""
    return None if 0 <= value <= 100 else "a percentage between 0 and 100"


def at_least(low: float) -> Callable[[float], str | None]:
    """Range check: ``low`` or more."""

    def check(value: float) -> str | None:
        return None if value >= low else f">= {low:g}"

    return check


def fraction(value: float) -> str | None:
    """Range check: a fraction in [0, 1]."""
    return None if 0 <= value <= 1 else "a number between 0 and 1"
