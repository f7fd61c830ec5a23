"""The supervisor's side of events: record each one, run the file handlers, post to EventBridge.

Handlers never run in the training process and never decide the job's outcome: each call runs
in its own process (``_handler_host.py`` run as a script) with its output
appended to the job's ``logs/handlers.log``; one that raises, hangs past its timeout (it is
killed) or cannot be found is reported there, and the job goes on. Handler processes see
``AWS_ENDPOINT_URL_SAGEMAKER`` pointing at a SageMaker API served for this job's store on
127.0.0.1, so ``boto3.client("sagemaker").stop_training_job(...)`` in a handler stops the
local job.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from ..api._client import LocalTrainingClient
from ..api._describe import describe_response
from ..api._server import ApiServer
from ..events import _handler_host
from ..events._events import EVENT_BUS_ENV, EVENTS_FILE, HandlerSpec, job_event, status_signature
from ..store._job_store import UPDATES_FILE, JobPaths, JobStore, read_json

__all__ = ["HANDLERS_LOG", "EventDispatcher"]

HANDLERS_LOG = "handlers.log"
_LOG = logging.getLogger(__name__)
# Run as a plain script, not ``-m``: a handler process then imports only the standard library
# and what the handler itself imports (starting it takes milliseconds, not the package's import).
_HOST_SCRIPT = str(Path(_handler_host.__file__).resolve())


class _Call:
    """One running handler process."""

    def __init__(self, spec: HandlerSpec, proc: subprocess.Popen[bytes], event_file: Path) -> None:
        self.spec = spec
        self.proc = proc
        self.event_file = event_file
        self.deadline = time.monotonic() + spec.timeout_s


class EventDispatcher:
    """Turns the supervisor's state changes into events and delivers them.

    Args:
        paths: the job's folders.
        launch: the job's launch settings (``EventHandlers``, ``EventBusName``, ``Region``).
        environ: the environment handler processes start from.
    """

    def __init__(self, paths: JobPaths, launch: Mapping[str, Any], environ: Mapping[str, str]) -> None:
        self.paths = paths
        self.region = str(launch.get("Region") or "us-east-1")
        self.environ = dict(environ)
        self.specs = [
            HandlerSpec(handler=h["Handler"], pattern=h.get("Pattern"), timeout_s=float(h.get("TimeoutSeconds", 30)))
            for h in launch.get("EventHandlers") or []
        ]
        self.bus = launch.get("EventBusName") or self.environ.get(EVENT_BUS_ENV) or None
        self._last: tuple[Any, ...] | None = None
        self._state_key: tuple[Any, ...] | None = None
        self._calls: list[_Call] = []
        self._server: Any = None
        self._events_client: Any = None
        self._lock = threading.Lock()

    @property
    def log_path(self) -> Path:
        """Where handler output and delivery problems are written."""
        return self.paths.logs_dir / HANDLERS_LOG

    def _log(self, line: str) -> None:
        self.paths.logs_dir.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with open(self.log_path, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp} [events] {line}\n")

    # --- emitting -----------------------------------------------------------------------
    def observe_state(self, state: Mapping[str, Any], request: Mapping[str, Any]) -> None:
        """Emit an event if the supervisor's ``state`` changed a job or rule status."""
        rules = state.get("Rules") or {}
        key = (
            state.get("TrainingJobStatus"),
            state.get("SecondaryStatus"),
            tuple(sorted((str(n), str(s.get("RuleEvaluationStatus"))) for n, s in rules.items())),
        )
        if key == self._state_key:
            return
        self._state_key = key
        description = describe_response(
            request,
            state,
            region=self.region,
            output_path=str(state.get("OutputPath") or ""),
            updates=read_json(self.paths.root / UPDATES_FILE) or {},
        )
        self.observe(description)

    def observe(self, description: Mapping[str, Any]) -> None:
        """Emit an event if the job's or a rule's status changed since the last call."""
        signature = status_signature(description)
        with self._lock:
            if signature == self._last:
                return
            self._last = signature
            event = job_event(description, region=self.region)
            try:
                with open(self.paths.root / EVENTS_FILE, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(event, sort_keys=True) + "\n")
                for spec in self.specs:
                    if spec.wants(event):
                        self._start(spec, event)
            except OSError as exc:  # e.g. a full disk: events never decide the job's outcome
                _LOG.warning("event of job %s not recorded or delivered: %s", self.paths.root.name, exc)
            if self.bus:
                self._put_event(event)
        self.poll()

    def _api_url(self) -> str:
        if self._server is None:
            store = JobStore(self.paths.root.parent.parent)
            self._server = ApiServer(LocalTrainingClient(store, region=self.region)).start()
        return str(self._server.url)

    def _start(self, spec: HandlerSpec, event: Mapping[str, Any]) -> None:
        file, func = spec.file_and_function()
        fd, name = tempfile.mkstemp(prefix="event-", suffix=".json", dir=self.paths.root)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(event, fh)
        env = dict(self.environ)
        env["AWS_ENDPOINT_URL_SAGEMAKER"] = self._api_url()
        env.setdefault("AWS_DEFAULT_REGION", self.region)
        env.setdefault("AWS_REGION", self.region)
        if not env.get("AWS_ACCESS_KEY_ID"):  # the local API needs no credentials; boto3 needs some to sign
            env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"] = "local", "local"
        argv = [sys.executable, _HOST_SCRIPT, str(file), func, name, str(spec.timeout_s)]
        self.paths.logs_dir.mkdir(parents=True, exist_ok=True)
        self._log(
            f"{event['detail'].get('TrainingJobStatus')}/{event['detail'].get('SecondaryStatus')}: calling {spec.name}"
        )
        with open(self.log_path, "ab") as log:
            proc = subprocess.Popen(
                argv, env=env, cwd=str(file.parent), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )
        self._calls.append(_Call(spec, proc, Path(name)))

    def _put_event(self, event: Mapping[str, Any]) -> None:
        try:
            if self._events_client is None:
                endpoint = self.environ.get("AWS_ENDPOINT_URL_EVENTS") or None
                self._events_client = boto3.client("events", region_name=self.region, endpoint_url=endpoint)
            entry = {
                "Source": event["source"],
                "DetailType": event["detail-type"],
                "Detail": json.dumps(event["detail"]),
                "Resources": list(event["resources"]),
                "EventBusName": self.bus,
            }
            answer = self._events_client.put_events(Entries=[entry])
            if answer.get("FailedEntryCount"):
                self._log(f"EventBridge refused the event: {answer.get('Entries')}")
        except (BotoCoreError, ClientError) as exc:
            self._log(f"could not send the event to EventBridge bus {self.bus!r}: {exc}")

    # --- handler processes --------------------------------------------------------------
    def poll(self) -> None:
        """Reap finished handler calls; kill the ones past their timeout."""
        still = []
        for call in self._calls:
            code = call.proc.poll()
            if code is None and time.monotonic() > call.deadline:
                call.proc.kill()
                call.proc.wait()
                self._log(f"{call.spec.name} timed out after {call.spec.timeout_s:g} s and was killed")
            elif code is None:
                still.append(call)
                continue
            elif code != 0:
                self._log(f"{call.spec.name} failed (exit code {code}); the job goes on")
            call.event_file.unlink(missing_ok=True)
        self._calls = still

    def close(self) -> None:
        """Wait for the running handler calls (each up to its timeout), then stop the API server."""
        pause = threading.Event()
        while self._calls:
            self.poll()
            if self._calls:
                pause.wait(0.02)
        if self._server is not None:
            self._server.stop()
            self._server = None
