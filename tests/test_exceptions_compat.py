"""smdebug-compatible exception classes and the modes module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sagemaker_debugger_ext import _exceptions
from sagemaker_debugger_ext import exceptions as exc
from sagemaker_debugger_ext._exceptions import DebuggerExtError, TrialError
from sagemaker_debugger_ext.modes import ModeKeys


def test_constructor_signatures_and_attributes() -> None:
    """Each class takes smdebug's arguments and keeps them as attributes."""
    e = exc.RuleEvaluationConditionMet("MyRule", 7, end_of_rule=True)
    assert (e.rule_name, e.step, e.end_of_rule) == ("MyRule", 7, True)
    assert "MyRule" in str(e) and "7" in str(e)
    assert exc.RuleEvaluationConditionMet("R", 1).end_of_rule is False
    e2 = exc.TensorUnavailableForStep("w", 3, ModeKeys.EVAL, has_reductions=True)
    assert e2.has_reductions and "EVAL" in str(e2) and "reduction" in str(e2)
    assert exc.NoMoreData(5, ModeKeys.TRAIN, 4).last_step == 4
    assert exc.StepUnavailable(2, ModeKeys.TRAIN).mode == ModeKeys.TRAIN
    assert exc.StepNotYetAvailable(2, ModeKeys.GLOBAL).step == 2
    assert exc.InsufficientInformationForRuleInvocation("R", "no tensors").message == "no tensors"
    assert exc.InvalidWorker("w9").worker == "w9"
    assert exc.TensorUnavailable("t").tname == "t"
    assert exc.IndexReaderException("bad").message == "bad"
    assert exc.NoMoreProfilerData(12.5).timestamp == 12.5
    assert "collections" in str(exc.MissingCollectionFiles())


# smdebug 1.0.34's exception classes (smdebug/exceptions.py), beside the package's own tree.
SMDEBUG_NAMES = (
    "IndexReaderException", "InsufficientInformationForRuleInvocation", "InvalidWorker", "MissingCollectionFiles",
    "NoMoreData", "NoMoreProfilerData", "RuleEvaluationConditionMet", "SMDebugError", "SMDebugNotImplementedError",
    "SMDebugRuntimeError", "SMDebugTypeError", "SMDebugValueError", "ShapeUnavailableForStep", "StepNotYetAvailable",
    "StepUnavailable", "TensorUnavailable", "TensorUnavailableForStep",
)  # fmt: skip


def test_one_module_defines_the_whole_tree() -> None:
    """Every exception class is defined in ``exceptions`` and drawn in its tree (docs/architecture.md);
    ``_exceptions`` only re-exports."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text()
    tree = doc.split("## The exception tree", 1)[1]
    assert set(_exceptions.__all__) == {*exc.__all__, "field_error_message"}
    for name in exc.__all__:
        cls = getattr(exc, name)
        assert cls.__module__ == exc.__name__, name
        assert getattr(_exceptions, name) is cls, name
        assert re.search(rf"\b{name}\b", tree) or name == "RuleCoverageWarning", f"{name} is not drawn in the tree"
    defined_in_alias = [
        v for v in vars(_exceptions).values() if isinstance(v, type) and v.__module__ == _exceptions.__name__
    ]
    assert defined_in_alias == []


@pytest.mark.parametrize("name", SMDEBUG_NAMES)
def test_all_derive_from_trial_error(name: str) -> None:
    """Every compat class is part of the package's exception tree; smdebug's general
    ``SMDebug*Error`` classes are not trial errors and also derive from the builtin they name."""
    cls = getattr(exc, name)
    assert issubclass(cls, DebuggerExtError)
    if name.startswith("SMDebug"):
        assert issubclass(cls, exc.SMDebugError) and not issubclass(cls, TrialError)
        builtin = {
            "Runtime": RuntimeError,
            "Type": TypeError,
            "Value": ValueError,
            "NotImplemented": NotImplementedError,
        }
        kind = name[len("SMDebug") : -len("Error")]
        assert kind == "" or issubclass(cls, builtin[kind])
    else:
        assert issubclass(cls, TrialError)


def test_modes_modules() -> None:
    """`trials.modes` and `sagemaker_debugger_ext.modes` expose ModeKeys and its members."""
    from sagemaker_debugger_ext import modes
    from sagemaker_debugger_ext.trials import create_trial
    from sagemaker_debugger_ext.trials import modes as trial_modes

    assert callable(create_trial)
    assert trial_modes is modes and modes.ModeKeys is ModeKeys
    assert modes.TRAIN == ModeKeys.TRAIN == 1 and modes.GLOBAL == 4
