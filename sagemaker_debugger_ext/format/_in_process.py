"""The trial folders this process is writing, so that a reader here sees every finished step.

A hook hands each finished step to its :class:`~sagemaker_debugger_ext.format.BackgroundWriter`
and trains on; the step's files appear a moment later. smdebug wrote on the training thread,
so scripts (and smdebug's own tests) train, then ``create_trial(out_dir)`` in the same
process without ``close()`` and expect every step the training finished. On a loaded machine
"a moment" can be long. So a hook registers its writer here for its ``out_dir`` when it first
writes (:func:`register_writer`), and a reader of a local folder calls
:func:`flush_writers_under` before it lists the index: it waits until what this process's
writers were handed for that folder is on disk. Nothing changes for steps nobody reads: the
training thread never waits for it, and a process without a reader never flushes.

This is process-wide state by nature (the reader and the hook do not know each other); it
holds weak references only, so a dropped hook's writer leaves the table with it.
"""

from __future__ import annotations

import os
import threading
import weakref

from .._exceptions import StorageError
from ._background import BackgroundWriter

__all__ = ["flush_writers_under", "register_writer", "unregister_writer"]

_LOCK = threading.Lock()
# real path of an out_dir -> the writers writing there (weak: a dropped hook leaves by itself)
_WRITERS: dict[str, weakref.WeakSet[BackgroundWriter]] = {}


def _key(folder: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(folder))


def register_writer(folder: str | os.PathLike[str], writer: BackgroundWriter) -> None:
    """Record that ``writer`` writes the trial in ``folder`` (until :func:`unregister_writer`)."""
    with _LOCK:
        _WRITERS.setdefault(_key(folder), weakref.WeakSet()).add(writer)


def unregister_writer(folder: str | os.PathLike[str], writer: BackgroundWriter) -> None:
    """Forget ``writer`` for ``folder`` (idempotent)."""
    key = _key(folder)
    with _LOCK:
        writers = _WRITERS.get(key)
        if writers is not None:
            writers.discard(writer)
            if not writers:
                del _WRITERS[key]


def flush_writers_under(folder: str | os.PathLike[str]) -> int:
    """Wait until every write this process's writers were handed for ``folder`` (or a folder
    inside it) is on disk; returns how many writers were flushed.

    A writer's own failure is not raised here: the hook that owns it raises it at its next
    step or at ``close()``, and the reader sees what was written.
    """
    if not _WRITERS:  # the common case, a reader with no hook in its process: one check
        return 0
    root = _key(folder)
    with _LOCK:
        writers = [w for key, ws in _WRITERS.items() if key == root or key.startswith(root + os.sep) for w in ws]
    for writer in writers:
        try:
            writer.flush()
        except StorageError:
            continue  # the hook reports it (see above)
    return len(writers)
