"""``smdebug.core.sagemaker_utils``: is this process a SageMaker training job?"""

from __future__ import annotations

import os

from .._container_env import TRAINING_JOB_NAME_ENV

__all__ = ["is_sagemaker_job"]


def is_sagemaker_job() -> bool:
    """True inside a SageMaker (or local-mode) training job (``TRAINING_JOB_NAME`` is set)."""
    return bool(os.environ.get(TRAINING_JOB_NAME_ENV))
