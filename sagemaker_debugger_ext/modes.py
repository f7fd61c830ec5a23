"""Training modes with smdebug's numeric values: :class:`ModeKeys` and its members as module
attributes (smdebug's ``modes`` module)."""

from __future__ import annotations

import enum

__all__ = ["EVAL", "GLOBAL", "PREDICT", "TRAIN", "ModeKeys"]


class ModeKeys(enum.IntEnum):
    """The phase a step belongs to; values are those smdebug writes into plugin_data."""

    TRAIN = 1
    EVAL = 2
    PREDICT = 3
    GLOBAL = 4


TRAIN = ModeKeys.TRAIN
EVAL = ModeKeys.EVAL
PREDICT = ModeKeys.PREDICT
GLOBAL = ModeKeys.GLOBAL
