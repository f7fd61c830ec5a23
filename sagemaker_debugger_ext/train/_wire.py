"""The Debugger keys of a ModelTrainer's CreateTrainingJob, on the wire exactly as SDK v2 sends them.

``ModelTrainer.train()`` sends its request through sagemaker-core's ``TrainingJob.create``,
whose shape serialiser drops every falsy member (``DisableProfiler: false``, ``{}``, ``[]``,
``0``) and whose shapes put members in their own order. So the request is fixed up where
botocore builds it: a ``before-parameter-build`` handler on the SageMaker client that
``TrainingJob.create`` uses puts back the Debugger keys built by this package's one request
builder (``request.build_debugger_request``), for the job name they were built for, once.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from typing import Any

__all__ = ["DEBUGGER_KEYS", "expect_request", "install", "shape_kwargs"]

#: the CreateTrainingJob keys this package builds, with sagemaker-core's parameter names
DEBUGGER_KEYS = {
    "DebugHookConfig": "debug_hook_config",
    "DebugRuleConfigurations": "debug_rule_configurations",
    "TensorBoardOutputConfig": "tensor_board_output_config",
    "ProfilerConfig": "profiler_config",
    "ProfilerRuleConfigurations": "profiler_rule_configurations",
}
# members whose values are string maps: their keys are data, never renamed
_MAPS = frozenset({"HookParameters", "CollectionParameters", "RuleParameters", "ProfilingParameters"})
_EVENT = "before-parameter-build.sagemaker.CreateTrainingJob"
_HANDLER_ID = "sagemaker_debugger_ext.train.debugger_keys"

_pending: dict[str, dict[str, Any]] = {}
_lock = threading.Lock()


def _snake(name: str) -> str:
    from sagemaker.core.utils.utils import pascal_to_snake

    return str(pascal_to_snake(name))


def _to_snake(value: Any) -> Any:
    if isinstance(value, list):
        return [_to_snake(item) for item in value]
    if isinstance(value, dict):
        return {_snake(key): (dict(item) if key in _MAPS else _to_snake(item)) for key, item in value.items()}
    return value


def shape_kwargs(keys: Mapping[str, Any]) -> dict[str, Any]:
    """The Debugger keys as ``TrainingJob.create`` keyword arguments (snake_case, shape-shaped dicts)."""
    return {DEBUGGER_KEYS[key]: _to_snake(value) for key, value in keys.items()}


def expect_request(job_name: str, keys: Mapping[str, Any]) -> None:
    """Send ``keys`` (PascalCase, as built) in the next CreateTrainingJob of ``job_name``."""
    with _lock:
        _pending[job_name] = copy.deepcopy(dict(keys))


def _restore(params: dict[str, Any], **_: Any) -> None:
    with _lock:
        keys = _pending.pop(str(params.get("TrainingJobName")), None)
    if keys is not None:
        params.update(keys)


def install(boto_session: Any) -> None:
    """Register the handler on the SageMaker client ``TrainingJob.create(session=boto_session)`` uses.

    sagemaker-core caches one client per boto3 session (``SageMakerClient``); the handler is
    registered once per client (a fixed ``unique_id``).
    """
    from sagemaker.core.utils.utils import SageMakerClient

    client = SageMakerClient(session=boto_session, region_name=None).get_client("sagemaker")
    client.meta.events.register(_EVENT, _restore, unique_id=_HANDLER_ID)
