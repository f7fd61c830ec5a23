"""Progress lines while ``fit()`` waits for a local job.

A plain line at a steady rate (default every 10 s, ``$SAGEMAKER_DEBUGGER_EXT_PROGRESS_SECONDS``)
and at every status change: the job's status, the last step saved in its debug output, and
each rule's state. Plain text, so it reads the same in a terminal, a pipe, a log file and a
notebook; ``logs=False`` / ``"None"`` prints none.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

from ..._container_env import PROGRESS_SECONDS_ENV
from ...format._layout import parse_index_key

__all__ = ["PROGRESS_ENV", "ProgressLines"]

PROGRESS_ENV = PROGRESS_SECONDS_ENV
_DEFAULT_S = 10.0


def _interval(environ: Mapping[str, str]) -> float:
    try:
        value = float(environ.get(PROGRESS_ENV, _DEFAULT_S))
    except ValueError:
        return _DEFAULT_S
    return value if value > 0 else _DEFAULT_S


def last_saved_step(debug_dir: Path) -> int | None:
    """The highest step with an index file under ``debug_dir`` (None before the first)."""
    index = debug_dir / "index"
    if not index.is_dir():
        return None
    steps = [parsed[0] for folder in index.iterdir() if folder.is_dir() for f in folder.iterdir()
             if (parsed := parse_index_key(f"index/{folder.name}/{f.name}")) is not None]  # fmt: skip
    return max(steps) if steps else None


class ProgressLines:
    """Prints ``[progress]`` lines for one job; call :meth:`tick` from the wait loop."""

    def __init__(self, name: str, debug_dir: Path, out: TextIO, environ: Mapping[str, str] | None = None) -> None:
        self.name = name
        self.debug_dir = debug_dir
        self.out = out
        self.interval_s = _interval(os.environ if environ is None else environ)
        self._last_print = 0.0
        self._last_look = float("-inf")
        self._last_state: tuple[str, ...] = ()

    def tick(self, describe: Callable[[], Mapping[str, Any]], now: float | None = None) -> None:
        """Print a line when the interval has passed or a status changed (the job is looked
        at, with ``describe()``, once a second at most)."""
        now = time.monotonic() if now is None else now
        if now - self._last_look < min(1.0, self.interval_s):
            return
        self._last_look = now
        desc = describe()
        rules = [(str(r.get("RuleConfigurationName")), str(r.get("RuleEvaluationStatus")))
                 for r in (desc.get("DebugRuleEvaluationStatuses") or [])]  # fmt: skip
        state = (str(desc.get("TrainingJobStatus")), str(desc.get("SecondaryStatus")), *(s for _, s in rules))
        if state == self._last_state and now - self._last_print < self.interval_s:
            return
        self._last_state, self._last_print = state, now
        step = last_saved_step(self.debug_dir)
        saved = "no step saved yet" if step is None else f"last saved step {step}"
        rule_text = ", ".join(f"{n} {s}" for n, s in rules) or "no rules"
        self.out.write(f"[progress] {self.name}: {state[0]} ({state[1]}), {saved}; rules: {rule_text}\n")
        self.out.flush()
