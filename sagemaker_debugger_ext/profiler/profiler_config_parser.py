"""``smdebug.profiler.profiler_config_parser.ProfilerConfigParser``: is profiling on here?

Reads ``$SMPROFILER_CONFIG_PATH`` with :func:`~sagemaker_debugger_ext.profiler.read_profiler_config`.
A missing or unset file means profiling is off, as in smdebug.
"""

from __future__ import annotations

import os

from .._container_env import SMPROFILER_CONFIG_PATH_ENV
from ._config import ProfilerSettings, read_profiler_config

__all__ = ["ProfilerConfigParser"]


class ProfilerConfigParser:
    """smdebug's parser of the profiler config: ``profiling_enabled`` and the parsed ``config``.

    Raises:
        ProfilerError: the file exists but is not valid.
    """

    def __init__(self, config_path: str | os.PathLike[str] | None = None) -> None:
        path = config_path or os.environ.get(SMPROFILER_CONFIG_PATH_ENV)
        self.config_path = os.fspath(path) if path else None
        self.config: ProfilerSettings | None = None
        if self.config_path and os.path.isfile(self.config_path):
            self.config = read_profiler_config(self.config_path)
        self.profiling_enabled = self.config is not None and not self.config.disabled

    def load_config(self) -> None:
        """Re-read the file (smdebug re-reads it when it changes)."""
        self.__init__(self.config_path)  # type: ignore[misc]
