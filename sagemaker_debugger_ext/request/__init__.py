"""Build and validate the Debugger part of a CreateTrainingJob request (pure functions).

* :func:`build_debugger_request` applies SDK v2's defaulting rules (default hook, union of
  collections in a deterministic order, profiler defaults, unsupported regions, rule
  images) and returns a :class:`DebuggerRequest`.
* :func:`validate_create_training_job` checks a whole request against botocore's
  SageMaker service model and raises one ``RequestValidationError`` naming every member
  path at fault.
* Path helpers derive ``<base>/<job>/debug-output`` etc.
"""

from __future__ import annotations

from ._debugger import (
    DebuggerRequest,
    build_debugger_request,
    checkpointing_disables_hook,
    merge_collections,
)
from ._paths import (
    artifacts_path,
    debugger_artifacts_path,
    profiler_artifacts_path,
    rule_output_path,
    tensorboard_artifacts_path,
)
from ._service_model import (
    create_training_job_shape,
    validate_create_training_job,
    validate_request,
)

__all__ = [
    "DebuggerRequest",
    "artifacts_path",
    "build_debugger_request",
    "checkpointing_disables_hook",
    "create_training_job_shape",
    "debugger_artifacts_path",
    "merge_collections",
    "profiler_artifacts_path",
    "rule_output_path",
    "tensorboard_artifacts_path",
    "validate_create_training_job",
    "validate_request",
]
