"""smdebug's ``smdebug.analysis`` path: :mod:`~sagemaker_debugger_ext.analysis.utils`."""

from __future__ import annotations

from .utils import no_refresh, refresh

__all__ = ["no_refresh", "refresh"]
