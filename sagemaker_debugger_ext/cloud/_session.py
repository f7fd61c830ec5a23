"""``DebuggerSession``: a ``sagemaker.Session`` that gives any SDK v2 estimator the Debugger backend.

``sagemaker.pytorch.PyTorch(..., sagemaker_session=DebuggerSession(debugger_backend="self-hosted"))``
sends CreateTrainingJob without Debugger fields, starts one Processing job per rule, and its
``describe_training_job`` (hence the estimator's ``rule_job_summary()``) shows the rules'
statuses. ``debugger_backend`` defaults to ``$SAGEMAKER_DEBUGGER_EXT_DEBUGGER_BACKEND``, else
``service``: the session then behaves as ``sagemaker.Session`` exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._sdk_major import installed_sdk_major, require_sdk

if installed_sdk_major() != 2:  # checked before the SDK is imported: DebuggerSession is a v2 sagemaker.Session
    require_sdk(2, "sagemaker_debugger_ext.cloud.DebuggerSession")
import sagemaker
from sagemaker.exceptions import UnexpectedStatusException

from ._backend import DebuggerBackend, resolve_backend
from ._self_hosted import prepare_train_args, self_hosted_fit_summary, start_rule_jobs, with_rule_statuses

__all__ = ["DebuggerSession", "logs_for_self_hosted_job", "self_hosted_train", "self_hosted_train_args"]


def self_hosted_train_args(session: Any, train_args: dict[str, Any]) -> dict[str, Any]:
    """The ``Session.train`` arguments :func:`self_hosted_train` sends for ``train_args``; nothing is
    read, uploaded or started (``Estimator.training_job_request()``)."""
    from .. import __version__

    wheel = getattr(session, "_wheel", None)
    args, _ = prepare_train_args(train_args, s3_client=None, version=__version__, wheel=wheel, upload=False)
    return args


def self_hosted_train(
    session: Any,
    train_args: dict[str, Any],
    *,
    wheel: str | Path | None = None,
    rule_image_uri: str | None = None,
    poll_seconds: float = 10.0,
) -> dict[str, Any]:
    """Start a self-hosted job through ``session`` (any ``sagemaker.Session``); returns the train args sent.

    Raises:
        ConfigValueError: no entry point, or an output path not on S3.
    """
    from .. import __version__

    args, plan = prepare_train_args(
        train_args, s3_client=session.s3_client, version=__version__, wheel=wheel, poll_seconds=poll_seconds
    )
    sagemaker.Session.train(session, **args)
    start_rule_jobs(session.sagemaker_client, plan, region=session.boto_region_name, image_uri=rule_image_uri)
    return args


def logs_for_self_hosted_job(
    session: Any, job_name: str, *, wait: bool = False, poll: float = 10, log_type: Any = "All", timeout: Any = None
) -> None:
    """``sagemaker.Session.logs_for_job``, then, when it waited, the rules' summary local mode prints.

    The summary (every rule's status and details, the output paths) comes once the rule jobs have
    made their final evaluation; it is printed for a failed job too, before its error is raised.
    Jobs without self-hosted rules print what ``sagemaker.Session`` prints, nothing more.
    """
    if isinstance(log_type, bool):
        log_type = "All" if log_type else "None"

    def summary() -> None:
        if not wait or log_type == "None":
            return
        text = self_hosted_fit_summary(
            job_name, sagemaker_client=session.sagemaker_client, s3_client=session.s3_client, poll_s=min(poll, 5)
        )
        if text:
            print(text, flush=True)

    try:
        sagemaker.Session.logs_for_job(session, job_name, wait=wait, poll=poll, log_type=log_type, timeout=timeout)
    except UnexpectedStatusException:
        summary()
        raise
    summary()


class DebuggerSession(sagemaker.Session):
    """``sagemaker.Session`` with a Debugger backend (see the module docstring).

    Args:
        debugger_backend: ``"service"`` or ``"self-hosted"`` (default: the environment variable,
            else ``"service"``).
        wheel: a wheel of this package to ship in a channel, for jobs without internet access.
        rule_image_uri: the rule jobs' image (default: SageMaker's PyTorch CPU image).
        rule_poll_seconds: how often a rule job asks whether training has ended.
        *args, **kwargs: ``sagemaker.Session``'s.

    Raises:
        ConfigValueError: a ``debugger_backend`` that is not one of the two.

    .. versionadded:: 0.2.0
    """

    def __init__(
        self,
        *args: Any,
        debugger_backend: str | DebuggerBackend | None = None,
        wheel: str | Path | None = None,
        rule_image_uri: str | None = None,
        rule_poll_seconds: float = 10.0,
        **kwargs: Any,
    ) -> None:
        self.debugger_backend = resolve_backend(debugger_backend)
        self._wheel = wheel
        self._rule_image_uri = rule_image_uri
        self._rule_poll_seconds = rule_poll_seconds
        super().__init__(*args, **kwargs)

    def train(self, **kwargs: Any) -> Any:
        """``sagemaker.Session.train``; with the self-hosted backend, :func:`self_hosted_train`."""
        if self.debugger_backend is DebuggerBackend.SERVICE:
            return super().train(**kwargs)
        return self_hosted_train(
            self, kwargs, wheel=self._wheel, rule_image_uri=self._rule_image_uri, poll_seconds=self._rule_poll_seconds
        )

    def describe_training_job(self, job_name: str) -> Any:
        """DescribeTrainingJob, with the self-hosted rules' statuses in the service's shape."""
        description = super().describe_training_job(job_name)
        return with_rule_statuses(description, sagemaker_client=self.sagemaker_client, s3_client=self.s3_client)

    def logs_for_job(
        self, job_name: str, wait: bool = False, poll: float = 10, log_type: Any = "All", timeout: Any = None
    ) -> None:
        """``sagemaker.Session.logs_for_job``; a self-hosted job's rules summary follows (see
        :func:`logs_for_self_hosted_job`)."""
        if self.debugger_backend is DebuggerBackend.SERVICE:
            super().logs_for_job(job_name, wait=wait, poll=poll, log_type=log_type, timeout=timeout)
            return
        logs_for_self_hosted_job(self, job_name, wait=wait, poll=poll, log_type=log_type, timeout=timeout)
