"""``smdebug.core.locations``: where a step's event and index files live in a trial."""

from __future__ import annotations

import os

from ..format._layout import EVENTS_PREFIX, INDEX_PREFIX, INDEX_STEPS_PER_FOLDER, event_key, index_folder, index_key

__all__ = ["IndexFileLocationUtils", "TensorFileLocation"]


class TensorFileLocation:
    """The event file of (``step_num``, ``worker_name``)."""

    def __init__(self, step_num: int, worker_name: str) -> None:
        self.step_num = int(step_num)
        self.worker_name = worker_name

    def get_file_location(self, trial_dir: str = "") -> str:
        """``<trial_dir>/events/<step:012d>/<step:012d>_<worker>.tfevents``."""
        return os.path.join(trial_dir, event_key(self.step_num, self.worker_name))

    @staticmethod
    def get_dir(trial_dir: str) -> str:
        """``<trial_dir>/events``."""
        return os.path.join(trial_dir, EVENTS_PREFIX.rstrip("/"))


class IndexFileLocationUtils:
    """Index file paths: ``<trial>/index/<step // 1000:09d>/<step:012d>_<worker>.json``."""

    MAX_INDEX_FILE_NUM_IN_INDEX_PREFIX = INDEX_STEPS_PER_FOLDER

    @staticmethod
    def get_index_prefix_for_step(step_num: int) -> str:
        """The folder number of ``step_num``'s index file, zero-padded to 9 digits."""
        return index_folder(int(step_num))

    @staticmethod
    def next_index_prefix_for_step(step_num: int) -> str:
        """The folder after :meth:`get_index_prefix_for_step`."""
        return index_folder(int(step_num) + INDEX_STEPS_PER_FOLDER)

    @staticmethod
    def get_index_key_for_step(trial_prefix: str, step_num: int, worker_name: str) -> str:
        """The index file of (``step_num``, ``worker_name``) under ``trial_prefix``."""
        return os.path.join(trial_prefix, index_key(int(step_num), worker_name))

    @staticmethod
    def parse_step_from_index_file_name(index_file_name: str) -> int:
        """The step number at the start of an index file's name."""
        return int(os.path.basename(index_file_name).split("_")[0])

    @staticmethod
    def get_index_path(path: str) -> str:
        """``<path>/index``."""
        return os.path.join(path, INDEX_PREFIX.rstrip("/"))
