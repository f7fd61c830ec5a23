"""The SageMaker SDK's v2 notices, at most once per process.

SDK v2 announces its deprecation twice for each feature (a ``FutureWarning`` and the same text
logged on ``sagemaker.deprecations``), and again for every v2 class used: the package-level
notice is useful once; the logged copy and the "Estimator is part of the SDK v2 ... use
ModelTrainer" notice for this package's own ``Estimator`` (built on v2 on purpose, as SDK v3 has
no Debugger integration) are noise. So are the SDK's "Not applying SDK defaults from location"
INFO lines, printed for each config file that does not exist (the lines for a config file that
is applied stay). :func:`quiet_sdk_notices` installs one filter for each, once; nothing happens
at import time.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["no_v2_class_notice", "quiet_sdk_notices"]

# logger -> the text of the records dropped from it
_NOISE = {
    "sagemaker.deprecations": "SageMaker Python SDK v2, which is on path of deprecation",
    "sagemaker.config": "Not applying SDK defaults from location",
}


class _DropSdkNoise(logging.Filter):
    """Drops the records of one SDK logger that hold ``text``."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        return self.text not in record.getMessage()


def quiet_sdk_notices() -> None:
    """Show each SDK v2 notice once (as the warning), and no line about absent config files. Idempotent."""
    for name, text in _NOISE.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DropSdkNoise) for f in logger.filters):
            logger.addFilter(_DropSdkNoise(text))


@contextmanager
def no_v2_class_notice() -> Iterator[None]:
    """Within the block, the SDK's per-class v2 notice (for this package's own subclasses) is not shown."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".* is part of the SageMaker Python SDK v2")
        yield
