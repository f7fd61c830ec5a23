"""Debugger on SageMaker without the Debugger service: the hook on Training, each rule on Processing.

See docs/cloud.md. ``Estimator(debugger_backend="self-hosted")`` uses it directly; SDK
estimators get it through :class:`DebuggerSession`. The ``sagemaker`` package is imported only
for :class:`DebuggerSession` and :func:`self_hosted_train`: the containers' side (the launcher,
the rule jobs) runs without it.
"""

from __future__ import annotations

from typing import Any

from ._backend import BACKEND_ENV, DebuggerBackend, resolve_backend

__all__ = ["BACKEND_ENV", "DebuggerBackend", "DebuggerSession", "resolve_backend", "self_hosted_train"]


def __getattr__(name: str) -> Any:
    if name in ("DebuggerSession", "self_hosted_train"):
        from . import _session

        return getattr(_session, name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
