"""``Estimator``: ``sagemaker.estimator.Estimator`` (v2) with our Debugger configs and fixes.

Same constructor. Differences from the SDK (see docs/differences.md): the user's config
objects are never modified; collection order is deterministic; artifact path helpers return
``None`` instead of crashing; a bare ``Email``/``SMS`` action works; ``attach()`` restores
the Debugger, TensorBoard and profiler configs; every request is validated against
botocore's service model before it is sent; ``training_job_request()`` returns the request
without submitting anything; ``debugger_backend="self-hosted"`` runs Debugger without the
Debugger service (docs/cloud.md).
"""

from __future__ import annotations

from .._sdk_major import installed_sdk_major, require_sdk

if installed_sdk_major() != 2:  # checked before the SDK is imported: SDK v3 warns, then refuses v2 modules
    require_sdk(2, "sagemaker_debugger_ext.Estimator")
from ._estimator import Estimator

__all__ = ["Estimator"]
