"""The SageMaker SDK's v2 notices, at most once per process.

SDK v2 announces its deprecation twice for each feature (a ``FutureWarning`` and the same text
logged on ``sagemaker.deprecations``), and again for every v2 class used: the package-level
notice is useful once; the logged copy and the "Estimator is part of the SDK v2 ... use
ModelTrainer" notice for this package's own ``Estimator`` (built on v2 on purpose, as SDK v3 has
no Debugger integration) are noise. :func:`quiet_sdk_notices` installs one filter for that, once;
nothing happens at import time.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["no_v2_class_notice", "quiet_sdk_notices"]

_V2_TEXT = "SageMaker Python SDK v2, which is on path of deprecation"


class _DropLoggedV2Notice(logging.Filter):
    """Drops the logged copy of a notice the SDK also issues as a warning."""

    def filter(self, record: logging.LogRecord) -> bool:
        return _V2_TEXT not in record.getMessage()


def quiet_sdk_notices() -> None:
    """Show each SDK v2 notice once (as the warning), not a second time as a log line. Idempotent."""
    logger = logging.getLogger("sagemaker.deprecations")
    if not any(isinstance(f, _DropLoggedV2Notice) for f in logger.filters):
        logger.addFilter(_DropLoggedV2Notice())


@contextmanager
def no_v2_class_notice() -> Iterator[None]:
    """Within the block, the SDK's per-class v2 notice (for this package's own subclasses) is not shown."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".* is part of the SageMaker Python SDK v2")
        yield
