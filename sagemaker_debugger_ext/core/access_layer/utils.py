"""``smdebug.core.access_layer.utils``: the end-of-training marker of a trial."""

from __future__ import annotations

import os

from ...format import END_OF_JOB_FILE
from ...storage import open_storage
from ..sagemaker_utils import is_sagemaker_job

__all__ = ["has_training_ended", "training_has_ended"]


def has_training_ended(trial_prefix: str | os.PathLike[str]) -> bool:
    """Whether ``training_job_end.ts`` exists in the trial (local folder or ``s3://``)."""
    path = os.fspath(trial_prefix)
    if "://" not in path and not os.path.isdir(path):
        return False
    return open_storage(path).exists(END_OF_JOB_FILE)


def training_has_ended(trial_prefix: str | os.PathLike[str]) -> None:
    """Write ``training_job_end.ts`` (nothing inside a SageMaker job, where the platform does it)."""
    if is_sagemaker_job():
        return
    path = os.fspath(trial_prefix)
    if "://" not in path:
        os.makedirs(path, exist_ok=True)
    open_storage(path).write_bytes(END_OF_JOB_FILE, b"")
