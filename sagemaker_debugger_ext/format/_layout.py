"""Trial folder layout (docs/format.md) and the path guard for names from users or files."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .._container_env import TRAINING_END_MARKER
from .._exceptions import ConfigValueError, PathEscapeError, field_error_message

__all__ = [
    "COLLECTIONS_FOLDER",
    "COLLECTIONS_PREFIX",
    "END_OF_JOB_FILE",
    "EVENTS_PREFIX",
    "INDEX_PREFIX",
    "INDEX_STEPS_PER_FOLDER",
    "check_name",
    "check_step",
    "collections_key",
    "event_key",
    "index_folder",
    "index_key",
    "parse_collections_key",
    "parse_index_key",
    "safe_join",
]

EVENTS_PREFIX = "events/"
INDEX_PREFIX = "index/"
COLLECTIONS_PREFIX = "collections/"
COLLECTIONS_FOLDER = COLLECTIONS_PREFIX + "000000000/"  # every worker's collections JSON (smdebug's layout)
END_OF_JOB_FILE = TRAINING_END_MARKER  # one name for the file: the containers' and the trials'
INDEX_STEPS_PER_FOLDER = 1000  # index files of steps [1000 k, 1000 k + 999] share folder k

_INDEX_RE = re.compile(r"(?:^|/)index/(\d{9})/(\d{12})_([^/]+)\.json$")
_NOT_IN_NAMES = re.compile(r"[/\\\0]")  # a separator or NUL
_COLLECTIONS_RE = re.compile(r"(?:^|/)collections/\d{9}/([^/]+)_collections\.json$")


def valid_name(name: object) -> bool:
    """Whether ``name`` is a worker/step name the writer accepts (see :func:`check_name`)."""
    return isinstance(name, str) and bool(name) and name not in {".", ".."} and _NOT_IN_NAMES.search(name) is None


def check_name(field: str, name: str) -> str:
    """Return ``name`` if it is safe as ONE path component, else raise PathEscapeError.

    Worker names, step folder names and collection file names must not contain ``/``,
    ``\\`` or NUL, and must not be empty, ``.`` or ``..``.
    """
    if not valid_name(name):
        msg = field_error_message(field, "a non-empty name without '/', '\\\\', NUL, '.' or '..'", name)
        raise PathEscapeError(msg, name=str(name))
    return name


def check_step(field: str, step: object) -> int:
    """Return ``step`` if it is a non-negative int (bools refused)."""
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise ConfigValueError(field_error_message(field, "a non-negative int", step), field=field, value=step)
    return step


def safe_join(root: str | os.PathLike[str], *parts: str) -> Path:
    """Join ``parts`` under ``root``, refusing any result outside ``root``.

    Parts may contain ``/`` separators (relative keys such as ``events/000/x.tfevents``),
    but no component may be ``..``, empty-absolute or contain NUL, and symlink-free
    lexical normalisation must stay below ``root``.

    Raises:
        PathEscapeError: a part is absolute, contains ``..`` or NUL, or escapes ``root``.
    """
    base = Path(os.path.abspath(os.fspath(root)))
    rel: list[str] = []
    for part in parts:
        if not isinstance(part, str) or "\0" in part or part.startswith(("/", "\\")) or os.path.isabs(part):
            msg = field_error_message("path part", "a relative name inside the root", part)
            raise PathEscapeError(msg, name=str(part), root=str(base))
        for comp in part.replace("\\", "/").split("/"):
            if comp == "..":
                msg = field_error_message("path part", "a name without '..' components", part)
                raise PathEscapeError(msg, name=part, root=str(base))
            if comp and comp != ".":
                rel.append(comp)
    joined = Path(os.path.normpath(base.joinpath(*rel))) if rel else base
    if joined != base and base not in joined.parents:
        msg = field_error_message("path", f"inside {str(base)!r}", str(joined))
        raise PathEscapeError(msg, name="/".join(parts), root=str(base))
    return joined


def event_key(step: int, worker: str) -> str:
    """Return the trial-relative key of the event file of (``step``, ``worker``)."""
    return f"events/{step:012d}/{step:012d}_{worker}.tfevents"


def index_folder(step: int) -> str:
    """Return the zero-padded folder number (9 digits) of ``step``'s index files."""
    return f"{step // INDEX_STEPS_PER_FOLDER:09d}"


def index_key(step: int, worker: str) -> str:
    """Return the trial-relative key of the index file of (``step``, ``worker``)."""
    return f"index/{index_folder(step)}/{step:012d}_{worker}.json"


def collections_key(worker: str) -> str:
    """Return the trial-relative key of ``worker``'s collections JSON."""
    return f"{COLLECTIONS_FOLDER}{worker}_collections.json"


def parse_index_key(key: str) -> tuple[int, str] | None:
    """Return ``(step, worker)`` of an index key, or None if ``key`` is not one.

    Only the writer's own names count: the folder must be ``step // 1000`` and the worker
    a name :func:`check_name` accepts, so a stray file cannot pose as another step's index.
    """
    m = _INDEX_RE.search(key)
    if m is None:
        return None
    step, worker = int(m.group(2)), m.group(3)
    if m.group(1) != index_folder(step) or not valid_name(worker):
        return None
    return step, worker


def parse_collections_key(key: str) -> str | None:
    """Return the worker name of a collections key, or None if ``key`` is not one."""
    m = _COLLECTIONS_RE.search(key)
    return m.group(1) if m and valid_name(m.group(1)) else None
