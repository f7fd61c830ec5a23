"""``sagemaker-debugger-ext serve``: the SageMaker training-job and Processing API of the local job store, on 127.0.0.1.

Jobs with ``ml.*`` instance types run on this machine (the type recorded), so a client written
for the cloud runs against it unchanged; S3 is whatever boto3 reaches (``AWS_ENDPOINT_URL_S3``
for an S3-compatible endpoint).
"""

from __future__ import annotations

import argparse

from .._exceptions import ConfigValueError, field_error_message
from ..local.api._client import LocalTrainingClient
from ..local.api._server import ApiServer

__all__ = ["HELP", "add_arguments", "run"]

HELP = (
    "serve Create/Describe/List/Stop/UpdateTrainingJob and Create/Describe/List/StopProcessingJob "
    "for local jobs on 127.0.0.1 (for boto3, the SDK and the AWS CLI)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``serve`` arguments."""
    parser.add_argument("--port", type=int, default=8943, help="TCP port on 127.0.0.1 (0: any free port; default 8943)")
    parser.add_argument("--region", default="us-east-1", help="region used in ARNs (default us-east-1)")


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; prints the endpoint URL first."""
    if not 0 <= args.port <= 65535:
        msg = field_error_message("--port", "an integer from 0 to 65535", args.port)
        raise ConfigValueError(msg, field="--port", value=args.port)
    client = LocalTrainingClient(region=args.region, settings={"CloudInstanceTypes": True})
    server = ApiServer(client, port=args.port)
    server.start()
    print(f"serving the SageMaker training-job API on {server.url}", flush=True)
    print(f"  aws sagemaker list-training-jobs --endpoint-url {server.url}", flush=True)
    print(f"  export AWS_ENDPOINT_URL_SAGEMAKER={server.url}", flush=True)
    try:
        server.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
