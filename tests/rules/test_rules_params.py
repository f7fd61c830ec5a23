"""Rule parameters: strings as SageMaker sends them, defaults, clear errors."""

from __future__ import annotations

import pytest

from sagemaker_debugger_ext._exceptions import RuleParameterError
from sagemaker_debugger_ext.rule_contract._params import Kind, Param, parse_parameters

DECLARED = (
    Param(name="threshold", kind=Kind.FLOAT, default=1e-7),
    Param(name="num_steps", kind=Kind.INT, default=10),
    Param(name="only_nan", kind=Kind.BOOL, default=False),
    Param(name="tensor_regex", kind=Kind.STR_LIST),
    Param(name="mode", kind=Kind.STR, choices=("EVAL", "TRAIN", "GLOBAL")),
)


def test_strings_are_converted() -> None:
    """String values become floats, ints, bools and lists."""
    got = parse_parameters(
        DECLARED, {"threshold": "0.5", "num_steps": "4", "only_nan": "True", "tensor_regex": "a.*, b.*"}, rule_name="R"
    )
    assert got == {"threshold": 0.5, "num_steps": 4, "only_nan": True, "tensor_regex": ["a.*", "b.*"], "mode": None}


def test_defaults_fill_missing_and_none_strings() -> None:
    """Absent parameters and 'None' strings take the default."""
    got = parse_parameters(DECLARED, {"num_steps": "None"}, rule_name="R")
    assert got["threshold"] == 1e-7 and got["num_steps"] == 10 and got["only_nan"] is False


def test_integral_float_string_is_an_int() -> None:
    """'10.0' is accepted for an integer parameter."""
    assert parse_parameters(DECLARED, {"num_steps": "10.0"}, rule_name="R")["num_steps"] == 10


@pytest.mark.parametrize(
    ("given", "fragment"),
    [
        ({"threshold": "abc"}, "'threshold' must be a number (got 'abc')"),
        ({"num_steps": "2.5"}, "'num_steps' must be an integer (got '2.5')"),
        ({"only_nan": "maybe"}, "'only_nan' must be a boolean"),
        ({"mode": "TEST"}, "'mode' must be one of ['EVAL', 'TRAIN', 'GLOBAL'] (got 'TEST')"),
    ],
    ids=["float", "int", "bool", "choice"],
)
def test_bad_values_name_field_value_and_allowed(given: dict[str, str], fragment: str) -> None:
    """A bad value raises RuleParameterError naming the parameter, value and what is allowed."""
    with pytest.raises(RuleParameterError) as err:
        parse_parameters(DECLARED, given, rule_name="R")
    assert fragment in str(err.value)


def test_unknown_parameter_lists_allowed() -> None:
    """An unknown name is rejected with the allowed names."""
    with pytest.raises(
        RuleParameterError, match=r"unknown parameter 'treshold' \(got '1'\); allowed parameters: mode, num_steps"
    ):
        parse_parameters(DECLARED, {"treshold": "1"}, rule_name="VanishingGradient")


def test_every_builtin_declares_sagemaker_defaults() -> None:
    """Spot-check SageMaker's documented defaults on the built-in classes."""
    from sagemaker_debugger_ext.rules.builtin import BUILTIN_RULES

    defaults = {cls: {p.name: p.default for p in c.PARAMETERS} for cls, c in BUILTIN_RULES.items()}
    assert defaults["VanishingGradient"] == {"threshold": 1e-7}
    assert defaults["LossNotDecreasing"]["num_steps"] == 10
    assert defaults["LossNotDecreasing"]["increase_threshold_percent"] == 5.0
    assert defaults["WeightUpdateRatio"] == {
        "num_steps": None,
        "large_threshold": 10.0,
        "small_threshold": 1e-8,
        "epsilon": 1e-9,
    }
    assert defaults["ClassImbalance"]["samples"] == 500
    assert defaults["DeadRelu"]["tensor_regex"] == [".*relu_output"]
    assert defaults["SaturatedActivation"]["threshold_sigmoid_max"] == 16.99999
    # noise_aware (an extension, issue 33) defaults to AWS's exact comparisons
    assert defaults["Overtraining"] == {
        "patience_train": 5,
        "patience_validation": 10,
        "delta": 0.01,
        "noise_aware": False,
        "confidence": None,
    }
    assert defaults["TreeDepth"] == {
        "depth": 4.0,
        "window": 1,
    }  # window (extension, issue 33): 1 judges each round as AWS
    assert len(BUILTIN_RULES) == 21
