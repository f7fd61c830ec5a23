"""Training modes, with smdebug's numeric values (``ModeKeys``)."""

from __future__ import annotations

import enum

__all__ = ["ModeKeys"]


class ModeKeys(enum.IntEnum):
    """The phase a step belongs to; values are those smdebug writes into plugin_data."""

    TRAIN = 1
    EVAL = 2
    PREDICT = 3
    GLOBAL = 4
