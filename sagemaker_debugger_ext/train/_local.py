"""An SDK v3 ``Session`` wired to ``sagemaker-debugger-ext serve``: ModelTrainer jobs run on this machine.

``ModelTrainer``'s own local mode (``Mode.LOCAL_CONTAINER``) needs Docker and drops the
Debugger. With ``sagemaker_session=local_session()`` a ModelTrainer (ours or the SDK's) sends
its CreateTrainingJob to the package's local SageMaker API instead, which runs the job with
the hook, every rule, the profiler and the artifacts as SageMaker would. Offline, SDK v3
also needs: no IAM role validation (``SAGEMAKER_VALIDATE_ROLE=false``), an S3 endpoint for
the staged code (moto's server, MinIO, LocalStack or real S3) and a default bucket name
(no STS call); and ``train(logs=True)`` must not read CloudWatch Logs (our ``ModelTrainer``
prints the job's logs from the local job store).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from ..local.api._client import TERMINAL_STATUSES
from ..local.caller._logs import LogFollower
from ..local.store._job_store import JobStore

__all__ = ["DEFAULT_ENDPOINT", "is_local_session", "local_session", "wait_locally"]

#: where ``sagemaker-debugger-ext serve`` listens by default
DEFAULT_ENDPOINT = "http://127.0.0.1:8943"
_MARK = "_sagemaker_debugger_ext_store"
_LOCAL_CREDENTIALS = {"aws_access_key_id": "local", "aws_secret_access_key": "local"}  # serve checks none


def local_session(
    endpoint_url: str | None = None,
    *,
    s3_endpoint_url: str | None = None,
    region: str = "us-east-1",
    default_bucket: str = "sagemaker-local",
    job_store: str | Path | None = None,
) -> Any:
    """Return a ``sagemaker.core.helper.session_helper.Session`` whose SageMaker calls go to ``serve``.

    Args:
        endpoint_url: the local API (default ``$AWS_ENDPOINT_URL_SAGEMAKER``, else
            ``http://127.0.0.1:8943``, ``serve``'s default port).
        s3_endpoint_url: S3 for the staged code and the outputs (default
            ``$AWS_ENDPOINT_URL_S3`` / ``$AWS_ENDPOINT_URL``, else AWS).
        region: region of the session (ARNs, rule images).
        default_bucket: the session's default bucket (created if missing; no STS lookup).
        job_store: the job store ``serve`` uses, to print logs while waiting (default
            ``$SAGEMAKER_DEBUGGER_EXT_HOME`` or ``~/.sagemaker-debugger-ext``).

    Sets ``SAGEMAKER_VALIDATE_ROLE=false`` in this process unless it is set: role
    validation calls IAM, which a local job does not use.
    """
    import boto3
    from sagemaker.core.helper.session_helper import Session
    from sagemaker.core.utils.utils import SageMakerClient

    os.environ.setdefault("SAGEMAKER_VALIDATE_ROLE", "false")
    sagemaker_url = endpoint_url or os.environ.get("AWS_ENDPOINT_URL_SAGEMAKER") or DEFAULT_ENDPOINT
    s3_url = s3_endpoint_url or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    boto_session = boto3.Session(region_name=region)
    if boto_session.get_credentials() is None:
        boto_session = boto3.Session(region_name=region, **_LOCAL_CREDENTIALS)
    client = boto_session.client("sagemaker", endpoint_url=sagemaker_url)
    # sagemaker-core's resources (TrainingJob.create/get/refresh) take their client from this cache
    SageMakerClient(session=boto_session, region_name=None).sagemaker_client = client
    session = Session(boto_session=boto_session, sagemaker_client=client, default_bucket=default_bucket)
    session.s3_client = boto_session.client("s3", endpoint_url=s3_url)
    session.s3_resource = boto_session.resource("s3", endpoint_url=s3_url)
    store = JobStore(Path(job_store).expanduser().resolve()) if job_store else JobStore.from_environ()
    setattr(session, _MARK, store)
    return session


def is_local_session(session: Any) -> bool:
    """Whether ``session`` came from :func:`local_session`."""
    return isinstance(getattr(session, _MARK, None), JobStore)


def wait_locally(job: Any, session: Any, *, poll_s: float = 0.5, out: TextIO | None = None) -> None:
    """Wait for ``job`` (a sagemaker-core ``TrainingJob``) through the local API, printing its logs.

    Logs come from the job store when this machine holds it (``serve`` runs here); otherwise
    only the status is polled. Never calls CloudWatch Logs.

    Raises:
        FailedStatusError: the job Failed (as ``TrainingJob.wait`` raises).
    """
    from sagemaker.core.utils.exceptions import FailedStatusError

    store: JobStore = getattr(session, _MARK)
    name = str(job.training_job_name)
    follower = None
    if store.exists(name):
        count = int(getattr(job.resource_config, "instance_count", 1) or 1)
        hosts = [f"algo-{i + 1}" for i in range(count)]
        follower = LogFollower(store.paths(name), hosts=hosts, include_rules=True, out=out or sys.stdout)
    while True:
        job.refresh()
        if follower is not None:
            follower.pump()
        if job.training_job_status in TERMINAL_STATUSES:
            break
        time.sleep(poll_s)  # polling the job's status, not synchronisation
    if follower is not None:
        follower.pump(final=True)
    if job.training_job_status == "Failed":
        raise FailedStatusError(resource_type="TrainingJob", status="Failed", reason=job.failure_reason)
