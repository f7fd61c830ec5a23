"""``smdebug.core.utils``: the path and array helpers user scripts call."""

from __future__ import annotations

import contextlib
import os
from typing import Any

import numpy as np

from ..exceptions import ConfigValueError, SMDebugTypeError
from ..format._layout import COLLECTIONS_FOLDER
from ..storage._s3 import split_s3_uri

__all__ = ["get_path_to_collections", "is_s3", "make_numpy_array", "remove_file_if_exists"]


def is_s3(path: str) -> tuple[bool, str | None, str | None]:
    """``(True, bucket, key)`` for an ``s3://`` path, else ``(False, None, None)``.

    Splits with :func:`~sagemaker_debugger_ext.storage._s3.split_s3_uri`; where that refuses a URI
    with no bucket (``s3://``, ``s3:///key``), this answers as smdebug's does: ``(True, "", key)``.
    """
    if not path.startswith("s3://"):
        return False, None, None
    try:
        bucket, key = split_s3_uri(path)
    except ConfigValueError:
        return True, "", path[5:].lstrip("/")
    return True, bucket, key


def get_path_to_collections(directory: str | os.PathLike[str]) -> str:
    """``<directory>/collections/000000000/`` (with the trailing slash)."""
    return os.path.join(os.fspath(directory), COLLECTIONS_FOLDER)


def make_numpy_array(x: Any) -> np.ndarray:
    """``x`` as an ndarray: arrays as they are, scalars as one-element arrays, lists/tuples/dicts.

    Raises:
        SMDebugTypeError: any other type.
    """
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, (tuple, list, dict)):
        return np.array(x) if isinstance(x, dict) else np.asarray(x)
    msg = f"make_numpy_array does not support the type {type(x).__name__}"
    raise SMDebugTypeError(msg)


def remove_file_if_exists(file_path: str | os.PathLike[str]) -> None:
    """Remove ``file_path`` if it exists (smdebug's ``core.utils`` helper)."""
    with contextlib.suppress(FileNotFoundError):
        os.remove(file_path)
