"""Validate a whole CreateTrainingJob request against botocore's own SageMaker service model.

Every violation is collected (member path + reason) and reported in one
:class:`RequestValidationError` before anything is sent. Service patterns are Java regexes
matched against the whole value; ``\\p{...}`` classes, which Python's ``re`` lacks, are
approximated leniently (``\\p{Z}`` as ``\\s``, any other as ``\\w``), so a value is never
rejected for a character the service accepts.
"""

from __future__ import annotations

import datetime
import functools
import re
from typing import Any

from .._exceptions import RequestValidationError

__all__ = ["create_training_job_shape", "validate_create_training_job", "validate_request"]

_PROPERTY_RE = re.compile(r"\\p\{(\w+)\}")
_S3_PATTERN_HINTS = ("s3://", "(https|s3)://", "s3|https")


@functools.cache
def create_training_job_shape() -> Any:
    """The ``CreateTrainingJob`` input shape of the installed botocore (cached)."""
    import botocore.session  # botocore's service models: loaded on first validation

    model = botocore.session.get_session().get_service_model("sagemaker")
    return model.operation_model("CreateTrainingJob").input_shape


@functools.cache
def _compile(pattern: str) -> re.Pattern[str] | None:
    translated = _PROPERTY_RE.sub(lambda m: r"\s" if m.group(1) == "Z" else r"\w", pattern)
    try:
        return re.compile(translated, re.DOTALL)
    except re.error:
        return None  # a pattern Python cannot express: not checked


class _Walker:
    def __init__(self, *, allow_local_uris: bool) -> None:
        self.allow_local_uris = allow_local_uris
        self.problems: list[tuple[str, str]] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append((path or "<request>", message))

    def walk(self, shape: Any, value: Any, path: str) -> None:
        kind = shape.type_name
        handler = getattr(self, f"_{kind}", None)
        if handler is not None:
            handler(shape, value, path)

    def _limits(self, shape: Any, size: int, path: str, unit: str) -> None:
        low, high = shape.metadata.get("min"), shape.metadata.get("max")
        if low is not None and size < low:
            self.add(path, f"must have at least {low} {unit} (got {size})")
        if high is not None and size > high:
            self.add(path, f"must have at most {high} {unit} (got {size})")

    def _structure(self, shape: Any, value: Any, path: str) -> None:
        if not isinstance(value, dict):
            self.add(path, f"must be a dict ({shape.name}) (got {value!r})")
            return
        for name in shape.required_members:
            if value.get(name) is None:
                self.add(_join(path, name), "is required but missing")
        for name, member_value in value.items():
            member = shape.members.get(name)
            child = _join(path, name)
            if member is None and self.allow_local_uris and shape.name == "DataSource" and name == "FileDataSource":
                self._file_data_source(member_value, child)
            elif member is None:
                self.add(child, f"is not a member of {shape.name}")
            elif member_value is not None:
                self.walk(member, member_value, child)

    def _file_data_source(self, value: Any, path: str) -> None:
        """Local mode's ``FileDataSource`` (not in the service model): ``{"FileUri": str, ...}``."""
        uri = value.get("FileUri") if isinstance(value, dict) else None
        if not isinstance(uri, str) or not uri:
            self.add(_join(path, "FileUri"), f"must be a file:// URI or a local path (got {uri!r})")

    def _list(self, shape: Any, value: Any, path: str) -> None:
        if not isinstance(value, (list, tuple)):
            self.add(path, f"must be a list (got {value!r})")
            return
        self._limits(shape, len(value), path, "items")
        for index, item in enumerate(value):
            self.walk(shape.member, item, f"{path}[{index}]")

    def _map(self, shape: Any, value: Any, path: str) -> None:
        if not isinstance(value, dict):
            self.add(path, f"must be a dict (got {value!r})")
            return
        self._limits(shape, len(value), path, "entries")
        for key, item in value.items():
            self.walk(shape.key, key, f"{path} key {key!r}")
            self.walk(shape.value, item, f"{path}[{key!r}]")

    def _string(self, shape: Any, value: Any, path: str) -> None:
        if not isinstance(value, str):
            self.add(path, f"must be a string (got {value!r})")
            return
        self._limits(shape, len(value), path, "characters")
        enum = shape.enum
        local_instance = self.allow_local_uris and value in ("local", "local_gpu") and "ml.m5.large" in enum
        if enum and value not in enum and not local_instance:
            shown = ", ".join(enum[:8]) + (", ..." if len(enum) > 8 else "")
            self.add(path, f"must be one of {shown} (got {value!r})")
        pattern = shape.metadata.get("pattern")
        if pattern:
            if (
                self.allow_local_uris
                and any(h in pattern for h in _S3_PATTERN_HINTS)
                and (value == "" or value.startswith("file://") or "://" not in value)
            ):
                return
            compiled = _compile(pattern)
            if compiled is not None and not compiled.fullmatch(value):
                self.add(path, f"must match the pattern {pattern} (got {value!r})")

    def _integer(self, shape: Any, value: Any, path: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            self.add(path, f"must be an integer (got {value!r})")
            return
        low, high = shape.metadata.get("min"), shape.metadata.get("max")
        if low is not None and value < low:
            self.add(path, f"must be >= {low} (got {value!r})")
        if high is not None and value > high:
            self.add(path, f"must be <= {high} (got {value!r})")

    _long = _integer

    def _boolean(self, shape: Any, value: Any, path: str) -> None:
        if not isinstance(value, bool):
            self.add(path, f"must be a bool (got {value!r})")

    def _float(self, shape: Any, value: Any, path: str) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.add(path, f"must be a number (got {value!r})")

    _double = _float

    def _timestamp(self, shape: Any, value: Any, path: str) -> None:
        if not isinstance(value, (datetime.datetime, str, int, float)) or isinstance(value, bool):
            self.add(path, f"must be a timestamp (got {value!r})")

    def _blob(self, shape: Any, value: Any, path: str) -> None:
        if not isinstance(value, (bytes, bytearray, str)):
            self.add(path, f"must be bytes (got {value!r})")


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def validate_request(shape: Any, request: dict[str, Any], *, allow_local_uris: bool = False) -> list[tuple[str, str]]:
    """Return every ``(member_path, reason)`` where ``request`` violates ``shape``."""
    walker = _Walker(allow_local_uris=allow_local_uris)
    walker.walk(shape, request, "")
    return walker.problems


def validate_create_training_job(request: dict[str, Any], *, allow_local_uris: bool = False) -> None:
    """Raise one :class:`RequestValidationError` listing every violation of the service model.

    Args:
        request: The CreateTrainingJob request (API member names).
        allow_local_uris: Accept ``file://`` and empty values where the model wants an S3
            URI (local mode, whose client consumes the same request).
    """
    problems = validate_request(create_training_job_shape(), request, allow_local_uris=allow_local_uris)
    if problems:
        lines = "\n".join(f"  - {path}: {reason}" for path, reason in problems)
        msg = f"CreateTrainingJob request violates the SageMaker service model ({len(problems)} problem(s)):\n{lines}"
        raise RequestValidationError(msg, problems=problems)
