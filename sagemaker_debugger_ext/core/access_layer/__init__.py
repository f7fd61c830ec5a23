"""``smdebug.core.access_layer``: the helpers user scripts reach for (training end, S3 prefixes).

Reading and writing trials goes through :mod:`sagemaker_debugger_ext.storage`; this package
only offers smdebug's names for the few helpers scripts call.
"""

from __future__ import annotations

from .utils import has_training_ended, training_has_ended

__all__ = ["has_training_ended", "training_has_ended"]
