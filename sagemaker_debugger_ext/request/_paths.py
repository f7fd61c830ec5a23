"""Artifact path derivation: ``<base>/<job>/debug-output`` and friends (pure string functions)."""

from __future__ import annotations

from typing import overload

__all__ = [
    "artifacts_path",
    "debugger_artifacts_path",
    "profiler_artifacts_path",
    "rule_output_path",
    "tensorboard_artifacts_path",
]


@overload
def artifacts_path(base: str, job_name: str, *parts: str) -> str: ...
@overload
def artifacts_path(base: None, job_name: str, *parts: str) -> None: ...
@overload
def artifacts_path(base: str | None, job_name: str, *parts: str) -> str | None: ...
def artifacts_path(base: str | None, job_name: str, *parts: str) -> str | None:
    """Join ``base``, ``job_name`` and ``parts`` with single slashes; ``None`` if ``base`` is ``None``.

    Works for ``s3://``, ``file://`` and plain paths; an empty ``base`` gives a relative path
    (as the SDK does in local-code mode, where ``output_path`` is ``""``). A bare root
    (``file:///``, ``s3://bucket/``, ``/``) keeps its root: ``file:///`` gives ``file:///<job>/...``.
    Every ``<prefix>/<job>/...`` path of the package is built here.
    """
    if base is None:
        return None
    tail = "/".join(p.strip("/") for p in (job_name, *parts) if p)
    if not base:
        return tail
    head = base
    scheme, sep, rest = head.partition("://")
    if sep:
        rest = rest.rstrip("/")
        if not rest:
            return f"{scheme}://{'/' if scheme == 'file' else ''}{tail}"
        return f"{scheme}://{rest}/{tail}"
    head = head.rstrip("/")
    return f"{head}/{tail}" if head else f"/{tail}"


@overload
def debugger_artifacts_path(s3_output_path: str, job_name: str) -> str: ...
@overload
def debugger_artifacts_path(s3_output_path: None, job_name: str) -> None: ...
@overload
def debugger_artifacts_path(s3_output_path: str | None, job_name: str) -> str | None: ...
def debugger_artifacts_path(s3_output_path: str | None, job_name: str) -> str | None:
    """``<s3_output_path>/<job_name>/debug-output`` (tensors written by the hook)."""
    return artifacts_path(s3_output_path, job_name, "debug-output")


@overload
def tensorboard_artifacts_path(s3_output_path: str, job_name: str) -> str: ...
@overload
def tensorboard_artifacts_path(s3_output_path: None, job_name: str) -> None: ...
@overload
def tensorboard_artifacts_path(s3_output_path: str | None, job_name: str) -> str | None: ...
def tensorboard_artifacts_path(s3_output_path: str | None, job_name: str) -> str | None:
    """``<s3_output_path>/<job_name>/tensorboard-output``."""
    return artifacts_path(s3_output_path, job_name, "tensorboard-output")


@overload
def profiler_artifacts_path(s3_output_path: str, job_name: str) -> str: ...
@overload
def profiler_artifacts_path(s3_output_path: None, job_name: str) -> None: ...
@overload
def profiler_artifacts_path(s3_output_path: str | None, job_name: str) -> str | None: ...
def profiler_artifacts_path(s3_output_path: str | None, job_name: str) -> str | None:
    """``<s3_output_path>/<job_name>/profiler-output``."""
    return artifacts_path(s3_output_path, job_name, "profiler-output")


@overload
def rule_output_path(s3_output_path: str, job_name: str, rule_name: str) -> str: ...
@overload
def rule_output_path(s3_output_path: None, job_name: str, rule_name: str) -> None: ...
@overload
def rule_output_path(s3_output_path: str | None, job_name: str, rule_name: str) -> str | None: ...
def rule_output_path(s3_output_path: str | None, job_name: str, rule_name: str) -> str | None:
    """``<s3_output_path>/<job_name>/rule-output/<rule_name>``."""
    return artifacts_path(s3_output_path, job_name, "rule-output", rule_name)
