"""Helpers for the floors' worker threads."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any


def as_hook_writer() -> None:
    """Give the calling thread the niceness the hook's writer thread runs at (a floor does
    what the hook does, under the same conditions)."""
    from sagemaker_debugger_ext.format._background import lower_thread_priority
    from sagemaker_debugger_ext.hooks._json_config import writer_nice

    lower_thread_priority(writer_nice(os.environ))


def write_as_hook(path: os.PathLike[str] | str, arrays: Sequence[Any]) -> None:
    """Write ``arrays`` back to back to the new file ``path`` as the hook writes an event file
    (uncached where the hook's is, see ``format/_files.py``), without its temporary name."""
    from sagemaker_debugger_ext.format._files import _byte_views, _write_views
    from sagemaker_debugger_ext.hooks._json_config import writer_uncached

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        _write_views(fd, _byte_views(arrays), uncached=writer_uncached(os.environ))
    finally:
        os.close(fd)
