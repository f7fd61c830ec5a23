"""A full disk during a local job: room kept for the final state, and a FailureReason that says so.

A process that dies on a full disk often cannot even log why. The supervisor keeps a small
reserve file in the job folder and gives it back when a state write fails, so the job's
final status (``Failed``, with the reason) can always be written; and it checks the free
space of the job folder and the output folder to name a full disk as the cause.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

__all__ = ["RESERVE_BYTES", "DiskReserve", "disk_full_reason", "local_output_folders"]

RESERVE_BYTES = 256 << 10
_LOW_BYTES = 64 << 10
_SIGNS = ("No space left on device", "[Errno 28]", "the disk is full", "Disk quota exceeded")


class DiskReserve:
    """A file of :data:`RESERVE_BYTES` set aside; :meth:`release` frees the room."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def take(self) -> None:
        """Create the reserve (silently skipped when even that does not fit)."""
        try:
            with open(self.path, "wb") as fh:
                fh.write(b"\0" * RESERVE_BYTES)
        except OSError:
            with contextlib.suppress(OSError):
                self.path.unlink()

    def release(self) -> bool:
        """Delete the reserve; whether there was one."""
        try:
            self.path.unlink()
        except OSError:
            return False
        return True


def _free_bytes(folder: Path) -> int | None:
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        return shutil.disk_usage(probe).free
    except OSError:
        return None


def disk_full_reason(failure: str, folders: list[Path]) -> str:
    """``failure``, led by "the disk is full" and where, when a full disk caused it."""
    if failure.startswith("ClientError: the disk is full"):
        return failure
    for folder in folders:
        free = _free_bytes(folder)
        if free is not None and free < _LOW_BYTES:
            return (
                f"ClientError: the disk is full: no space left on device under {folder} ({free} bytes free); {failure}"
            )
    if any(sign in failure for sign in _SIGNS):
        return f"ClientError: the disk is full (no space left on device); {failure}"
    return failure


def local_output_folders(*uris: object) -> list[Path]:
    """The local folders among output ``uris`` (``file://`` URIs and absolute paths)."""
    return [Path(u.removeprefix("file://")) for u in uris if isinstance(u, str) and u.startswith(("file://", "/"))]
