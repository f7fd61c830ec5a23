"""SageMaker Debugger for SDK v3's ``ModelTrainer`` (needs ``sagemaker`` 3.x: ``pip install 'sagemaker-debugger-ext[sdk3]'``).

* :class:`ModelTrainer`: ``sagemaker.train.ModelTrainer`` with ``with_debugger(rules=...,
  debugger_hook_config=..., profiler_config=..., tensorboard_output_config=...,
  disable_profiler=...)``; the request's Debugger keys equal SDK v2's for the same configs.
  ``backend="self-hosted"`` runs the rules as SageMaker Processing jobs instead of Debugger's
  (docs/cloud.md).
* :func:`local_session`: a ``Session`` wired to ``sagemaker-debugger-ext serve``, so a
  ModelTrainer job runs on this machine with its Debugger, without Docker.
* :func:`rule_job_summary`: a job's rule statuses in the service's shape, whichever backend
  ran its rules (``TrainingJob.get()`` cannot show a self-hosted job's).

The Debugger keys are added in ModelTrainer's private ``_create_training_job_args``, so the
``sagemaker-train`` versions tested are pinned (the ``[sdk3]`` extra); another version
imports with a warning naming the tested range.
"""

from __future__ import annotations

import warnings

from .._sdk_major import TESTED_SAGEMAKER_TRAIN, installed_version, require_sdk, sagemaker_train_warning

require_sdk(3, "sagemaker_debugger_ext.train")

_warning = sagemaker_train_warning(installed_version("sagemaker-train"))
if _warning is not None:
    warnings.warn(_warning, UserWarning, stacklevel=2)

from ._local import local_session  # noqa: E402 - after the SDK check: it imports nothing of the SDK at import
from ._model_trainer import ModelTrainer  # noqa: E402 - imports sagemaker.train (v3)
from ._self_hosted import rule_job_summary  # noqa: E402

__all__ = ["TESTED_SAGEMAKER_TRAIN", "ModelTrainer", "local_session", "rule_job_summary"]
