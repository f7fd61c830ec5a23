"""Sync of a job's LocalPaths to its S3 output paths (``file://`` or ``s3://``).

Incremental: each pass uploads the files that are new or changed since the last pass
(temporary ``.tmp`` files and dot-files are skipped, since writers rename them into place).
"""

from __future__ import annotations

import tarfile
import threading
from collections.abc import Iterable
from pathlib import Path

import attrs

from ..._exceptions import StorageError
from ...format._writer import write_training_end
from ...storage import open_storage
from ..store._job_store import JobPaths

__all__ = ["SyncTarget", "SyncThread", "Syncer", "pack_folder", "write_end_markers"]


def write_end_markers(paths: JobPaths, *, profiler: bool) -> None:
    """The end-of-training markers the rules wait for: the debug output's, and with ``profiler``
    the profiler output's and its ``system`` folder's (before the last sync, which puts them last)."""
    write_training_end(paths.debug_dir)
    if profiler:
        write_training_end(paths.profiler_dir)
        write_training_end(paths.profiler_dir / "system")


@attrs.frozen
class SyncTarget:
    """A local folder mirrored to a destination URI."""

    local_dir: Path
    uri: str


class Syncer:
    """Mirrors several local folders to their destinations, incrementally."""

    def __init__(self, targets: Iterable[SyncTarget]) -> None:
        self.targets = list(targets)
        self._stores = {t.uri: open_storage(t.uri) for t in self.targets}

    def add(self, target: SyncTarget) -> None:
        """Mirror one more folder (safe while another thread runs :meth:`sync`)."""
        self._stores[target.uri] = open_storage(target.uri)
        self.targets.append(target)

    def sync(self) -> int:
        """Upload what changed in every target; returns the number of files uploaded.

        Raises:
            StorageError: a destination failed even after the storage layer's retries.
        """
        count = 0
        for target in self.targets:
            if target.local_dir.is_dir():
                count += self._stores[target.uri].sync_dir(target.local_dir, "")
        return count

    def upload_file(self, uri_base: str, local_path: Path, key: str) -> None:
        """Upload one file under ``uri_base``."""
        open_storage(uri_base).upload_file(local_path, key)


def pack_folder(folder: Path, *, into: Path) -> Path:
    """``tar.gz`` the contents of ``folder`` (SageMaker's model.tar.gz layout)."""
    into.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(into, "w:gz") as tar:
        if folder.is_dir():
            for child in sorted(folder.iterdir()):
                tar.add(child, arcname=child.name)
    return into


class SyncThread(threading.Thread):
    """Periodic incremental sync while training runs; errors are kept, not raised."""

    def __init__(self, syncer: Syncer, interval_s: float) -> None:
        super().__init__(name="local-sync", daemon=True)
        self.syncer = syncer
        self.interval_s = interval_s
        self.halt = threading.Event()
        self.last_error: StorageError | None = None

    def run(self) -> None:
        while not self.halt.wait(self.interval_s):
            try:
                self.syncer.sync()
                self.last_error = None
            except StorageError as exc:
                self.last_error = exc
