"""smdebug's trial classes ``LocalTrial`` and ``S3Trial``, with their constructors.

Both are :class:`~sagemaker_debugger_ext.trials.Trial` s opened like
:func:`~sagemaker_debugger_ext.trials.create_trial` opens them; prefer ``create_trial``.
"""

from __future__ import annotations

import os

from ..storage import LocalStorage, S3Storage
from ._trial import Trial

__all__ = ["LocalTrial", "S3Trial"]


class LocalTrial(Trial):
    """``LocalTrial(name, dirname, range_steps=None, ...)``: the trial in a local folder.

    ``parallel``, ``check``, ``index_mode`` and ``cache`` are accepted and ignored.

    Raises:
        StorageNotFoundError: the folder does not exist.
        MissingCollectionFiles: no collections files appeared.
    """

    def __init__(
        self,
        name: str,
        dirname: str | os.PathLike[str],
        range_steps: tuple[int, int] | None = None,
        parallel: bool = True,
        check: bool = False,
        index_mode: bool = True,
        cache: bool = False,
    ) -> None:
        self.trial_dir = os.path.expanduser(os.fspath(dirname))
        super().__init__(LocalStorage(self.trial_dir), name=name, range_steps=range_steps)
        self._load()


class S3Trial(Trial):
    """``S3Trial(name, bucket_name, prefix_name, range_steps=None, ...)``: the trial at ``s3://bucket/prefix``.

    ``check``, ``index_mode`` and ``cache`` are accepted and ignored.

    Raises:
        StorageNotFoundError: the bucket does not exist.
        MissingCollectionFiles: no collections files appeared.
    """

    def __init__(
        self,
        name: str,
        bucket_name: str,
        prefix_name: str,
        range_steps: tuple[int, int] | None = None,
        check: bool = False,
        index_mode: bool = True,
        cache: bool = False,
    ) -> None:
        self.bucket_name = bucket_name
        self.prefix_name = prefix_name
        super().__init__(S3Storage(f"s3://{bucket_name}/{prefix_name}"), name=name, range_steps=range_steps)
        self._load()
