"""The package's one exception tree, smdebug's exception classes included (``smdebug.exceptions``).

Every error the package raises on purpose derives from :class:`DebuggerExtError`. Errors
about bad user input also derive from :class:`ValueError` or :class:`TypeError`, so code
written against the SageMaker SDK (which raises those) keeps catching them. smdebug's classes
keep smdebug's names and constructors, so scripts and custom rules written for smdebug catch
and raise them after changing only their imports. Inside the package, "step not yet
available" is a state (:class:`~sagemaker_debugger_ext.trials.StepState`); smdebug's trial
exceptions are raised only at the public, smdebug-shaped surface. ``_exceptions`` is a
private alias of this module. The tree is drawn in docs/architecture.md ("The exception tree"),
which the tests keep complete.

Subsystems add subclasses here, under their own heading, so the tree stays in one place.
"""

from __future__ import annotations

from typing import Any

from .modes import ModeKeys

__all__ = [
    "ConfigStateError", "ConfigTypeError", "ConfigValueError", "CorruptRecordError", "DebuggerExtError",
    "DiskFullError", "FormatError", "HookConfigError", "HookError", "IndexReaderException",
    "InsufficientInformationForRuleInvocation", "InvalidCollectionConfiguration", "InvalidWorker",
    "JobAlreadyExistsError", "JobNotFoundError", "LocalJobInputError", "LocalModeError", "MissingCollectionFiles",
    "NoMoreData", "NoMoreProfilerData", "PathEscapeError", "ProfilerError", "ReductionNotApplicableError",
    "RequestValidationError", "RuleCoverageWarning", "RuleError", "RuleEvaluationConditionMet", "RuleNotFoundError",
    "RuleParameterError", "SMDebugError", "SMDebugNotImplementedError", "SMDebugRuntimeError", "SMDebugTypeError",
    "SMDebugValueError", "SdkVersionError", "ShapeUnavailableForStep", "StepNotYetAvailable", "StepUnavailable", "StorageError",
    "StorageNotFoundError", "StorageUnreachableError", "TensorUnavailable", "TensorUnavailableForStep",
    "TrialError", "TruncatedRecordError", "UnsupportedDTypeError", "UnsupportedRegionError",
]  # fmt: skip


def field_error_message(field: str, expected: str, value: Any) -> str:
    """Return the house-style message ``'<field>' must be <expected> (got <value!r>)``."""
    return f"{field!r} must be {expected} (got {value!r})"


class DebuggerExtError(Exception):
    """Root of every error raised on purpose by sagemaker_debugger_ext."""


class _FieldError(DebuggerExtError):
    """An error about one field: ``field`` and ``value`` name it."""

    def __init__(self, message: str, *, field: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


# --- configuration and request --------------------------------------------------------
class ConfigValueError(_FieldError, ValueError):
    """A config field or argument has a value outside what is allowed."""


class ConfigTypeError(_FieldError, TypeError):
    """A config field or argument has the wrong type."""


class ConfigStateError(DebuggerExtError, RuntimeError):
    """Settings that are each valid conflict with each other (the SDK raised RuntimeError)."""


class UnsupportedRegionError(ConfigValueError):
    """The region has no Debugger rule image or does not support Debugger/profiling."""


class RequestValidationError(ConfigValueError):
    """The request violates botocore's SageMaker model; ``problems``: one ``(member_path, message)`` each."""

    def __init__(self, message: str, *, problems: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems or [])


# --- format -----------------------------------------------------------------------------
class FormatError(DebuggerExtError):
    """Bytes on disk that cannot be decoded as smdebug/TFRecord data."""

    def __init__(self, message: str, *, path: str | None = None, offset: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.offset = offset


class CorruptRecordError(FormatError):
    """A record's CRC or framing is wrong: the data is damaged, retrying will not help."""


class TruncatedRecordError(FormatError):
    """A record ends early: the file may still be written; retry later from ``offset``."""


class UnsupportedDTypeError(FormatError, ValueError):
    """A tensor dtype the format cannot encode or decode."""


class PathEscapeError(DebuggerExtError, ValueError):
    """A name taken from a user or a file would place a path outside its root."""

    def __init__(self, message: str, *, name: str | None = None, root: str | None = None) -> None:
        super().__init__(message)
        self.name = name
        self.root = root


# --- storage ----------------------------------------------------------------------------
class StorageError(DebuggerExtError):
    """A file:// or s3:// operation failed."""

    def __init__(self, message: str, *, uri: str | None = None) -> None:
        super().__init__(message)
        self.uri = uri


class StorageNotFoundError(StorageError):
    """The object, folder or bucket does not exist."""


class StorageUnreachableError(StorageError):
    """The storage endpoint could not be reached, even after retries."""


class DiskFullError(StorageError, OSError):
    """A local write failed because the disk is full (the message says where); also an ``OSError``
    with ``errno`` ENOSPC (or EDQUOT), so code that caught the raw ``OSError`` keeps catching it."""

    def __init__(self, message: str, *, path: str, errno_value: int = 28) -> None:
        super().__init__(message, uri=path)
        self.errno = errno_value
        self.strerror = "No space left on device"
        self.filename = path

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "the disk is full"


# --- hook and trials --------------------------------------------------------------------
class HookError(DebuggerExtError):
    """The training-side hook was configured or used wrongly."""


class HookConfigError(HookError, ConfigValueError):
    """A hook or collection parameter (JSON or Python) has a value outside what is allowed."""


class InvalidCollectionConfiguration(HookConfigError):
    """A configured collection is neither built in nor has an ``include_regex`` or tensor names
    (smdebug's name; raised at the first step, as smdebug does)."""

    def __init__(self, collection_name: str) -> None:
        super().__init__(
            f"collection {collection_name!r} is not a built-in collection and has no "
            "'include_regex' and no tensor names: give it an include_regex or save tensors "
            "into it with save_tensor()",
            field="CollectionName",
            value=collection_name,
        )
        self.collection_name = collection_name


class TrialError(DebuggerExtError):
    """Base for reader errors; smdebug's trial and rule classes (below) subclass it."""


class ReductionNotApplicableError(DebuggerExtError, ValueError):
    """A reduction (min, max, mean, ..., l1, l2) was asked of a tensor it does not apply to:
    strings and other non-numeric dtypes. The hook stores no such reduction; the reader raises."""


# --- local mode -------------------------------------------------------------------------
class LocalModeError(DebuggerExtError):
    """The local training platform failed."""


class _JobError(LocalModeError):
    """An error about one local job, named by ``job_name``."""

    def __init__(self, message: str, *, job_name: str | None = None) -> None:
        super().__init__(message)
        self.job_name = job_name


class JobNotFoundError(_JobError, LookupError):
    """No local training job has that name."""


class JobAlreadyExistsError(_JobError, ValueError):
    """A local training job with that name already exists."""


class LocalJobInputError(LocalModeError, ValueError):
    """Bad input for a local job, found before any process starts."""


# --- rules ------------------------------------------------------------------------------
class RuleError(DebuggerExtError):
    """Rule machinery failed."""

    def __init__(self, message: str, *, rule_name: str | None = None) -> None:
        super().__init__(message)
        self.rule_name = rule_name


class RuleParameterError(RuleError, ValueError):
    """A rule parameter is unknown or has an invalid value."""


class RuleNotFoundError(RuleError, LookupError):
    """No built-in rule, or no class in a custom rule source, has that name."""


# --- profiler ---------------------------------------------------------------------------
class ProfilerError(DebuggerExtError):
    """The profiler (monitor, readers, rules or report) failed."""


# --- SDK majors -------------------------------------------------------------------------
class SdkVersionError(DebuggerExtError, ImportError):
    """A part of the package was imported with the other SageMaker Python SDK major installed
    (``Estimator``/``LocalSession`` need v2, ``sagemaker_debugger_ext.train`` needs v3).

    ``installed`` is the installed ``sagemaker`` version (``None``: none), ``required`` the major needed.
    """

    def __init__(self, message: str, *, name: str | None = None, installed: str | None, required: int) -> None:
        super().__init__(message, name=name)
        self.installed = installed
        self.required = required


class RuleCoverageWarning(UserWarning):
    """Before a local job starts: a Debugger rule will likely see too little (a collection
    saved too rarely for the job's length, a rule needing EVAL data the script may not give).
    The message names the rule, the collection and the fix."""


def _mode_name(mode: object) -> str:
    return mode.name if isinstance(mode, ModeKeys) else str(mode)


# --- smdebug's trial and rule exceptions (smdebug 1.0.34 names and constructors) -----------
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


# --- smdebug's general errors --------------------------------------------------------
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
