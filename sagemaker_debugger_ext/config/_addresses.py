"""Output addresses: ``s3://bucket/...``, ``file://...`` or a plain local folder, nothing else.

A plain folder (absolute, ``~``, or relative) is resolved against the caller's folder when
it is given, as ``source_dir`` is, so it means the same thing in the detached job. Anything
else (``mybucket/path`` is a relative folder; ``s3:/x``, ``s3://`` without a bucket,
``gs://...``) is a :class:`ConfigValueError` naming the field.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ._checks import check_optional_str, value_error

__all__ = ["check_output_address", "resolve_output_address"]

_BUCKET = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]{0,254}$")
ALLOWED = "an s3://bucket/... URI, a file:// URI or a local folder path"


def check_output_address(field: str, value: Any, *, max_len: int = 1024) -> str | None:
    """Validate an optional output address; plain folders come back absolute. ``""`` passes (the default)."""
    text = check_optional_str(field, value, max_len=max_len)
    if not text:
        return text
    return resolve_output_address(field, text)


def resolve_output_address(field: str, text: str, base: str | os.PathLike[str] | None = None) -> str:
    """``text`` unchanged for s3:// and file:// URIs, a plain folder made absolute against ``base``."""
    if text.startswith("s3://"):
        bucket = text[len("s3://") :].split("/", 1)[0]
        if not _BUCKET.match(bucket):
            raise value_error(field, f"{ALLOWED}, with a bucket name after s3://", text)
        return text
    if text.startswith("file://"):
        if len(text) == len("file://"):
            raise value_error(field, f"{ALLOWED}; file:// needs a path", text)
        return text
    if ":" in text.split("/", 1)[0] or "://" in text:
        raise value_error(field, ALLOWED, text)
    path = Path(text).expanduser()
    return str(Path(base or Path.cwd()) / path) if not path.is_absolute() else str(path)
