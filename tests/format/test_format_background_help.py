"""A caller that waits for the background writer runs the queued jobs the thread has not
started itself, one at a time, in submission order (issue 32 item 3: the saving step of a
fast training no longer sleeps until the scheduler gets round to the nice-19 thread)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sagemaker_debugger_ext._exceptions import StorageError
from sagemaker_debugger_ext.format import BackgroundWriter


@pytest.fixture
def gil_held_until_blocking() -> Iterator[None]:
    """Threads switch only where one blocks: a woken writer thread cannot run while the
    test's thread keeps going, as a starved nice-19 thread cannot on a loaded machine."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(5.0)  # far longer than the test needs, short enough never to hang a suite
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def _idle_writer(**kwargs: int) -> BackgroundWriter:
    bg = BackgroundWriter(**kwargs)
    bg.submit_call(lambda: None)
    bg.flush()  # the thread has started and waits for work
    return bg


def test_queued_jobs_the_thread_has_not_started_run_on_the_waiting_caller(
    tmp_path: Path, gil_held_until_blocking: None
) -> None:
    bg = _idle_writer(max_pending=4)
    ran_on: list[tuple[str, int]] = []
    bg.submit(tmp_path / "a.txt", b"a")
    bg.submit_call(lambda: ran_on.append(((tmp_path / "a.txt").read_text(), threading.get_ident())), counted=False)
    bg.submit_call(lambda: ran_on.append(("c", threading.get_ident())))
    before = bg.run_by_callers
    bg.wait_idle()
    assert ran_on == [("a", threading.get_ident()), ("c", threading.get_ident())]
    assert bg.run_by_callers - before == 3
    bg.close()


def test_backpressure_runs_the_oldest_job_instead_of_waiting(tmp_path: Path, gil_held_until_blocking: None) -> None:
    bg = _idle_writer(max_pending=1)
    seen: list[tuple[str, int]] = []
    bg.submit_call(lambda: seen.append(("first", threading.get_ident())))
    bg.submit_call(lambda: seen.append(("second", threading.get_ident())))  # the one place is taken
    assert seen == [("first", threading.get_ident())]  # ... so the caller ran the job holding it
    bg.close()
    assert [name for name, _ in seen] == ["first", "second"]


def test_a_started_job_is_waited_for_and_order_is_kept(tmp_path: Path) -> None:
    """The thread runs a job: a waiting caller must not run the next one before it ends."""
    bg = BackgroundWriter(max_pending=4)
    started, release = threading.Event(), threading.Event()
    seen: list[str] = []

    def slow() -> None:
        started.set()
        release.wait(30)
        seen.append("slow")

    bg.submit_call(slow)
    assert started.wait(30)
    bg.submit_call(lambda: seen.append("next"))
    flusher = threading.Thread(target=bg.flush)
    flusher.start()
    flusher.join(0.2)  # waits for the running job (a deadline, not a synchronisation)
    assert flusher.is_alive() and seen == []
    release.set()
    flusher.join(30)
    assert not flusher.is_alive() and seen == ["slow", "next"]
    bg.close()


def test_a_failure_in_a_job_run_by_the_caller_is_raised_and_later_jobs_skipped(
    tmp_path: Path, gil_held_until_blocking: None
) -> None:
    bg = _idle_writer(max_pending=4)

    def fail() -> None:
        raise OSError(28, "No space left on device")

    bg.submit_call(fail)
    bg.submit(tmp_path / "after.txt", b"x")
    with pytest.raises(StorageError, match="No space left"):
        bg.flush()
    assert not (tmp_path / "after.txt").exists()
    with pytest.raises(StorageError):
        bg.close()
