"""The suite's one way to wait: poll a condition until a deadline (never a fixed sleep)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T], *, timeout_s: float = 30.0, interval_s: float = 0.02, what: str = "condition"
) -> T:
    """Return ``condition()``'s first truthy value; fail the test once ``timeout_s`` has passed."""
    deadline = time.monotonic() + timeout_s
    pause = threading.Event()
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        pause.wait(interval_s)
