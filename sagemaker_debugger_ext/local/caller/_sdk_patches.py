"""SDK v2 patches: what SDK v2 estimators need from our ``LocalSession`` that the session alone cannot provide.

Four SDK functions consult no session method at the point that matters, so they are wrapped
once (idempotently) when :mod:`._session` is imported. Each wrapper acts only when the
estimator's or call's session is our ``LocalSession``; for every other session it calls the
SDK's function unchanged.

* ``EstimatorBase._prepare_for_training``: with no ``output_path``, SDK local mode sets
  ``""``, so every artifact path helper returns a relative path. With our session the
  estimator gets :func:`default_output_path` first, as our ``Estimator`` does.
* ``EstimatorBase._set_source_s3_uri``: a custom rule's local source is used in place
  (``file://``), not uploaded to the default bucket.
* ``_TrainingJob._get_train_args``: plain local paths given to ``fit()`` become ``file://``
  URIs (the SDK rejects them).
* ``telemetry_logging._send_telemetry_request``: the SDK sends a request (and, offline,
  logs tracebacks) after every ``fit()``. Nothing is sent for our session.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

__all__ = ["apply_local_output_default", "install", "is_our_local_session", "local_inputs"]

_MARK = "_sagemaker_debugger_ext_wrapped"


def is_our_local_session(session: Any) -> bool:
    """True when ``session`` is this package's LocalSession (it has ``default_output_path``)."""
    return type(session).__module__.startswith("sagemaker_debugger_ext.") and hasattr(session, "default_output_path")


def apply_local_output_default(estimator: Any) -> None:
    """Give an estimator without ``output_path`` our session's default output path."""
    session = getattr(estimator, "sagemaker_session", None)
    if session is not None and getattr(estimator, "output_path", None) is None and is_our_local_session(session):
        estimator.output_path = session.default_output_path()


def local_inputs(inputs: Any) -> Any:
    """``fit()`` inputs with plain local paths turned into absolute ``file://`` URIs.

    The SDK accepts only ``s3://`` and ``file://`` strings; local mode also takes a plain
    path (absolute, ``~``, or relative to the caller's folder). Other inputs are unchanged.
    """
    if isinstance(inputs, str) and inputs and "://" not in inputs:
        return Path(inputs).expanduser().resolve().as_uri()
    if isinstance(inputs, dict):
        return {name: local_inputs(value) for name, value in inputs.items()}
    return inputs


def _wrap_train_args(original: Any) -> Any:
    function = original.__func__

    @functools.wraps(function)
    def _get_train_args(cls: Any, estimator: Any, inputs: Any, experiment_config: Any) -> Any:
        if is_our_local_session(getattr(estimator, "sagemaker_session", None)):
            inputs = local_inputs(inputs)
        return function(cls, estimator, inputs, experiment_config)

    setattr(_get_train_args, _MARK, True)
    return classmethod(_get_train_args)


def _wrap_rule_source(original: Any) -> Any:
    @functools.wraps(original)
    def _set_source_s3_uri(self: Any, rule: Any) -> Any:
        source = (rule.rule_parameters or {}).get("source_s3_uri")
        if (
            is_our_local_session(getattr(self, "sagemaker_session", None))
            and isinstance(source, str)
            and not source.startswith("s3://")
        ):
            rule.rule_parameters["source_s3_uri"] = Path(source.removeprefix("file://")).expanduser().resolve().as_uri()
            return None
        return original(self, rule)

    setattr(_set_source_s3_uri, _MARK, True)
    return _set_source_s3_uri


def _wrap_prepare(original: Any) -> Any:
    @functools.wraps(original)
    def _prepare_for_training(self: Any, *args: Any, **kwargs: Any) -> Any:
        apply_local_output_default(self)
        return original(self, *args, **kwargs)

    setattr(_prepare_for_training, _MARK, True)
    return _prepare_for_training


def _wrap_telemetry(original: Any) -> Any:
    @functools.wraps(original)
    def _send_telemetry_request(status: Any, feature_list: Any, session: Any = None, *args: Any, **kwargs: Any) -> Any:
        if is_our_local_session(session):
            return None
        return original(status, feature_list, session, *args, **kwargs)

    setattr(_send_telemetry_request, _MARK, True)
    return _send_telemetry_request


def install() -> None:
    """Wrap the two SDK functions (once per process)."""
    from sagemaker import estimator  # the SDK: only when a LocalSession is made
    from sagemaker.telemetry import telemetry_logging

    base = estimator.EstimatorBase
    if not getattr(base._prepare_for_training, _MARK, False):
        base._prepare_for_training = _wrap_prepare(base._prepare_for_training)
    if not getattr(base._set_source_s3_uri, _MARK, False):
        base._set_source_s3_uri = _wrap_rule_source(base._set_source_s3_uri)
    if not getattr(estimator._TrainingJob._get_train_args, _MARK, False):
        estimator._TrainingJob._get_train_args = _wrap_train_args(estimator._TrainingJob._get_train_args)
    if not getattr(telemetry_logging._send_telemetry_request, _MARK, False):
        telemetry_logging._send_telemetry_request = _wrap_telemetry(telemetry_logging._send_telemetry_request)
