"""Reading ``profilerconfig.json`` (the file SageMaker places in the container).

smdebug lower-cases the whole file before parsing it; we match keys case-insensitively
instead, so values (paths) keep their case. Both the API shape
(``{"ProfilingIntervalInMilliseconds": ..., "ProfilingParameters": {...}}``) and
smdebug's test shape (``{"ProfilingParameters": {"ProfilerEnabled": true, ...}}``) are read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from .._container_env import ContainerPaths
from .._exceptions import ProfilerError, field_error_message
from .._string_values import BOOL_EXPECTED, FLOAT_EXPECTED, INT_EXPECTED, is_unset, to_bool, to_float, to_int
from ..format._files import atomic_write

__all__ = [
    "DEFAULT_CLOSE_INTERVAL_S",
    "DEFAULT_INTERVAL_MS",
    "DEFAULT_ROTATE_MAX_BYTES",
    "ProfilerSettings",
    "parse_profiler_config",
    "read_profiler_config",
    "update_profiler_config_file",
]

DEFAULT_INTERVAL_MS = 500
DEFAULT_ROTATE_MAX_BYTES = 10 * 1024 * 1024
DEFAULT_CLOSE_INTERVAL_S = 60.0


def _lower_keys(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k).lower(): _lower_keys(v) for k, v in obj.items()}
    return obj


def _flag(raw: Any, field: str, source: str) -> bool:
    """A boolean setting; a blank string or null means "not set" (false)."""
    if is_unset(raw):
        return False
    try:
        return to_bool(raw)
    except ValueError:
        msg = f"{source}: " + field_error_message(field, BOOL_EXPECTED, raw)
        raise ProfilerError(msg) from None


@attrs.frozen(kw_only=True)
class ProfilerSettings:
    """The parts of ``profilerconfig.json`` the monitor and the framework writer use.

    .. versionadded:: 0.1.0
    """

    disabled: bool = False
    interval_ms: int = DEFAULT_INTERVAL_MS
    local_path: Path = attrs.field(factory=lambda: ContainerPaths().profiler_dir, converter=Path)
    rotate_max_bytes: int = DEFAULT_ROTATE_MAX_BYTES
    close_interval_s: float = DEFAULT_CLOSE_INTERVAL_S
    framework_metrics: bool = True


def _positive(raw: Any, field: str, cast: type, source: str) -> Any:
    convert, expected = (to_int, INT_EXPECTED) if cast is int else (to_float, FLOAT_EXPECTED)
    msg = f"{source}: " + field_error_message(field, f"{expected} > 0", raw)
    try:
        value = convert(raw)
    except (TypeError, ValueError) as exc:
        raise ProfilerError(msg) from exc
    if value <= 0:
        raise ProfilerError(msg)
    return value


def parse_profiler_config(data: dict[str, Any], *, source: str = "profiler config") -> ProfilerSettings:
    """Parse a decoded profiler config dict (keys matched case-insensitively).

    Raises:
        ProfilerError: a value has the wrong type or range.
    """
    if not isinstance(data, dict):
        msg = f"{source}: " + field_error_message("ProfilerConfig", "a JSON object", data)
        raise ProfilerError(msg)
    cfg = _lower_keys(data)
    params = cfg.get("profilingparameters") or {}
    if not isinstance(params, dict):
        params = {}
    disabled = _flag(cfg.get("disableprofiler", False), "DisableProfiler", source)
    if "profilerenabled" in params and not _flag(params["profilerenabled"], "ProfilerEnabled", source):
        disabled = True
    kwargs: dict[str, Any] = {"disabled": disabled}
    interval = cfg.get("profilingintervalinmilliseconds")
    if interval is not None:
        kwargs["interval_ms"] = _positive(interval, "ProfilingIntervalInMilliseconds", int, source)
    local_path = params.get("localpath", cfg.get("localpath"))
    if local_path:
        kwargs["local_path"] = Path(str(local_path))
    if params.get("rotatemaxfilesizeinbytes") is not None:
        kwargs["rotate_max_bytes"] = _positive(
            params["rotatemaxfilesizeinbytes"], "RotateMaxFileSizeInBytes", int, source
        )
    if params.get("rotatefilecloseintervalinseconds") is not None:
        kwargs["close_interval_s"] = _positive(
            params["rotatefilecloseintervalinseconds"], "RotateFileCloseIntervalInSeconds", float, source
        )
    # update_profiler(disable_framework_metrics=True) sends "ProfilingParameters": {}.
    if "profilingparameters" in cfg and params == {}:
        kwargs["framework_metrics"] = False
    return ProfilerSettings(**kwargs)


def read_profiler_config(path: str | Path) -> ProfilerSettings:
    """Read and parse a ``profilerconfig.json`` file.

    Raises:
        ProfilerError: the file is not JSON or has a bad value.
        FileNotFoundError: the file does not exist.
    """
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        msg = f"profiler config {str(path)!r} is not valid JSON: {exc}"
        raise ProfilerError(msg) from exc
    return parse_profiler_config(data, source=f"profiler config {str(path)!r}")


def update_profiler_config_file(path: str | Path, update: Mapping[str, Any]) -> dict[str, Any]:
    """Apply an UpdateTrainingJob ``ProfilerConfig`` to a job's ``profilerconfig.json``, atomically.

    ``DisableProfiler`` and ``ProfilingIntervalInMilliseconds`` replace the file's values;
    ``ProfilingParameters`` entries are merged, but ``LocalPath`` and ``ProfilerEnabled`` are
    kept (and ``ProfilerEnabled`` follows ``DisableProfiler``); ``S3OutputPath`` is replaced.
    A running monitor started with ``--config-file`` picks the change up at its next sample.

    Args:
        path: the job's ``profilerconfig.json`` (created when missing).
        update: the request's ``ProfilerConfig`` (``ProfilerConfigForUpdate``) dict.

    Returns:
        The new file content.

    Raises:
        ProfilerError: the existing file is not valid JSON, or ``update`` is not a mapping.
    """
    if not isinstance(update, Mapping):
        raise ProfilerError(field_error_message("ProfilerConfig", "a mapping", update))
    target = Path(path)
    current: dict[str, Any] = {}
    if target.exists():
        try:
            current = json.loads(target.read_text(encoding="utf-8") or "{}")
        except json.JSONDecodeError as exc:
            msg = f"profiler config {str(path)!r} is not valid JSON: {exc}"
            raise ProfilerError(msg) from exc
    new = dict(current)
    for key in ("DisableProfiler", "ProfilingIntervalInMilliseconds", "S3OutputPath"):
        if key in update:
            new[key] = update[key]
    params = dict(current.get("ProfilingParameters") or {})
    if "ProfilingParameters" in update:
        kept = {k: v for k, v in params.items() if k in ("LocalPath", "ProfilerEnabled")}
        params = {**dict(update["ProfilingParameters"] or {}), **kept}
    if params or "ProfilingParameters" in current:
        params["ProfilerEnabled"] = not _flag(
            new.get("DisableProfiler", False), "DisableProfiler", f"profiler update of {str(path)!r}"
        )
        new["ProfilingParameters"] = params
    atomic_write(target, json.dumps(new, indent=2, sort_keys=True))
    return new
