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

from ._backend import DebuggerBackend, resolve_backend
from ._self_hosted import prepare_train_args, start_rule_jobs, with_rule_statuses

__all__ = ["DebuggerSession", "self_hosted_train"]


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
