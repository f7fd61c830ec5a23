"""Syncing a local folder to a store: changed files only, tensors before the index files that name them,
the end-of-training marker after everything else."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._exceptions import (
    StorageError,
)
from ..format._layout import END_OF_JOB_FILE, event_key, parse_index_key

__all__ = ["changed_files", "sync_dir"]


def changed_files(local_dir: Path, manifest: dict[str, tuple[int, int]]) -> Iterator[tuple[str, Path, tuple[int, int]]]:
    """Files under ``local_dir`` that are new or changed since ``manifest`` (key -> (size, mtime_ns)).

    Dot-files and ``*.tmp`` / ``*.part`` files (being written) are skipped. Keys use ``/``.
    """
    for dirpath, dirnames, filenames in os.walk(local_dir):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fname in sorted(filenames):
            if fname.startswith(".") or fname.endswith((".tmp", ".part")):
                continue
            path = Path(dirpath) / fname
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            key = path.relative_to(local_dir).as_posix()
            sig = (st.st_size, st.st_mtime_ns)
            if manifest.get(key) != sig:
                yield key, path, sig


def sync_dir(storage: Any, local_dir: Path, prefix: str = "") -> int:
    """Upload the files of ``local_dir`` that are new or changed since the last call.

    ``storage`` is a Storage with ``upload_file``; what was uploaded is remembered on it
    (per local folder), so repeated calls are incremental. Returns the number of files.
    """
    manifests: dict[str, dict[str, tuple[int, int]]] = storage.__dict__.setdefault("_sync_manifests", {})
    manifest = manifests.setdefault(f"{Path(local_dir).resolve()}|{prefix}", {})
    count = 0
    ordered = _steps_in_order(list(changed_files(Path(local_dir), manifest)))
    # the end marker last: a reader that sees it (a rule job) finds every file written before it
    ordered.sort(key=lambda item: item[0].rsplit("/", 1)[-1] == END_OF_JOB_FILE)
    for key, path, sig in ordered:
        event = _event_of_index(key)
        if event is not None and event not in manifest and (Path(local_dir) / event).exists():
            continue  # an index goes after its event file (it appeared while we walked)
        dest_key = f"{prefix.rstrip('/')}/{key}" if prefix else key
        try:
            storage.upload_file(path, dest_key)
        except StorageError:
            if path.exists():
                raise
            continue  # removed while we walked (a writer's temporary file)
        manifest[key] = sig
        count += 1
    return count


def _steps_in_order(items: list[tuple[str, Path, tuple[int, int]]]) -> list[tuple[str, Path, tuple[int, int]]]:
    """Each index file right after its event file (an index whose event went earlier, first):
    a destination that fills up part way holds whole steps (event + index), in step order."""
    by_event: dict[str, tuple[str, Path, tuple[int, int]]] = {}
    for item in items:
        event = _event_of_index(item[0])
        if event is not None:
            by_event[event] = item
    keys = {item[0] for item in items}
    paired = {item[0] for event, item in by_event.items() if event in keys}
    # An index whose event file went in an earlier pass goes first: a pass that failed between
    # a step's event and its index retries that index before any later step, so the
    # destination stays a prefix of whole steps.
    out = [item for item in by_event.values() if item[0] not in paired]
    first = {item[0] for item in out}
    for item in items:
        if item[0] in paired or item[0] in first:
            continue
        out.append(item)
        follower = by_event.get(item[0])
        if follower is not None and follower[0] in paired:
            out.append(follower)
    return out


def _event_of_index(key: str) -> str | None:
    """The event file of a trial's index file ``key`` (any folder depth), else None."""
    if not key.endswith(".json") or "index/" not in key:
        return None
    parsed = parse_index_key(key)
    if parsed is None:
        return None
    return key[: key.rindex("index/")] + event_key(*parsed)
