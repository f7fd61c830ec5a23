"""The package's one exception tree.

Every error the package raises on purpose derives from :class:`DebuggerExtError`. Errors
about bad user input also derive from :class:`ValueError` or :class:`TypeError`, so code
written against the SageMaker SDK (which raises those) keeps catching them::

    DebuggerExtError
    ├── ConfigValueError (ValueError)            bad value in a config object or argument
    │   ├── UnsupportedRegionError               region has no Debugger / profiler
    │   └── RequestValidationError               request violates botocore's service model
    ├── ConfigTypeError (TypeError)              wrong type in a config object or argument
    ├── ConfigStateError (RuntimeError)          conflicting settings (SDK raised RuntimeError)
    ├── FormatError                              bytes on disk that cannot be decoded
    │   ├── CorruptRecordError                   CRC mismatch, bad framing
    │   ├── TruncatedRecordError                 half-written tail (retry later from offset)
    │   └── UnsupportedDTypeError (ValueError)   dtype the format cannot carry
    ├── PathEscapeError (ValueError)             a user/file name would leave its root folder
    ├── StorageError                             file:// or s3:// I/O failed
    │   ├── StorageNotFoundError                 missing object, folder or bucket
    │   ├── StorageUnreachableError              endpoint unreachable after retries
    │   └── DiskFullError (OSError)              no space left on the local disk (ENOSPC/EDQUOT)
    ├── HookError                                training-side hook misuse
    │   └── HookConfigError (ValueError)         bad hook/collection parameter
    │       └── InvalidCollectionConfiguration   collection with nothing to match (smdebug name)
    ├── TrialError                               reader errors; smdebug's classes (exceptions.py) subclass it
    ├── ReductionNotApplicableError (ValueError) a reduction asked of a non-numeric (string) tensor
    ├── LocalModeError                           local platform errors
    │   ├── JobNotFoundError (LookupError)
    │   ├── JobAlreadyExistsError (ValueError)
    │   └── LocalJobInputError (ValueError)      bad input detected before any process starts
    ├── RuleError                                rule machinery
    │   ├── RuleParameterError (ValueError)      unknown/invalid rule parameter
    │   └── RuleNotFoundError (LookupError)      unknown built-in or custom rule name
    └── ProfilerError

Subsystems add subclasses here, under their own heading, so the tree stays in one place.
"""

from __future__ import annotations

from typing import Any

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
    "InvalidCollectionConfiguration",
    "JobAlreadyExistsError",
    "JobNotFoundError",
    "LocalJobInputError",
    "LocalModeError",
    "PathEscapeError",
    "ProfilerError",
    "ReductionNotApplicableError",
    "RequestValidationError",
    "RuleCoverageWarning",
    "RuleError",
    "RuleNotFoundError",
    "RuleParameterError",
    "StorageError",
    "StorageNotFoundError",
    "StorageUnreachableError",
    "TrialError",
    "TruncatedRecordError",
    "UnsupportedDTypeError",
    "UnsupportedRegionError",
    "field_error_message",
]


def field_error_message(field: str, expected: str, value: Any) -> str:
    """Return the house-style message ``'<field>' must be <expected> (got <value!r>)``."""
    return f"{field!r} must be {expected} (got {value!r})"


class DebuggerExtError(Exception):
    """Root of every error raised on purpose by sagemaker_debugger_ext."""


# --- configuration and request --------------------------------------------------------
class ConfigValueError(DebuggerExtError, ValueError):
    """A config field or argument has a value outside what is allowed."""

    def __init__(self, message: str, *, field: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


class ConfigTypeError(DebuggerExtError, TypeError):
    """A config field or argument has the wrong type."""

    def __init__(self, message: str, *, field: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


class ConfigStateError(DebuggerExtError, RuntimeError):
    """Settings that are each valid conflict with each other (the SDK raised RuntimeError)."""


class UnsupportedRegionError(ConfigValueError):
    """The region has no Debugger rule image or does not support Debugger/profiling."""


class RequestValidationError(ConfigValueError):
    """The CreateTrainingJob request violates botocore's SageMaker service model.

    ``problems`` lists ``(member_path, message)`` pairs, one per violation.
    """

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
    """A local write failed because the disk is full; the message says where.

    Also an ``OSError`` with ``errno`` ENOSPC (or EDQUOT), so code that caught the raw
    ``OSError`` keeps catching it.
    """

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


class HookConfigError(HookError, ValueError):
    """A hook or collection parameter (JSON or Python) has a value outside what is allowed."""

    def __init__(self, message: str, *, field: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


class InvalidCollectionConfiguration(HookConfigError):
    """A configured collection is neither built in nor has an ``include_regex`` or tensor names.

    Same name as smdebug's ``smdebug.exceptions.InvalidCollectionConfiguration``; raised at
    the first step, as smdebug does.
    """

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
    """Base for reader errors; the smdebug-compatible classes in ``exceptions.py`` subclass it."""


class ReductionNotApplicableError(DebuggerExtError, ValueError):
    """A reduction (min, max, mean, ..., l1, l2) was asked of a tensor it does not apply to:
    strings and other non-numeric dtypes. The hook stores no such reduction; the reader raises."""


# --- local mode -------------------------------------------------------------------------
class LocalModeError(DebuggerExtError):
    """The local training platform failed."""


class JobNotFoundError(LocalModeError, LookupError):
    """No local training job has that name."""

    def __init__(self, message: str, *, job_name: str | None = None) -> None:
        super().__init__(message)
        self.job_name = job_name


class JobAlreadyExistsError(LocalModeError, ValueError):
    """A local training job with that name already exists."""

    def __init__(self, message: str, *, job_name: str | None = None) -> None:
        super().__init__(message)
        self.job_name = job_name


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


class RuleCoverageWarning(UserWarning):
    """Before a local job starts: a Debugger rule will likely see too little (a collection
    saved too rarely for the job's length, a rule needing EVAL data the script may not give).
    The message names the rule, the collection and the fix."""
