"""The process's place in the job: rank, world size, worker name, SageMaker-ness.

Read once, at hook construction (the boundary), from ``torch.distributed`` when it is
initialised, else from the launcher's ``RANK``/``WORLD_SIZE`` variables.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Mapping

import attrs

from .._container_env import (
    RANK_ENV,
    SM_CURRENT_HOST,
    SM_OUTPUT_DIR,
    SMPROFILER_CONFIG_PATH_ENV,
    WORLD_SIZE_ENV,
    is_sagemaker_job,
)
from .._exceptions import HookConfigError, field_error_message

__all__ = ["TrainingContext"]


def _env_int(environ: Mapping[str, str], name: str, default: int, minimum: int) -> int:
    raw = environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        msg = field_error_message(f"${name}", f"an integer >= {minimum}", raw)
        raise HookConfigError(msg, field=name, value=raw)
    return value


def _torch_dist() -> tuple[int, int] | None:
    """(rank, world size) from torch.distributed, only when torch is already imported."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None
    return int(dist.get_rank()), int(dist.get_world_size())


@attrs.frozen(kw_only=True)
class TrainingContext:
    """Facts about this training process the hook needs."""

    rank: int = 0
    world_size: int = 1
    sagemaker_job: bool = False
    profiler_config_path: str | None = None
    host: str = "algo-1"
    #: the job's output folder (``$SM_OUTPUT_DIR``), where a failing job leaves ``failure``
    output_dir: str | None = None

    @property
    def worker(self) -> str:
        """``worker_<rank>``."""
        return f"worker_{self.rank}"

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> TrainingContext:
        """Build from the environment (and torch.distributed when initialised)."""
        dist = _torch_dist()
        if dist is not None:
            rank, world = dist
        else:
            rank = _env_int(environ, RANK_ENV, 0, 0)
            world = _env_int(environ, WORLD_SIZE_ENV, 1, 1)
        return cls(
            rank=rank,
            world_size=max(world, rank + 1),
            sagemaker_job=is_sagemaker_job(environ),
            profiler_config_path=environ.get(SMPROFILER_CONFIG_PATH_ENV) or None,
            host=environ.get(SM_CURRENT_HOST) or socket.gethostname() or "algo-1",
            output_dir=environ.get(SM_OUTPUT_DIR) or None,
        )
