"""``smdebug.core.access_layer.s3handler``: delete every object under an S3 prefix.

Only :class:`DeleteRequest` and ``S3Handler.delete_prefix`` (what cleanup code calls);
reading and listing trials goes through :mod:`sagemaker_debugger_ext.storage`.
"""

from __future__ import annotations

from ...storage import S3Storage

__all__ = ["DeleteRequest", "S3Handler"]


class DeleteRequest:
    """Delete the objects under ``Prefix`` in ``Bucket``."""

    def __init__(self, Bucket: str, Prefix: str) -> None:
        self.bucket = Bucket
        self.prefix = Prefix


class S3Handler:
    """smdebug's S3 helper; only :meth:`delete_prefix` is offered."""

    @staticmethod
    def delete_prefix(path: str | None = None, delete_request: DeleteRequest | None = None) -> None:
        """Delete every object under ``s3://bucket/prefix`` (``path``) or ``delete_request``."""
        if delete_request is not None:
            path = f"s3://{delete_request.bucket}/{delete_request.prefix}"
        if path is None:
            return
        S3Storage(path).delete_all()
