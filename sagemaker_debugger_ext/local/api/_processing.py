"""The Processing operations of ``serve``: request parameters to :class:`LocalProcessingClient` calls."""

from __future__ import annotations

from typing import Any

from ._processing_client import LocalProcessingClient

__all__ = ["PROCESSING_OPERATIONS", "call_processing"]

PROCESSING_OPERATIONS = (
    "CreateProcessingJob",
    "DescribeProcessingJob",
    "ListProcessingJobs",
    "StopProcessingJob",
)


def call_processing(client: LocalProcessingClient, operation: str, params: dict[str, Any]) -> dict[str, Any]:
    """Run one Processing operation; returns the response body."""
    if operation == "CreateProcessingJob":
        return client.create_processing_job(**params)
    if operation == "DescribeProcessingJob":
        return client.describe_processing_job(params["ProcessingJobName"])
    if operation == "StopProcessingJob":
        return client.stop_processing_job(params["ProcessingJobName"])
    kwargs = {k: v for k, v in params.items() if k in ("NameContains", "StatusEquals", "MaxResults")}
    return client.list_processing_jobs(**kwargs)
