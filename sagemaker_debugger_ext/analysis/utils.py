"""``smdebug.analysis.utils``: ``no_refresh`` / ``refresh``, implemented in :mod:`sagemaker_debugger_ext.trials._refresh`."""

from __future__ import annotations

from ..trials._refresh import no_refresh, refresh

__all__ = ["no_refresh", "refresh"]
