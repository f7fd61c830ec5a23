"""The training-job part of the SageMaker API, served over HTTP on 127.0.0.1 from the local job store.

``sagemaker-debugger-ext serve`` runs it; a local job with event handlers starts one for its
handlers. It speaks the service's own protocol (AWS JSON 1.1: ``POST /`` with
``X-Amz-Target: SageMaker.<Operation>``), so unmodified boto3 code and the AWS CLI work
against it with ``--endpoint-url`` or ``AWS_ENDPOINT_URL_SAGEMAKER``. Requests are checked
against botocore's service model before anything runs; errors come back in the service's shape
(``{"__type": ..., "message": ...}``) with the codes boto3 users catch
(``ValidationException``, ``ResourceInUse``; an unknown job is a ``ValidationException``, as
the real service answers). It serves the training-job operations and the Processing ones
(``_processing``); ``ml.*`` instance types run on this machine, the type recorded. No
credentials are checked: the server binds to the loopback interface only.

Werkzeug (a well-kept WSGI toolkit) serves the HTTP; this module only maps operations.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import threading
from collections.abc import Callable, Iterable
from typing import Any

from werkzeug.serving import BaseWSGIServer, make_server
from werkzeug.wrappers import Request, Response

from ..._exceptions import (
    JobAlreadyExistsError,
    JobNotFoundError,
    LocalJobInputError,
    RequestValidationError,
)
from ._client import TERMINAL_STATUSES, LocalTrainingClient
from ._describe import training_job_arn
from ._processing import PROCESSING_OPERATIONS, call_processing
from ._processing_client import LocalProcessingClient

__all__ = ["LOOPBACK", "OPERATIONS", "ApiServer", "SageMakerApi"]

LOOPBACK = "127.0.0.1"
OPERATIONS = (
    "CreateTrainingJob",
    "DescribeTrainingJob",
    "ListTrainingJobs",
    "StopTrainingJob",
    "UpdateTrainingJob",
    *PROCESSING_OPERATIONS,
)
_CONTENT_TYPE = "application/x-amz-json-1.1"
_TRAINING_NAME_TAKEN = (
    "Training job names must be unique within an AWS account and region, "
    "and a training job with this name already exists"
)


@functools.cache
def _operation_model(name: str) -> Any:
    import botocore.session  # botocore's models: loaded when the server answers its first request

    return botocore.session.get_session().get_service_model("sagemaker").operation_model(name)


def _json_default(value: Any) -> Any:
    if isinstance(value, _dt.datetime):
        return value.timestamp()  # the JSON protocol's timestamps: epoch seconds
    msg = f"cannot serialise {type(value).__name__}"
    raise TypeError(msg)


def _error(status: int, code: str, message: str) -> Response:
    body = json.dumps({"__type": code, "message": message})
    return Response(body, status=status, content_type=_CONTENT_TYPE, headers={"x-amzn-ErrorType": code})


class SageMakerApi:
    """The WSGI application: a local training client and a processing client behind :data:`OPERATIONS`."""

    def __init__(self, client: LocalTrainingClient, processing: LocalProcessingClient | None = None) -> None:
        self.client = client
        self.processing = processing or LocalProcessingClient(client.store, region=client.region)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        response = self.handle(Request(environ))
        return response(environ, start_response)

    def handle(self, request: Request) -> Response:
        """Answer one HTTP request."""
        target = request.headers.get("X-Amz-Target", "")
        service, _, operation = target.partition(".")
        if request.method != "POST" or service != "SageMaker":
            return _error(
                400,
                "UnknownOperationException",
                f"expected POST with X-Amz-Target SageMaker.<Operation> (got {request.method} {target!r})",
            )
        if operation not in OPERATIONS:
            return _error(
                400,
                "UnknownOperationException",
                f"this local endpoint serves {', '.join(OPERATIONS)} (got {operation!r})",
            )
        try:
            params = json.loads(request.get_data() or b"{}")
        except json.JSONDecodeError as exc:
            return _error(400, "SerializationException", f"the request body is not JSON: {exc}")
        if not isinstance(params, dict):
            return _error(400, "SerializationException", "the request body must be a JSON object")
        problems = self._problems(operation, params)
        if problems:
            count = "1 validation error" if len(problems) == 1 else f"{len(problems)} validation errors"
            return _error(400, "ValidationException", f"{count} detected: " + "; ".join(problems))  # the service's
        try:
            result = self._call(operation, params)
        except JobNotFoundError as exc:  # the service answers ValidationException (boto3 issue 2808)
            message = str(exc) if operation in PROCESSING_OPERATIONS else "Requested resource not found."
            return _error(400, "ValidationException", message)
        except JobAlreadyExistsError as exc:
            if operation == "CreateTrainingJob":
                arn = training_job_arn(self.client.region, str(params.get("TrainingJobName")))
                return _error(400, "ResourceInUse", f"{_TRAINING_NAME_TAKEN} ({arn})")
            return _error(400, "ResourceInUse", str(exc))
        except (LocalJobInputError, RequestValidationError, ValueError, TypeError) as exc:
            return _error(400, "ValidationException", str(exc))
        except Exception as exc:  # noqa: BLE001 - the server's boundary: a failure is an InternalFailure answer
            return _error(500, "InternalFailure", f"{type(exc).__name__}: {exc}")
        return Response(json.dumps(result, default=_json_default), status=200, content_type=_CONTENT_TYPE)

    @staticmethod
    def _problems(operation: str, params: dict[str, Any]) -> list[str]:
        from botocore.validate import ParamValidator

        report = ParamValidator().validate(params, _operation_model(operation).input_shape)
        if not report.has_errors():
            return []
        return [line.strip() for line in report.generate_report().splitlines() if line.strip()]

    def _call(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        if operation in PROCESSING_OPERATIONS:
            return call_processing(self.processing, operation, params)
        if operation == "CreateTrainingJob":
            return self.client.create_training_job(**params)
        if operation == "DescribeTrainingJob":
            return self.client.describe_training_job(params["TrainingJobName"])
        if operation == "StopTrainingJob":
            status = self.client.describe_training_job(params["TrainingJobName"])["TrainingJobStatus"]
            if status in TERMINAL_STATUSES:
                msg = f"The request was rejected because the training job is in status {status}."
                raise LocalJobInputError(msg)
            self.client.stop_training_job(params["TrainingJobName"])
            return {}
        if operation == "UpdateTrainingJob":
            return self.client.update_training_job(**params)
        kwargs = {k: v for k, v in params.items() if k in ("NameContains", "StatusEquals", "MaxResults")}
        return self.client.list_training_jobs(**kwargs)


class ApiServer:
    """:class:`SageMakerApi` on ``127.0.0.1:port`` in a background thread (port 0: any free port)."""

    def __init__(self, client: LocalTrainingClient, *, port: int = 0) -> None:
        self.client = client
        self.port = port
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` once started."""
        if self._server is None:
            msg = "the API server is not started"
            raise RuntimeError(msg)
        return f"http://{LOOPBACK}:{self._server.server_port}"

    def start(self) -> ApiServer:
        """Bind and serve in a daemon thread; returns self."""
        self._server = make_server(LOOPBACK, self.port, SageMakerApi(self.client), threaded=True)
        self._thread = threading.Thread(target=self._server.serve_forever, name="sagemaker-api", daemon=True)
        self._thread.start()
        return self

    def wait(self) -> None:
        """Block until the server stops (Ctrl-C raises KeyboardInterrupt here)."""
        pause = threading.Event()
        while self._thread is not None and self._thread.is_alive():
            pause.wait(0.5)

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
