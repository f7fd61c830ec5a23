"""``--endpoint-url URL | --sagemaker``: a job described through SageMaker instead of the local store.

Shared by ``jobs describe`` and ``report``: one way to reach SageMaker (boto3's SageMaker
endpoint, ``$AWS_ENDPOINT_URL_SAGEMAKER`` or AWS, or the URL given, e.g. ``serve``'s), a
self-hosted job's rule statuses added in the service's shape as ``describe()`` adds them.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_sagemaker_options", "describe_on_sagemaker", "wants_sagemaker"]


def add_sagemaker_options(parser: argparse.ArgumentParser, *, what: str = "describe") -> None:
    """Add the mutually exclusive ``--endpoint-url URL`` and ``--sagemaker`` options."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--endpoint-url", metavar="URL", help=f"{what} through this SageMaker endpoint (e.g. `serve`'s), not the store"
    )
    where.add_argument(
        "--sagemaker", action="store_true", help=f"{what} through SageMaker ($AWS_ENDPOINT_URL_SAGEMAKER, else AWS)"
    )


def wants_sagemaker(args: argparse.Namespace) -> bool:
    """Whether the command was asked to go through SageMaker."""
    return bool(getattr(args, "endpoint_url", None) or getattr(args, "sagemaker", False))


def describe_on_sagemaker(name: str, endpoint_url: str | None, *, as_service: bool = False) -> dict[str, Any] | None:
    """DescribeTrainingJob through SageMaker, self-hosted rule statuses added; ``None`` after printing an error.

    With ``as_service``, also the hook's and the profiler's configs the self-hosted backend
    delivered, as the service would have recorded them (what the reports read).
    """
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    from ..cloud._self_hosted import service_shaped_description, with_rule_statuses

    session = boto3.Session()
    sagemaker_client = session.client("sagemaker", endpoint_url=endpoint_url)
    add = service_shaped_description if as_service else with_rule_statuses
    try:
        description = dict(sagemaker_client.describe_training_job(TrainingJobName=name))
        description.pop("ResponseMetadata", None)
        return add(description, sagemaker_client=sagemaker_client, s3_client=session.client("s3"))
    except (ClientError, BotoCoreError) as exc:
        print(f"error: training job {name!r}: {exc}", file=sys.stderr)
        return None
