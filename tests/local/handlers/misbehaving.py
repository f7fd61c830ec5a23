"""Handlers that misbehave, for the tests that show a handler never changes a job's outcome."""

import json
import os
import threading
from pathlib import Path


def raises(event, context):
    raise RuntimeError(f"handler failure on {event['detail']['SecondaryStatus']}")


def hangs(event, context):
    threading.Event().wait()  # never returns: the dispatcher must kill it at its timeout


def records(event, context):
    """Append the event to $EVENTS_OUT (one JSON line each)."""
    with open(os.environ["EVENTS_OUT"], "a") as fh:
        fh.write(json.dumps(event) + "\n")
    return {"remaining_ms": context.get_remaining_time_in_millis(), "cwd": str(Path.cwd())}
