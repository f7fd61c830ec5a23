"""Local mode: the SageMaker training platform, Debugger included, on one machine without Docker.

``LocalSession`` (a ``sagemaker.local.LocalSession``) is imported lazily, so the job
supervisor and the CLI do not pay for importing the ``sagemaker`` package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .api._client import LocalTrainingClient, default_output_path
from .store._job_store import JobStore

if TYPE_CHECKING:
    from .caller._session import LocalSagemakerClient, LocalSession

__all__ = ["JobStore", "LocalSagemakerClient", "LocalSession", "LocalTrainingClient", "default_output_path"]


def __getattr__(name: str) -> Any:
    if name in ("LocalSession", "LocalSagemakerClient"):
        from .caller import _session

        return getattr(_session, name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
