"""``file://``, plain paths and ``s3://`` behind one small interface.

Read side: :meth:`Storage.list` (sorted keys relative to the base, optionally after a
key, like S3's ``StartAfter``), :meth:`Storage.read`, :meth:`Storage.read_range`,
:meth:`Storage.exists`. Write side: ``write_bytes``, ``upload_file``, ``sync_dir``, each
store's own methods, built on the upload, sync and retry modules here.
:class:`MemoryStorage` is the in-memory fake for tests.

Modules: ``_base`` (the interface, range checks), ``_local``, ``_s3``, ``_memory`` (the
stores), ``_open`` (by URI; parallel reads), ``_write`` (uploads, atomic copies),
``_sync`` (folder sync), ``_retry`` (backoff for remote stores).
"""

from __future__ import annotations

# Names with "X as X" are the write side, re-exported for local mode (outside the curated __all__).
from ._base import MAX_RANGE as MAX_RANGE
from ._base import Storage
from ._local import LocalStorage
from ._memory import MemoryStorage
from ._open import open_storage, read_many
from ._retry import RetryPolicy as RetryPolicy
from ._retry import s3_client as s3_client
from ._retry import with_retries as with_retries
from ._s3 import S3Storage, split_s3_uri
from ._sync import changed_files as changed_files
from ._sync import sync_dir as sync_dir
from ._write import copy_file_atomic as copy_file_atomic
from ._write import local_upload_file as local_upload_file
from ._write import s3_upload_file as s3_upload_file
from ._write import s3_write_bytes as s3_write_bytes

__all__ = [
    "LocalStorage",
    "MemoryStorage",
    "S3Storage",
    "Storage",
    "open_storage",
    "read_many",
    "split_s3_uri",
]
