"""Which included collections are due at a step: the hook's per-step schedule check.

Collections sharing a schedule (usually all of them: they inherit the hook's) are grouped,
so a step costs one ``should_save_step`` call per distinct schedule.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..modes import ModeKeys
from ._collections import TRAIN_ONLY_COLLECTIONS, Collection
from ._save_config import SaveConfigMode

__all__ = ["NOTHING_DUE", "DueCollections"]

NOTHING_DUE: frozenset[Collection] = frozenset()
_NO_GRADIENT_MODES = (ModeKeys.EVAL, ModeKeys.PREDICT)


class DueCollections:
    """The save schedules of ``collections`` (completed: each has its ``save_config``)."""

    def __init__(self, collections: Iterable[Collection]) -> None:
        colls = list(collections)
        self._by_mode: dict[ModeKeys, list[tuple[SaveConfigMode, frozenset[Collection]]]] = {}
        for mode in ModeKeys:
            groups: dict[SaveConfigMode, list[Collection]] = {}
            for c in colls:
                if not (mode in _NO_GRADIENT_MODES and c.name in TRAIN_ONLY_COLLECTIONS):
                    groups.setdefault(c.save_config.get_save_config(mode), []).append(c)  # type: ignore[union-attr]
            self._by_mode[mode] = [(schedule, frozenset(group)) for schedule, group in groups.items()]

    def at(self, mode: ModeKeys, step: int) -> frozenset[Collection]:
        """The collections due at ``step`` of ``mode`` (the same frozenset object for the same
        answer, so callers may cache by it)."""
        schedules = self._by_mode[mode]
        if len(schedules) == 1:  # the usual case (runs every step)
            schedule, colls = schedules[0]
            return colls if schedule.should_save_step(step) else NOTHING_DUE
        due = [colls for schedule, colls in schedules if schedule.should_save_step(step)]
        return NOTHING_DUE if not due else due[0] if len(due) == 1 else frozenset().union(*due)

    def next_due(self, mode: ModeKeys, after: int) -> float:
        """The first step of ``mode`` after ``after`` at which a collection is due
        (``math.inf``: none ever is)."""
        steps = [step for schedule, _ in self._by_mode[mode] if (step := schedule.next_save_step(after)) is not None]
        return min(steps, default=math.inf)
