"""``smdebug.core.sagemaker_utils``: is this process a SageMaker training job?"""

from __future__ import annotations

from .._container_env import is_sagemaker_job

__all__ = ["is_sagemaker_job"]
