"""Estimator test harness: a moto-backed sagemaker Session whose CreateTrainingJob is captured.

A uniquely named module (not ``conftest``) so test files can import it by name.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from typing import Any

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
IMAGE = "123456789012.dkr.ecr.us-west-2.amazonaws.com/my-training:latest"
# What every test estimator is built with (with its session and the arguments under test).
ESTIMATOR_ARGS: dict[str, Any] = {
    "image_uri": IMAGE,
    "role": ROLE,
    "instance_count": 1,
    "instance_type": "ml.m5.xlarge",
}


class CapturingClient:
    """Wraps a real boto3 SageMaker client; records create/update calls instead of sending them."""

    def __init__(self, client: Any, forward: bool = False) -> None:
        self._client = client
        self._forward = forward
        self.created: list[dict[str, Any]] = []
        self.updated: list[dict[str, Any]] = []

    def create_training_job(self, **request: Any) -> dict[str, Any]:
        self.created.append(copy.deepcopy(request))
        if self._forward:
            return self._client.create_training_job(**request)
        return {"TrainingJobArn": f"arn:aws:sagemaker:us-west-2:123456789012:training-job/{request['TrainingJobName']}"}

    def update_training_job(self, **request: Any) -> dict[str, Any]:
        self.updated.append(copy.deepcopy(request))
        return {"TrainingJobArn": "arn"}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


@functools.cache
def _shared_loader() -> Any:
    """One botocore data loader per test process: it caches the (large) service models."""
    import botocore.loaders

    return botocore.loaders.create_loader()


def _botocore_session() -> Any:
    import botocore.session

    session = botocore.session.get_session()
    session.register_component("data_loader", _shared_loader())
    return session


def make_session(region: str = "us-west-2", forward: bool = False) -> Any:
    """A real ``sagemaker.Session`` on boto3 (under moto) with a capturing SageMaker client."""
    import boto3
    import sagemaker

    boto_session = boto3.Session(botocore_session=_botocore_session(), region_name=region)
    session = sagemaker.Session(boto_session=boto_session)
    session.sagemaker_client = CapturingClient(session.sagemaker_client, forward=forward)
    return session


def build_request(
    estimator_cls: type, kwargs: dict[str, Any], *, region: str = "us-west-2", job_name: str = "golden-x"
) -> dict[str, Any]:
    """Build an estimator and fit(wait=False); return the captured CreateTrainingJob request."""
    session = make_session(region)
    estimator = estimator_cls(**{**ESTIMATOR_ARGS, "sagemaker_session": session, **kwargs})
    estimator.fit(wait=False, job_name=job_name)
    (request,) = session.sagemaker_client.created
    return request


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TS = re.compile(r"DetailedProfilerProcessingJobConfig-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d-\d{3}")


def normalise(request: dict[str, Any]) -> dict[str, Any]:
    """Sort collections (order is hash-seed dependent in the SDK); mask uuids and timestamps."""
    text = json.dumps(request, sort_keys=True, default=str)
    text = _UUID.sub("<uuid>", text)
    text = _TS.sub("DetailedProfilerProcessingJobConfig-<ts>", text)
    out = json.loads(text)
    hook = out.get("DebugHookConfig")
    if hook and "CollectionConfigurations" in hook:
        hook["CollectionConfigurations"] = sorted(
            hook["CollectionConfigurations"], key=lambda c: json.dumps(c, sort_keys=True)
        )
    return out


@functools.cache
def _cached_sts_endpoint(region: str) -> str:
    import sagemaker.utils

    return str(sagemaker.utils.sts_regional_endpoint(region))
