"""Driving a profiler rule over a (possibly still growing) profiler folder.

Windows of ``scan_interval_us`` of data are evaluated in time order; framework events are
handed to the window being evaluated when they arrive (their files appear when rotated).
While training runs, only complete windows are evaluated; once ``training_job_end.ts``
exists, the rest of the data is evaluated and the rule finishes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

from .._trial import ProfilerTrial
from ._base import ProfilerRule, Window

__all__ = ["RuleOutcome", "follow_trial", "write_rule_outputs"]


class RuleOutcome:
    """What a finished (or stopped) evaluation found."""

    def __init__(self, fired: bool, stopped: bool, messages: list[str]) -> None:
        self.fired = fired
        self.stopped = stopped
        self.messages = messages


def follow_trial(
    trial: ProfilerTrial,
    rule: ProfilerRule,
    *,
    wait: bool = True,
    stop: threading.Event | None = None,
    poll_s: float = 0.5,
    on_fire: Callable[[str], None] | None = None,
) -> RuleOutcome:
    """Evaluate ``rule`` over ``trial`` until training ends (``wait``) or the data ends.

    Args:
        trial: the profiler trial.
        rule: the rule (or ProfilerReport).
        wait: follow a running job until ``training_job_end.ts`` appears; False evaluates what
            is there now as if training had ended.
        stop: set it to end early (SIGTERM).
        poll_s: seconds between refreshes while waiting.
        on_fire: called with the rule's message the first time it fires.
    """
    stop = stop or threading.Event()
    scan = rule.scan_interval_us
    cursor: int | None = None
    fired = False
    messages: list[str] = []

    def _fired(msg: str) -> None:
        nonlocal fired
        if msg and msg not in messages:
            messages.append(msg)
        if not fired:
            fired = True
            if on_fire is not None:
                on_fire(msg)

    last_window = Window(start_us=0, end_us=0)
    while True:
        ended = (not wait) or trial.training_ended()
        trial.refresh()
        first, last = trial.first_timestamp, trial.last_timestamp
        if first is not None and last is not None:
            cursor = first if cursor is None else cursor
            pending = trial.framework_metrics_reader.take_new()
            while cursor + scan <= last or (ended and cursor <= last):
                end = cursor + scan
                window = Window(
                    start_us=cursor,
                    end_us=end,
                    system=trial.get_system_metrics(cursor, end),
                    framework=pending,
                    job_start_us=first,
                    ended=ended and end > last,
                )
                pending = []
                result = rule.evaluate(window)
                if result.fired:
                    _fired(result.findings[-1].message if result.findings else rule.message)
                last_window = window
                cursor = end
            if pending:  # nothing evaluated this round: hand them to the next window
                trial.framework_metrics_reader.put_back(pending)
        if ended:
            break
        if stop.wait(poll_s):
            return RuleOutcome(fired, True, messages)
    final = Window(
        start_us=last_window.start_us, end_us=last_window.end_us, job_start_us=trial.first_timestamp or 0, ended=True
    )
    result = rule.finish(final)
    if result.fired:
        _fired(result.findings[-1].message if result.findings else rule.message)
    return RuleOutcome(fired, False, messages)


def write_rule_outputs(rule: ProfilerRule, reports_dir: str | Path) -> list[Path]:
    """Write ``<reports_dir>/<Rule>.json`` for the rule (and each sub-rule of ProfilerReport)."""
    reports = Path(reports_dir)
    reports.mkdir(parents=True, exist_ok=True)
    subs = getattr(rule, "rules", [rule])
    written = []
    for sub in subs:
        path = reports / f"{sub.NAME}.json"
        path.write_text(json.dumps(sub.summary(), indent=2, default=str), encoding="utf-8")
        written.append(path)
    return written
