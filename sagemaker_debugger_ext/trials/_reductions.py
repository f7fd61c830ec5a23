"""Reduction names the reader accepts; the computation is shared with the hook.

Stored reductions are returned as stored; others are computed from the raw value by
:func:`sagemaker_debugger_ext._reductions.compute_reduction` (norms on the flattened tensor).
"""

from __future__ import annotations

from .._exceptions import ConfigValueError, field_error_message
from .._reductions import ALLOWED_NORMS, ALLOWED_REDUCTIONS

__all__ = ["normalize_reduction_name"]

_ALIASES = {"l1_norm": "l1", "l2_norm": "l2", "var": "variance"}


def normalize_reduction_name(name: str) -> str:
    """Return the stored op name for ``name`` (``l2_norm`` → ``l2``).

    Raises:
        ConfigValueError: not a known reduction.
    """
    op = _ALIASES.get(name, name)
    if op not in ALLOWED_REDUCTIONS and op not in ALLOWED_NORMS:
        allowed = ", ".join(ALLOWED_REDUCTIONS + ALLOWED_NORMS)
        msg = field_error_message("reduction_name", f"one of {allowed}", name)
        raise ConfigValueError(msg, field="reduction_name", value=name)
    return op
