"""TensorFlow/Keras tests: skipped with a reason when the ``tensorflow`` extra is not installed."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


@pytest.fixture(scope="session")
def tf():
    """TensorFlow with Keras 3 (``pip install -e '.[tensorflow]'``)."""
    tensorflow = pytest.importorskip("tensorflow", reason="the tensorflow extra is not installed")
    keras = pytest.importorskip("keras")
    if int(keras.__version__.split(".")[0]) < 3:
        pytest.skip(f"Keras 3 is required (found {keras.__version__})")
    return tensorflow
