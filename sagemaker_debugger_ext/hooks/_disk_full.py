"""A hook that fails on a full disk says so where the platform looks, not only in the log.

The training's log lives on the disk that filled, so the traceback naming the cause is often
lost, and the job's FailureReason would read ``ErrorMessage ""``. When the hook's own write
fails with :class:`~sagemaker_debugger_ext.exceptions.DiskFullError` (its message names the
file and the bytes free), the hook writes that message to the job's ``failure`` file
(``$SM_OUTPUT_DIR/failure``, the SageMaker contract the local platform and SageMaker read)
before the error reaches the training script. The failed write's temporary file is gone by
then, so this small file usually fits; if it does not, nothing more can be done.
"""

from __future__ import annotations

import contextlib
import os

from .._container_env import FAILURE_FILE_NAME
from .._exceptions import DiskFullError
from ._context import TrainingContext

__all__ = ["report_disk_full"]


def _disk_full_in(exc: BaseException | None) -> DiskFullError | None:
    seen = 0
    while exc is not None and seen < 8:  # the error, or what it was raised from (BackgroundWriter)
        if isinstance(exc, DiskFullError):
            return exc
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def report_disk_full(exc: BaseException, context: TrainingContext) -> bool:
    """Write ``exc``'s full-disk message to the job's failure file (unless the job has one
    or runs outside a SageMaker-style job); returns whether it was written."""
    full = _disk_full_in(exc)
    if full is None or context.output_dir is None:
        return False
    path = os.path.join(context.output_dir, FAILURE_FILE_NAME)
    if os.path.exists(path):  # the script's own reason wins, as on SageMaker
        return False
    with contextlib.suppress(OSError):
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(f"DiskFullError: {full}\n")
        return True
    return False
