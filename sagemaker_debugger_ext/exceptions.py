"""The package's public exception tree, plus smdebug's exception classes (``smdebug.exceptions``).

``DebuggerExtError`` and every class under it (drawn in ``_exceptions.py``'s docstring) are
importable from here: ``from sagemaker_debugger_ext.exceptions import DebuggerExtError``.

smdebug's classes keep smdebug's names and constructors, so scripts and custom rules written
for smdebug catch and raise these after changing only their imports. They derive from
:class:`TrialError` (``InvalidCollectionConfiguration`` from :class:`HookConfigError`), so they
are also part of the package's one exception tree. Inside the package, "step not
yet available" is a state (:class:`~sagemaker_debugger_ext.trials.StepState`); these
exceptions are raised only at the public, smdebug-shaped surface.
"""

from __future__ import annotations

from ._exceptions import (
    ConfigStateError,
    ConfigTypeError,
    ConfigValueError,
    CorruptRecordError,
    DebuggerExtError,
    DiskFullError,
    FormatError,
    HookConfigError,
    HookError,
    InvalidCollectionConfiguration,
    JobAlreadyExistsError,
    JobNotFoundError,
    LocalJobInputError,
    LocalModeError,
    PathEscapeError,
    ProfilerError,
    ReductionNotApplicableError,
    RequestValidationError,
    RuleCoverageWarning,
    RuleError,
    RuleNotFoundError,
    RuleParameterError,
    StorageError,
    StorageNotFoundError,
    StorageUnreachableError,
    TrialError,
    TruncatedRecordError,
    UnsupportedDTypeError,
    UnsupportedRegionError,
)
from .modes import ModeKeys

__all__ = [
    "ConfigStateError",
    "ConfigTypeError",
    "ConfigValueError",
    "CorruptRecordError",
    "DebuggerExtError",
    "DiskFullError",
    "FormatError",
    "HookConfigError",
    "HookError",
    "IndexReaderException",
    "InsufficientInformationForRuleInvocation",
    "InvalidCollectionConfiguration",
    "InvalidWorker",
    "JobAlreadyExistsError",
    "JobNotFoundError",
    "LocalJobInputError",
    "LocalModeError",
    "MissingCollectionFiles",
    "NoMoreData",
    "NoMoreProfilerData",
    "PathEscapeError",
    "ProfilerError",
    "ReductionNotApplicableError",
    "RequestValidationError",
    "RuleCoverageWarning",
    "RuleError",
    "RuleEvaluationConditionMet",
    "RuleNotFoundError",
    "RuleParameterError",
    "SMDebugError",
    "SMDebugNotImplementedError",
    "SMDebugRuntimeError",
    "SMDebugTypeError",
    "SMDebugValueError",
    "ShapeUnavailableForStep",
    "StepNotYetAvailable",
    "StepUnavailable",
    "StorageError",
    "StorageNotFoundError",
    "StorageUnreachableError",
    "TensorUnavailable",
    "TensorUnavailableForStep",
    "TrialError",
    "TruncatedRecordError",
    "UnsupportedDTypeError",
    "UnsupportedRegionError",
]


def _mode_name(mode: object) -> str:
    return mode.name if isinstance(mode, ModeKeys) else str(mode)


class TensorUnavailable(TrialError):
    """No step of the trial holds tensor ``tname``."""

    def __init__(self, tname: str) -> None:
        super().__init__(f"tensor {tname!r} was not saved in this trial")
        self.tname = tname


class TensorUnavailableForStep(TrialError):
    """Tensor ``tname`` has no value at ``step`` (maybe only reductions were saved)."""

    def __init__(self, tname: str, step: int, mode: ModeKeys = ModeKeys.GLOBAL, has_reductions: bool = False) -> None:
        msg = f"tensor {tname!r} has no value at step {step} of mode {_mode_name(mode)}: it was not saved"
        if has_reductions:
            msg += "; reductions were saved for this step, ask for them with reduction_value()"
        super().__init__(msg)
        self.tname = tname
        self.step = step
        self.mode = mode
        self.has_reductions = has_reductions


class ShapeUnavailableForStep(TrialError):
    """Tensor ``tname`` has no recorded shape at ``step``."""

    def __init__(self, tname: str, step: int, mode: ModeKeys = ModeKeys.GLOBAL) -> None:
        super().__init__(f"tensor {tname!r} has no shape at step {step} of mode {_mode_name(mode)}")
        self.tname = tname
        self.step = step
        self.mode = mode


class StepUnavailable(TrialError):
    """``step`` of ``mode`` was skipped: a later step exists, this one was never saved."""

    def __init__(self, step: int, mode: ModeKeys) -> None:
        super().__init__(f"step {step} of mode {_mode_name(mode)} is not available: it was not saved")
        self.step = step
        self.mode = mode


class StepNotYetAvailable(TrialError):
    """``step`` of ``mode`` has not been written yet (training is still running)."""

    def __init__(self, step: int, mode: ModeKeys) -> None:
        super().__init__(f"step {step} of mode {_mode_name(mode)} is not available yet")
        self.step = step
        self.mode = mode


class NoMoreData(TrialError):
    """Training ended before ``step`` of ``mode``; ``last_step`` is the last one saved."""

    def __init__(self, step: int, mode: ModeKeys, last_step: int | None) -> None:
        self.msg = (
            f"step {step} of mode {_mode_name(mode)} was asked for, but training has ended; "
            f"the last step available is {last_step}"
        )
        super().__init__(self.msg)
        self.step = step
        self.mode = mode
        self.last_step = last_step


class MissingCollectionFiles(TrialError):
    """Training ended, but not every worker's collections file could be found."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or "training has ended but the collections files of all workers could not be loaded")


class IndexReaderException(TrialError):
    """An index file could not be read or is malformed."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidWorker(TrialError):
    """The worker name is not one of the trial's workers."""

    def __init__(self, worker: str) -> None:
        super().__init__(f"invalid worker: {worker!r}")
        self.worker = worker


class NoMoreProfilerData(TrialError):
    """Training ended before the profiler data reached ``timestamp``."""

    def __init__(self, timestamp: float) -> None:
        self.msg = f"looked for timestamp {timestamp} and reached the end of training"
        super().__init__(self.msg)
        self.timestamp = timestamp


class RuleEvaluationConditionMet(TrialError):
    """Raised by a rule when its condition is met at ``step`` (smdebug's custom-rule contract)."""

    def __init__(self, rule_name: str, step: int, end_of_rule: bool = False) -> None:
        super().__init__(f"evaluation of rule {rule_name} at step {step} met its condition")
        self.rule_name = rule_name
        self.step = step
        self.end_of_rule = end_of_rule


class InsufficientInformationForRuleInvocation(TrialError):
    """A rule cannot be invoked: the trial lacks what it needs."""

    def __init__(self, rule_name: str, message: str) -> None:
        super().__init__(f"insufficient information to invoke rule {rule_name}: {message}")
        self.rule_name = rule_name
        self.message = message


class SMDebugError(DebuggerExtError):
    """smdebug's base of its own errors (``smdebug.exceptions.SMDebugError``)."""


class SMDebugRuntimeError(SMDebugError, RuntimeError):
    """smdebug's ``SMDebugRuntimeError``: an operation is not possible in the current state."""


class SMDebugTypeError(SMDebugError, TypeError):
    """smdebug's ``SMDebugTypeError``: an argument of the wrong type."""


class SMDebugValueError(SMDebugError, ValueError):
    """smdebug's ``SMDebugValueError``: an argument with a bad value."""


class SMDebugNotImplementedError(SMDebugError, NotImplementedError):
    """smdebug's ``SMDebugNotImplementedError``."""
