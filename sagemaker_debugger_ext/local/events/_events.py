"""SageMaker's "Training Job State Change" events for local jobs, and the handlers they go to.

SageMaker emits an EventBridge event on every training-job status change and every rule
status change; its ``detail`` is the job's DescribeTrainingJob response at that moment. Local
jobs emit the same events (see ``docs/local-mode.md``): the supervisor appends each one to
the job's ``events.jsonl`` and hands it to the handlers registered for the job.

A handler is a Lambda-style file reference ``path/to/handler.py:lambda_handler`` (run in its
own process, with a timeout) or, on :class:`~sagemaker_debugger_ext.LocalSession`, a Python
callable (run in the session's process). Each may carry an EventBridge event pattern.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from ..._container_env import EVENT_BUS_ENV, EVENT_HANDLERS_ENV
from ..._exceptions import ConfigValueError, field_error_message
from ._event_patterns import check_pattern, pattern_matches

__all__ = [
    "DETAIL_TYPE",
    "EVENTS_FILE",
    "EVENT_BUS_ENV",
    "EVENT_HANDLERS_ENV",
    "EVENT_SOURCE",
    "LOCAL_ACCOUNT",
    "HandlerSpec",
    "env_handler_items",
    "handler_specs",
    "job_event",
    "read_events",
    "status_signature",
]

DETAIL_TYPE = "SageMaker Training Job State Change"
EVENT_SOURCE = "aws.sagemaker"
LOCAL_ACCOUNT = "000000000000"
EVENTS_FILE = "events.jsonl"
DEFAULT_TIMEOUT_S = 30.0


def _jsonable(value: Any) -> Any:
    """Datetimes become epoch milliseconds, as in SageMaker's events."""
    if isinstance(value, _dt.datetime):
        return int(value.timestamp() * 1000)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def job_event(description: Mapping[str, Any], *, region: str, now: _dt.datetime | None = None) -> dict[str, Any]:
    """The EventBridge event for a job whose DescribeTrainingJob response is ``description``."""
    when = (now or _dt.datetime.now(tz=_dt.UTC)).astimezone(_dt.UTC)
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": DETAIL_TYPE,
        "source": EVENT_SOURCE,
        "account": LOCAL_ACCOUNT,
        "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": region,
        "resources": [str(description.get("TrainingJobArn", ""))],
        "detail": _jsonable(description),
    }


def status_signature(description: Mapping[str, Any]) -> tuple[Any, ...]:
    """What a new event is emitted for: the job's statuses and every rule's status."""

    def rules(key: str) -> tuple[tuple[str, str], ...]:
        return tuple(
            (str(s.get("RuleConfigurationName")), str(s.get("RuleEvaluationStatus")))
            for s in description.get(key) or []
        )

    return (
        description.get("TrainingJobStatus"),
        description.get("SecondaryStatus"),
        rules("DebugRuleEvaluationStatuses"),
        rules("ProfilerRuleEvaluationStatuses"),
    )


@attrs.frozen(kw_only=True)
class HandlerSpec:
    """One event handler: a callable, or ``file.py:function`` run in its own process.

    Args:
        handler: the callable ``handler(event, context)``, or ``"path/to/file.py:function"``.
        pattern: an EventBridge event pattern; events that do not match are not delivered.
        timeout_s: how long one call may run before it is abandoned (its process killed).
    """

    handler: str | Callable[[dict[str, Any], Any], Any]
    pattern: dict[str, Any] | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S

    @property
    def name(self) -> str:
        """A short name for logs."""
        if callable(self.handler):
            return getattr(self.handler, "__qualname__", repr(self.handler))
        return self.handler

    def wants(self, event: Mapping[str, Any]) -> bool:
        """Whether this handler receives ``event``."""
        return self.pattern is None or pattern_matches(self.pattern, event)

    def file_and_function(self) -> tuple[Path, str]:
        """``(file, function)`` of a file reference."""
        path, _, func = str(self.handler).rpartition(":")
        return Path(path), func

    def to_launch(self) -> dict[str, Any]:
        """The JSON form kept in the job's launch settings (file references only)."""
        out: dict[str, Any] = {"Handler": self.handler, "TimeoutSeconds": self.timeout_s}
        if self.pattern is not None:
            out["Pattern"] = self.pattern
        return out


def _resolve_reference(ref: str, where: str, base_dir: Path) -> str:
    path, sep, func = ref.rpartition(":")
    if not sep or not path or not func.isidentifier():
        _bad = field_error_message(where, "'path/to/file.py:function_name'", ref)
        raise ConfigValueError(_bad, field=where, value=ref)
    file = (base_dir / path).resolve()
    if not file.is_file():
        msg = field_error_message(where, "a reference to an existing Python file", ref)
        raise ConfigValueError(msg, field=where, value=ref)
    return f"{file}:{func}"


def _one_spec(item: Any, where: str, base_dir: Path) -> HandlerSpec:
    if isinstance(item, HandlerSpec):
        raw: dict[str, Any] = {"Handler": item.handler, "Pattern": item.pattern, "TimeoutSeconds": item.timeout_s}
    elif isinstance(item, Mapping):
        raw = {str(k)[:1].upper() + str(k)[1:]: v for k, v in item.items()}
        unknown = sorted(set(raw) - {"Handler", "Pattern", "TimeoutSeconds"})
        if unknown:
            msg = field_error_message(f"{where}.{unknown[0]}", "one of Handler, Pattern, TimeoutSeconds", unknown[0])
            raise ConfigValueError(msg, field=where, value=unknown[0])
    else:
        raw = {"Handler": item}
    handler = raw.get("Handler")
    if isinstance(handler, str):
        handler = _resolve_reference(handler, f"{where}.Handler", base_dir)
    elif not callable(handler):
        msg = field_error_message(f"{where}.Handler", "a callable or 'file.py:function'", handler)
        raise ConfigValueError(msg, field=where, value=handler)
    pattern = raw.get("Pattern")
    if pattern is not None:
        pattern = check_pattern(pattern, f"{where}.Pattern")
    timeout = raw.get("TimeoutSeconds", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 900:
        msg = field_error_message(f"{where}.TimeoutSeconds", "a number of seconds in (0, 900]", timeout)
        raise ConfigValueError(msg, field=where, value=timeout)
    return HandlerSpec(handler=handler, pattern=pattern, timeout_s=float(timeout))


def env_handler_items(text: str) -> list[Any]:
    """The handler items of a ``$SAGEMAKER_DEBUGGER_EXT_EVENT_HANDLERS`` value."""
    text = text.strip()
    if not text:
        return []
    if text.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            msg = field_error_message(EVENT_HANDLERS_ENV, "a JSON array or comma-separated references", text)
            raise ConfigValueError(msg, field=EVENT_HANDLERS_ENV, value=text) from exc
        return list(items) if isinstance(items, list) else [items]
    return [part.strip() for part in text.split(",") if part.strip()]


def handler_specs(
    items: Iterable[Any] = (), *, environ: Mapping[str, str] | None = None, base_dir: Path | None = None
) -> list[HandlerSpec]:
    """Check and normalise handlers given in Python and in ``$SAGEMAKER_DEBUGGER_EXT_EVENT_HANDLERS``.

    File references are resolved against ``base_dir`` (default: the working folder) and must
    exist; patterns are checked. Raises ConfigValueError naming the bad handler.
    """
    base = base_dir or Path.cwd()
    specs = [_one_spec(item, f"event_handlers[{i}]", base) for i, item in enumerate(items)]
    env = os.environ if environ is None else environ
    env_items = env_handler_items(env.get(EVENT_HANDLERS_ENV, ""))
    specs += [_one_spec(item, f"{EVENT_HANDLERS_ENV}[{i}]", base) for i, item in enumerate(env_items)]
    return specs


def read_events(job_root: Path, *, start: int = 0) -> tuple[list[dict[str, Any]], int]:
    """Complete events recorded in ``job_root/events.jsonl`` from byte ``start``; returns ``(events, next_start)``."""
    try:
        with open(job_root / EVENTS_FILE, "rb") as fh:
            fh.seek(start)
            data = fh.read()
    except FileNotFoundError:
        return [], start
    end = data.rfind(b"\n") + 1
    events = [json.loads(line) for line in data[:end].splitlines() if line.strip()]
    return events, start + end
