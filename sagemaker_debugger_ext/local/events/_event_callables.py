"""Python-callable event handlers: run in the process that started the job, never in training.

A callable cannot travel to the job's supervisor process, so the process that created the job
follows the job's ``events.jsonl`` in a daemon thread and calls each matching handler with the
event and a Lambda-like context. Each call runs in its own daemon thread and is abandoned after
its timeout; an exception is logged (logger ``sagemaker_debugger_ext.local.events``) and
written to the job's ``logs/handlers.log``. Neither changes the job's outcome.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..store._job_store import JobPaths
from ._events import HandlerSpec, read_events
from ._handler_host import LambdaContext

__all__ = ["CallableFollower"]

_LOG = logging.getLogger("sagemaker_debugger_ext.local.events")
_TERMINAL = frozenset({"Completed", "Failed", "Stopped"})


class CallableFollower(threading.Thread):
    """Follows one job's events and delivers them to Python callables.

    Args:
        paths: the job's folders.
        specs: handlers whose ``handler`` is a callable.
        is_finished: returns True once the job's supervisor has exited (no more events).
    """

    def __init__(self, paths: JobPaths, specs: Sequence[HandlerSpec], is_finished: Callable[[], bool]) -> None:
        super().__init__(name=f"events-{paths.root.name}", daemon=True)
        self.paths = paths
        self.specs = list(specs)
        self.is_finished = is_finished
        self.delivered: list[dict[str, Any]] = []
        self.halt = threading.Event()

    def run(self) -> None:
        offset = 0
        while not self.halt.is_set():
            finished = self.is_finished()  # read before the events: nothing can be missed
            events, offset = read_events(self.paths.root, start=offset)
            for event in events:
                for spec in self.specs:
                    if spec.wants(event):
                        self._call(spec, event)
            if finished:
                return
            self.halt.wait(0.05)

    def _log(self, line: str) -> None:
        self.paths.logs_dir.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with open(self.paths.logs_dir / "handlers.log", "a", encoding="utf-8") as fh:
            fh.write(f"{stamp} [events] {line}\n")

    def _call(self, spec: HandlerSpec, event: Mapping[str, Any]) -> None:
        func: Any = spec.handler
        context = LambdaContext(spec.name, str(event.get("id", "")), spec.timeout_s, str(event.get("region", "")))
        outcome: dict[str, Any] = {}

        def target() -> None:
            try:
                outcome["result"] = func(dict(event), context)
            except Exception:  # noqa: BLE001 - a user's handler: report, never break the job
                outcome["error"] = traceback.format_exc()

        worker = threading.Thread(target=target, name=f"handler-{spec.name}", daemon=True)
        worker.start()
        worker.join(spec.timeout_s)
        self.delivered.append(dict(event))
        if worker.is_alive():
            self._log(f"{spec.name} timed out after {spec.timeout_s:g} s (left running in a daemon thread)")
            _LOG.warning("event handler %s timed out after %g s", spec.name, spec.timeout_s)
        elif "error" in outcome:
            self._log(f"{spec.name} raised:\n{outcome['error']}")
            _LOG.warning("event handler %s raised:\n%s", spec.name, outcome["error"])
        elif event.get("detail", {}).get("TrainingJobStatus") in _TERMINAL:
            self._log(f"{spec.name} handled the final event")
