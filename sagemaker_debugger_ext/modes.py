"""smdebug's ``modes`` module: :class:`ModeKeys` and its members as module attributes."""

from __future__ import annotations

from ._modes import ModeKeys

__all__ = ["EVAL", "GLOBAL", "PREDICT", "TRAIN", "ModeKeys"]

TRAIN = ModeKeys.TRAIN
EVAL = ModeKeys.EVAL
PREDICT = ModeKeys.PREDICT
GLOBAL = ModeKeys.GLOBAL
