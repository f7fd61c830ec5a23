"""Which engine evaluates Debugger on SageMaker: the Debugger service, or our own jobs."""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping

from .._container_env import DEBUGGER_BACKEND_ENV
from .._exceptions import ConfigValueError, field_error_message

__all__ = ["BACKEND_ENV", "DebuggerBackend", "resolve_backend"]

BACKEND_ENV = DEBUGGER_BACKEND_ENV


class DebuggerBackend(enum.Enum):
    """``service``: the request carries the Debugger fields and SageMaker Debugger runs the rules.
    ``self-hosted``: no Debugger field is sent; the hook's config travels in the source bundle and
    every rule runs as a SageMaker Processing job of ours.

    .. versionadded:: 0.2.0
    """

    SERVICE = "service"
    SELF_HOSTED = "self-hosted"


def resolve_backend(
    value: str | DebuggerBackend | None, environ: Mapping[str, str] | None = None, *, field: str = "debugger_backend"
) -> DebuggerBackend:
    """``value``, else ``$SAGEMAKER_DEBUGGER_EXT_DEBUGGER_BACKEND``, else ``service``.

    Raises:
        ConfigValueError: naming ``field`` (the argument) or the variable, the value and what is allowed.
    """
    if isinstance(value, DebuggerBackend):
        return value
    allowed = " or ".join(repr(b.value) for b in DebuggerBackend)
    raw: object
    if value is not None:
        raw = value
    else:
        env = os.environ if environ is None else environ
        field, raw = BACKEND_ENV, env.get(BACKEND_ENV)
        if raw is None or not str(raw).strip():
            return DebuggerBackend.SERVICE
    try:
        return DebuggerBackend(str(raw).strip().lower() if isinstance(raw, str) else raw)
    except ValueError:
        raise ConfigValueError(field_error_message(field, allowed, raw), field=field, value=raw) from None
