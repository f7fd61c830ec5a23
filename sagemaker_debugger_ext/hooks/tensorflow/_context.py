"""The worker's place in a TensorFlow job, from ``TF_CONFIG`` (as SageMaker sets it).

``{"cluster": {"worker": [...], "chief": [...]}, "task": {"type": "worker", "index": 1}}``:
with a chief, the chief is rank 0 and worker ``i`` is rank ``i + 1``; without one, worker
``i`` is rank ``i``. The worker name stays ``worker_<rank>``. Without ``TF_CONFIG`` the
generic ``RANK``/``WORLD_SIZE`` rules apply.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ..._exceptions import HookConfigError, field_error_message
from .._context import TrainingContext

__all__ = ["TF_CONFIG_ENV", "context_from_environ"]

TF_CONFIG_ENV = "TF_CONFIG"


def _bad(raw: str, why: str) -> HookConfigError:
    return HookConfigError(field_error_message(f"${TF_CONFIG_ENV}", why, raw), field=TF_CONFIG_ENV, value=raw)


def context_from_environ(environ: Mapping[str, str]) -> TrainingContext:
    """The training context, rank and world size from ``TF_CONFIG`` when it names a task.

    Raises:
        HookConfigError: ``TF_CONFIG`` is not JSON or its task is not in its cluster.
    """
    base = TrainingContext.from_environ(environ)
    raw = environ.get(TF_CONFIG_ENV)
    if not raw:
        return base
    try:
        config = json.loads(raw)
    except ValueError:
        raise _bad(raw, "JSON with 'cluster' and 'task'") from None
    if not isinstance(config, dict):
        raise _bad(raw, "a JSON object with 'cluster' and 'task'")
    cluster, task = config.get("cluster") or {}, config.get("task") or {}
    if not isinstance(cluster, dict) or not isinstance(task, dict) or not task:
        return base
    chiefs = list(cluster.get("chief") or [])
    workers = list(cluster.get("worker") or [])
    kind, index = task.get("type"), task.get("index", 0)
    if not isinstance(index, int) or index < 0:
        raise _bad(raw, "a task index >= 0")
    if kind == "chief":
        rank = index
    elif kind == "worker":
        if index >= len(workers):
            raise _bad(raw, f"a worker index below {len(workers)} (the cluster's workers)")
        rank = len(chiefs) + index
    else:  # ps / evaluator: not a training worker; saves as its own name only with include_workers=all
        return TrainingContext(rank=len(chiefs) + len(workers), world_size=len(chiefs) + len(workers) + 1,
                               sagemaker_job=base.sagemaker_job, profiler_config_path=base.profiler_config_path,
                               host=base.host)  # fmt: skip
    world = max(len(chiefs) + len(workers), rank + 1)
    return TrainingContext(rank=rank, world_size=world, sagemaker_job=base.sagemaker_job,
                           profiler_config_path=base.profiler_config_path, host=base.host)  # fmt: skip
