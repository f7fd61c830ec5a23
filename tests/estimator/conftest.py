"""Fixtures for estimator tests (helpers live in ``estimator_harness``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from estimator_harness import _cached_sts_endpoint, build_request


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto's in-process AWS (STS, S3, SageMaker).

    The SDK's ``sts_regional_endpoint`` (a pure region -> URL function that builds a new
    botocore session on every call) is memoised for speed; its answers are unchanged.
    """
    import sagemaker.session
    from moto import mock_aws

    monkeypatch.setattr(sagemaker.session, "sts_regional_endpoint", _cached_sts_endpoint)
    with mock_aws():
        yield


@pytest.fixture
def build() -> Callable[..., dict[str, Any]]:
    """The :func:`build_request` helper."""
    return build_request
