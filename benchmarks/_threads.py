"""Helpers for the floors' worker threads."""

from __future__ import annotations

import os


def as_hook_writer() -> None:
    """Give the calling thread the niceness the hook's writer thread runs at (a floor does
    what the hook does, under the same conditions)."""
    from sagemaker_debugger_ext.format._background import lower_thread_priority
    from sagemaker_debugger_ext.hooks._json_config import writer_nice

    lower_thread_priority(writer_nice(os.environ))
