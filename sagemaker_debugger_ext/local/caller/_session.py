"""``LocalSession``: SDK v2's LocalSession, running training jobs without Docker.

Every SDK v2 estimator (``sagemaker.estimator.Estimator``, ``sagemaker.pytorch.PyTorch``,
``sagemaker.xgboost.XGBoost``, ...) with an ``entry_point`` works with
``sagemaker_session=LocalSession()``. The CreateTrainingJob request the SDK builds goes,
unchanged, to :class:`LocalTrainingClient`; Debugger, profiler and TensorBoard settings are
honoured (SDK v2's own local mode drops them).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import boto3

from ..._sdk_major import installed_sdk_major, require_sdk

if installed_sdk_major() != 2:  # checked before the SDK is imported: SDK v3 warns, then refuses v2 modules
    require_sdk(2, "sagemaker_debugger_ext.LocalSession")
from sagemaker.exceptions import UnexpectedStatusException
from sagemaker.local.local_session import LocalSagemakerClient as _SdkLocalClient
from sagemaker.local.local_session import LocalSession as _SdkLocalSession

from ..._sdk_notices import quiet_sdk_notices
from ...rules._fit_summary import fit_summary
from ..api._client import LocalTrainingClient, default_output_path
from ..events._events import handler_specs
from ..store._job_store import JobStore
from ._logs import LogFollower, follow_job
from ._sdk_patches import install as _install_sdk_patches

_install_sdk_patches()

__all__ = ["LocalSagemakerClient", "LocalSession"]

_DEFAULT_REGION = "us-east-1"
_LOCAL_ACCOUNT = "000000000000"


class LocalSagemakerClient(_SdkLocalClient):
    """SDK v2's local client with training jobs served by :class:`LocalTrainingClient`.

    Other calls (processing, models, endpoints) keep the SDK's Docker-based behaviour.
    """

    def __init__(self, sagemaker_session: Any = None, *, training: LocalTrainingClient) -> None:
        super().__init__(sagemaker_session)
        self.training = training

    def create_training_job(self, **request: Any) -> dict[str, Any]:
        """CreateTrainingJob (local, detached)."""
        return self.training.create_training_job(**request)

    def describe_training_job(self, TrainingJobName: str) -> dict[str, Any]:
        """DescribeTrainingJob from the job store."""
        return self.training.describe_training_job(TrainingJobName)

    def list_training_jobs(self, **kwargs: Any) -> dict[str, Any]:
        """ListTrainingJobs over the job store."""
        return self.training.list_training_jobs(**kwargs)

    def stop_training_job(self, TrainingJobName: str) -> dict[str, Any]:
        """StopTrainingJob."""
        return self.training.stop_training_job(TrainingJobName)

    def update_training_job(self, TrainingJobName: str, **kwargs: Any) -> dict[str, Any]:
        """UpdateTrainingJob (profiler settings and rules reach a running job)."""
        return self.training.update_training_job(TrainingJobName, **kwargs)


class LocalSession(_SdkLocalSession):
    """A ``sagemaker.local.LocalSession`` whose training jobs run as local processes.

    No Docker and no AWS account are needed: code is used in place (``local_code``),
    the region defaults to ``us-east-1`` when none is configured, a role name needs no IAM
    call, no SDK telemetry is sent, and jobs without an output path write under
    :meth:`default_output_path` (SDK estimators see that path as their ``output_path``).

    Args:
        boto_session: as for ``sagemaker.local.LocalSession``.
        default_bucket: as for ``sagemaker.local.LocalSession``.
        s3_endpoint_url: as for ``sagemaker.local.LocalSession``.
        disable_local_code: as for ``sagemaker.local.LocalSession``.
        sagemaker_config: as for ``sagemaker.local.LocalSession``.
        default_bucket_prefix: as for ``sagemaker.local.LocalSession``.
        job_store: where jobs are kept (default ``$SAGEMAKER_DEBUGGER_EXT_HOME`` or
            ``~/.sagemaker-debugger-ext``).
        settings: supervisor tuning, see :class:`LocalTrainingClient`.
        event_handlers: handlers of the jobs' "SageMaker Training Job State Change" events:
            Python callables ``handler(event, context)`` (run in this process), Lambda-style
            ``"path/to/handler.py:lambda_handler"`` references (run in their own processes,
            with ``AWS_ENDPOINT_URL_SAGEMAKER`` pointing at a local SageMaker API), or
            ``{"Handler": ..., "Pattern": <EventBridge pattern>, "TimeoutSeconds": ...}``.
            See ``docs/local-mode.md``.
        telemetry_opt_out: add ``SageMaker.PythonSDK.Modules.TelemetryOptOut: true`` to the
            SDK config, so ``fit()`` makes no telemetry request. Off by default: any
            non-empty SDK config makes the SDK validate it against its JSON schema at each
            of the ~20 config look-ups of ``fit()`` (seconds).

    .. versionadded:: 0.1.0
    """

    # set by the SDK's untyped base class
    sagemaker_config: Any
    config: Any

    def __init__(
        self,
        boto_session: Any = None,
        default_bucket: str | None = None,
        s3_endpoint_url: str | None = None,
        disable_local_code: bool = False,
        sagemaker_config: dict[str, Any] | None = None,
        default_bucket_prefix: str | None = None,
        *,
        job_store: str | Path | None = None,
        settings: dict[str, Any] | None = None,
        telemetry_opt_out: bool = False,
        event_handlers: list[Any] | None = None,
    ) -> None:
        quiet_sdk_notices()
        self._telemetry_opt_out = telemetry_opt_out
        self._job_store = JobStore(Path(job_store)) if job_store is not None else JobStore.from_environ()
        self._settings = dict(settings or {})
        if event_handlers:
            # checked now, before any job starts; references resolve against this folder
            self._settings["EventHandlers"] = handler_specs(event_handlers, environ={})
        if boto_session is None:
            boto_session = boto3.Session()
            if boto_session.region_name is None:
                boto_session = boto3.Session(region_name=_DEFAULT_REGION)
        super().__init__(
            boto_session=boto_session,
            default_bucket=default_bucket,
            s3_endpoint_url=s3_endpoint_url,
            disable_local_code=disable_local_code,
            sagemaker_config=sagemaker_config,
            default_bucket_prefix=default_bucket_prefix,
        )

    def _initialize(
        self, boto_session: Any, sagemaker_client: Any, sagemaker_runtime_client: Any, **kwargs: Any
    ) -> None:
        super()._initialize(boto_session, sagemaker_client, sagemaker_runtime_client, **kwargs)
        self.training_client = LocalTrainingClient(self._job_store, region=self._region_name, settings=self._settings)
        self.sagemaker_client = LocalSagemakerClient(self, training=self.training_client)
        if self._telemetry_opt_out:
            sm_config = copy.deepcopy(dict(self.sagemaker_config or {}))
            sm_config.setdefault("SchemaVersion", "1.0")
            modules = sm_config.setdefault("SageMaker", {}).setdefault("PythonSDK", {}).setdefault("Modules", {})
            modules.setdefault("TelemetryOptOut", True)
            self.sagemaker_config = sm_config
        config = dict(self.config or {})
        local = dict(config.get("local") or {})
        if not self._disable_local_code:
            local.setdefault("local_code", True)
        config["local"] = local
        self.config = config

    def expand_role(self, role: str) -> str:
        """Return ``role`` if it is an ARN, else ``arn:aws:iam::000000000000:role/<role>`` (no IAM call).

        Local jobs assume no role, so a role name (``"SageMakerRole"``) needs no AWS account.
        """
        if "/" in role:
            return role
        return f"arn:aws:iam::{_LOCAL_ACCOUNT}:role/{role}"

    @staticmethod
    def default_output_path() -> str:
        """``file://<cwd>/sagemaker-local-output/``: the output path when none is given."""
        return default_output_path()

    def logs_for_job(
        self, job_name: str, wait: bool = False, poll: float = 0.1, log_type: str = "All", timeout: Any = None
    ) -> None:
        """Print the job's logs; with ``wait=True`` follow them to the end (Ctrl-C stops the job)."""
        if isinstance(log_type, bool):
            log_type = "All" if log_type else "None"
        if not wait:
            follow_logs_once(self.training_client, job_name, log_type)
            return
        desc = follow_job(self.training_client, job_name, log_type=log_type, poll_s=min(float(poll), 0.2))
        if log_type != "None":
            print(fit_summary(desc), flush=True)
        _check_status(job_name, desc)

    def wait_for_job(self, job: str, poll: float = 0.1) -> dict[str, Any]:
        """Wait for a local job without printing its logs; raise if it failed."""
        desc = follow_job(self.training_client, job, log_type="None", poll_s=min(float(poll), 0.2))
        _check_status(job, desc)
        return desc


def follow_logs_once(client: LocalTrainingClient, job_name: str, log_type: str) -> None:
    """Print the logs written so far."""
    request = client.store.read_request(job_name)
    count = int((request.get("ResourceConfig") or {}).get("InstanceCount") or 1)
    follower = LogFollower(
        client.store.paths(job_name),
        hosts=[f"algo-{i + 1}" for i in range(count)] if log_type in ("All", "Training") else [],
        include_rules=log_type in ("All", "Rules"),
        out=sys.stdout,
    )
    follower.pump(final=True)


def _check_status(job_name: str, desc: dict[str, Any]) -> None:
    status = desc.get("TrainingJobStatus")
    if status in ("Completed", "Stopped"):
        return
    reason = desc.get("FailureReason", "(No reason provided)")
    message = f"Error for Training job {job_name}: {status}. Reason: {reason}"
    raise UnexpectedStatusException(message=message, allowed_statuses=["Completed", "Stopped"], actual_status=status)
