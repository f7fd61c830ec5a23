"""Mirror of a remote (``s3://``) profiler folder into a local cache, refreshed incrementally.

The profiler readers follow local files; for ``s3://`` the trial first copies what is new:
framework timeline files once (they are written complete), system-metrics files when first
seen and, for the newest file of each host (the one that may still grow), again on every
refresh. The end-of-training marker is checked on the remote side.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .._container_env import TRAINING_END_MARKER
from .._exceptions import PathEscapeError
from ..format._files import atomic_write

__all__ = ["RemoteMirror"]

_SAFE_KEY = re.compile(r"^(system/incremental|framework/pevents)/\d{10}/[A-Za-z0-9_.\-]+\.json$")


class RemoteMirror:
    """Copies a remote profiler folder's metric files into ``cache_dir``.

    Args:
        storage: a Storage (``sagemaker_debugger_ext.storage``) rooted at the profiler folder.
        cache_dir: local folder receiving the copies.

    .. versionadded:: 0.1.0
    """

    def __init__(self, storage: Any, cache_dir: str | Path) -> None:
        self.storage = storage
        self.cache = Path(cache_dir)
        self._copied: set[str] = set()

    def _save(self, key: str) -> None:
        if not _SAFE_KEY.match(key) or ".." in key:
            msg = f"refusing remote key {key!r}: it does not look like a profiler metrics file"
            raise PathEscapeError(msg, name=key, root=str(self.cache))
        target = self.cache / key
        atomic_write(target, self.storage.read(key))

    def refresh(self) -> int:
        """Copy new files (and re-copy each host's newest system file); returns files copied."""
        copied = 0
        newest: dict[str, str] = {}
        for key in self.storage.list("system/incremental/"):
            if not key.endswith(".json"):
                continue
            host = key.rsplit("/", 1)[-1].split(".", 1)[-1]
            newest[host] = max(newest.get(host, key), key, key=lambda k: (int(k.rsplit("/", 1)[-1].split(".")[0]), k))
            if key not in self._copied:
                self._save(key)
                self._copied.add(key)
                copied += 1
        for key in newest.values():
            self._save(key)
        for key in self.storage.list("framework/pevents/"):
            if key.endswith(".json") and key not in self._copied:
                self._save(key)
                self._copied.add(key)
                copied += 1
        return copied

    def training_ended(self) -> bool:
        """Whether the remote folder holds ``training_job_end.ts`` (root or ``system/``)."""
        return bool(self.storage.exists(TRAINING_END_MARKER) or self.storage.exists(f"system/{TRAINING_END_MARKER}"))
