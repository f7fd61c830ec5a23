"""One converter for booleans and numbers: the hook, the rules and the profiler agree on every string."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sagemaker_debugger_ext._exceptions import HookConfigError, ProfilerError, RuleParameterError
from sagemaker_debugger_ext._string_values import is_unset, to_bool, to_float, to_int
from sagemaker_debugger_ext.hooks._reduction_config import ReductionConfig, parse_bool
from sagemaker_debugger_ext.profiler._config import parse_profiler_config
from sagemaker_debugger_ext.rule_contract._params import Kind, Param

TRUE_WORDS = [True, 1, 1.0, "true", "True", " TRUE ", "t", "yes", "Y", "on", "ON", "1"]
FALSE_WORDS = [False, 0, 0.0, "false", "False", "f", "no", "N", "off", "0"]
BAD_BOOLS = ["Flase", "ture", "2", "enabled", 2, 0.5, None, [1]]


@pytest.mark.parametrize("value", TRUE_WORDS, ids=repr)
def test_to_bool_true(value: object) -> None:
    """Each true word converts to True."""
    assert to_bool(value) is True


@pytest.mark.parametrize("value", FALSE_WORDS, ids=repr)
def test_to_bool_false(value: object) -> None:
    """Each false word converts to False."""
    assert to_bool(value) is False


@pytest.mark.parametrize("value", [*BAD_BOOLS, ""], ids=repr)
def test_to_bool_rejects(value: object) -> None:
    """A typo or a non-boolean raises ValueError saying what is allowed."""
    with pytest.raises(ValueError, match="a boolean"):
        to_bool(value)


def test_numbers() -> None:
    """Integers accept integral floats and their strings; fractions, bools and NaN are rejected."""
    assert (to_int("3"), to_int(" 3.0 "), to_int(4.0), to_int(5)) == (3, 3, 4, 5)
    assert (to_float("1e-7"), to_float(" 2 "), to_float(3)) == (1e-7, 2.0, 3.0)
    for bad in ("1.5", 1.5, "x", float("nan"), float("inf"), None):
        with pytest.raises(ValueError, match="an integer"):
            to_int(bad)
    for bad in ("x", "nan", None, [1.0]):
        with pytest.raises(ValueError, match="a number"):
            to_float(bad)
    for converter in (to_int, to_float):
        with pytest.raises(TypeError):
            converter(True)
    assert is_unset(None) and is_unset("  ") and not is_unset("0") and not is_unset(0)


# Each subsystem's boolean, read through its own public parsing path.
def _hook(value: object) -> bool:
    return ReductionConfig(save_raw_tensor=value).save_raw_tensor


def _hook_json(value: object) -> bool:
    return parse_bool("HookParameters['save_all']", value)


def _rule(value: object) -> bool:
    return bool(Param(name="flag", kind=Kind.BOOL).convert(value, "MyRule"))


def _profiler(value: object) -> bool:
    return parse_profiler_config({"DisableProfiler": value}).disabled


def _profiler_enabled(value: object) -> bool:
    return not parse_profiler_config({"ProfilingParameters": {"ProfilerEnabled": value}}).disabled


SUBSYSTEMS: list[tuple[Callable[[object], bool], type[Exception]]] = [
    (_hook, HookConfigError),
    (_hook_json, HookConfigError),
    (_rule, RuleParameterError),
    (_profiler, ProfilerError),
    (_profiler_enabled, ProfilerError),
]
SUBSYSTEM_IDS = ["reduction_config", "hook_json", "rule_param", "profiler_disable", "profiler_enabled"]


@pytest.mark.parametrize(("parse", "error"), SUBSYSTEMS, ids=SUBSYSTEM_IDS)
@pytest.mark.parametrize("value", ["on", "yes", "1", " True "], ids=repr)
def test_true_words_agree(parse: Callable[[object], bool], error: type[Exception], value: str) -> None:
    """'on' and the other true words are true for hook, rules and profiler (the profiler read 'on' as false)."""
    assert parse(value) is True


@pytest.mark.parametrize(("parse", "error"), SUBSYSTEMS, ids=SUBSYSTEM_IDS)
@pytest.mark.parametrize("value", ["off", "no", "0", "False"], ids=repr)
def test_false_words_agree(parse: Callable[[object], bool], error: type[Exception], value: str) -> None:
    """The false words are false everywhere."""
    assert parse(value) is False


@pytest.mark.parametrize(("parse", "error"), SUBSYSTEMS, ids=SUBSYSTEM_IDS)
@pytest.mark.parametrize("value", ["Flase", "2", "enabled"], ids=repr)
def test_typos_raise_everywhere(parse: Callable[[object], bool], error: type[Exception], value: str) -> None:
    """'Flase' is an error naming the value everywhere (the profiler silently read it as false)."""
    with pytest.raises(error, match=value):
        parse(value)


def test_profiler_error_names_the_field() -> None:
    """The profiler's error names the setting, the value and what is allowed."""
    with pytest.raises(ProfilerError, match=r"'DisableProfiler' must be a boolean .*\(got 'Flase'\)"):
        parse_profiler_config({"DisableProfiler": "Flase"})


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("250", 250), ("250.0", 250), (250.0, 250), (" 100 ", 100)],
    ids=["str", "str-float", "float", "blanks"],
)
def test_integer_settings_agree(raw: Any, expected: int) -> None:
    """An integral value is read the same by rule parameters and by the profiler's interval."""
    assert Param(name="n", kind=Kind.INT).convert(raw, "MyRule") == expected
    assert parse_profiler_config({"ProfilingIntervalInMilliseconds": raw}).interval_ms == expected


@pytest.mark.parametrize("raw", [1.5, "1.5", True, "ten"], ids=repr)
def test_fractional_or_bool_integers_rejected(raw: Any) -> None:
    """A fraction or a bool is no integer for rules or profiler (the profiler truncated 1.5 to 1, read True as 1)."""
    with pytest.raises(RuleParameterError, match="an integer"):
        Param(name="n", kind=Kind.INT).convert(raw, "MyRule")
    with pytest.raises(ProfilerError, match="ProfilingIntervalInMilliseconds"):
        parse_profiler_config({"ProfilingIntervalInMilliseconds": raw})
