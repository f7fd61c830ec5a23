"""The SDK's ``_TrainingJob`` for our ``Estimator``: train arguments with our Debugger keys, validated
before sending; the self-hosted backend's submission, logs and rule statuses."""

from __future__ import annotations

from typing import Any

from sagemaker.estimator import _TrainingJob

from .. import request as _request
from ._support import capture_create_request

__all__ = ["DebuggerTrainingJob"]

_DEBUGGER_ATTRS = (
    "debugger_hook_config",
    "tensorboard_output_config",
    "profiler_config",
    "debugger_rule_configs",
    "profiler_rule_configs",
)


class DebuggerTrainingJob(_TrainingJob):
    """``_TrainingJob`` whose train arguments carry our Debugger keys, validated before sending."""

    @classmethod
    def _get_train_args(cls, estimator: Any, inputs: Any, experiment_config: Any) -> dict[str, Any]:
        saved = {name: getattr(estimator, name) for name in _DEBUGGER_ATTRS}
        try:
            for name in _DEBUGGER_ATTRS:
                setattr(estimator, name, None)
            args = super()._get_train_args(estimator, inputs, experiment_config)
        finally:
            for name, value in saved.items():
                setattr(estimator, name, value)
        args.update(estimator._pending_debugger.train_kwargs())
        return args

    @classmethod
    def start_new(cls, estimator: Any, inputs: Any, experiment_config: Any) -> DebuggerTrainingJob:
        train_args = cls._get_train_args(estimator, inputs, experiment_config)
        session = estimator.sagemaker_session
        request = capture_create_request(session, train_args)
        _request.validate_create_training_job(request, allow_local_uris=bool(session.local_mode))
        if not estimator._self_hosted():
            session.train(**train_args)
            return cls(session, estimator._current_job_name)
        from ..cloud._session import self_hosted_train  # the self-hosted backend: its uploads and rule jobs

        self_hosted_train(  # a DebuggerSession's options apply; defaults otherwise
            session,
            train_args,
            wheel=getattr(session, "_wheel", None),
            rule_image_uri=getattr(session, "_rule_image_uri", None),
            poll_seconds=float(getattr(session, "_rule_poll_seconds", 10.0)),
        )
        job = cls(session, estimator._current_job_name)
        job.self_hosted = True
        return job

    def wait(self, logs: Any = "All") -> None:
        """Wait for the job; a self-hosted job's logs end with local mode's rules summary."""
        if not getattr(self, "self_hosted", False) or logs in ("None", False):
            super().wait(logs=logs)
            return
        from ..cloud._session import logs_for_self_hosted_job

        logs_for_self_hosted_job(self.sagemaker_session, self.job_name, wait=True, log_type=logs)

    def describe(self) -> dict[str, Any]:
        """DescribeTrainingJob; a self-hosted job's rule statuses added in the service's shape."""
        description = super().describe()
        if not getattr(self, "self_hosted", False):
            return description
        from ..cloud._self_hosted import with_rule_statuses

        session = self.sagemaker_session
        return with_rule_statuses(description, sagemaker_client=session.sagemaker_client, s3_client=session.s3_client)
