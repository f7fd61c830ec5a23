"""A caller that waits for the background writer runs the queued jobs a starved writer
thread has not taken itself, one at a time, in submission order (issue 32 item 3: the saving
step of a fast training no longer sleeps until the scheduler gets round to the nice-19
thread); while the thread is free to take them, it leaves them to the thread (the
training thread no longer does the writes on a quiet machine)."""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

import pytest

from sagemaker_debugger_ext._exceptions import ConfigValueError, StorageError
from sagemaker_debugger_ext.format import BackgroundWriter

STALL_S = 10.0  # how long a stalled thread waits at most (the old code fails after it, not hangs)


class _StalledWriter(BackgroundWriter):
    """A writer whose thread gets no CPU until :meth:`resume`, as a nice-19 thread on a
    machine whose every core is busy: it takes no job, whatever the caller does."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._resumed = threading.Event()

    def _run(self) -> None:
        self._resumed.wait(STALL_S)
        super()._run()

    def resume(self) -> None:
        self._resumed.set()


def test_queued_jobs_the_thread_has_not_started_run_on_the_waiting_caller(tmp_path: Path) -> None:
    bg = _StalledWriter(max_pending=4)
    ran_on: list[tuple[str, int]] = []
    bg.submit(tmp_path / "a.txt", b"a")
    bg.submit_call(lambda: ran_on.append(((tmp_path / "a.txt").read_text(), threading.get_ident())), counted=False)
    bg.submit_call(lambda: ran_on.append(("c", threading.get_ident())))
    bg.wait_idle()
    assert ran_on == [("a", threading.get_ident()), ("c", threading.get_ident())]
    assert bg.run_by_callers == 3
    bg.resume()
    bg.close()


def test_backpressure_runs_the_oldest_job_instead_of_waiting(tmp_path: Path) -> None:
    bg = _StalledWriter(max_pending=1)
    seen: list[tuple[str, int]] = []
    bg.submit_call(lambda: seen.append(("first", threading.get_ident())))
    bg.submit_call(lambda: seen.append(("second", threading.get_ident())))  # the one place is taken
    assert seen == [("first", threading.get_ident())]  # ... so the caller ran the job holding it
    bg.resume()
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


def test_a_failure_in_a_job_run_by_the_caller_is_raised_and_later_jobs_skipped(tmp_path: Path) -> None:
    bg = _StalledWriter(max_pending=4)

    def fail() -> None:
        raise OSError(28, "No space left on device")

    bg.submit_call(fail)
    bg.submit(tmp_path / "after.txt", b"x")
    with pytest.raises(StorageError, match="No space left"):
        bg.flush()
    assert not (tmp_path / "after.txt").exists()
    assert bg.run_by_callers == 2
    bg.resume()
    with pytest.raises(StorageError):
        bg.close()


def test_a_free_thread_does_every_job_a_caller_waits_for(tmp_path: Path) -> None:
    """The thread waits for work: a caller waiting right after submitting (as the hook's next
    saving step does) leaves the jobs to it, whether it waits in ``wait_idle``, ``flush`` or
    a ``submit`` beyond ``max_pending`` (``help_after`` long enough for any scheduler)."""
    bg = BackgroundWriter(max_pending=1, help_after=60)
    bg.submit_call(lambda: None)
    bg.flush()  # the thread has started and waits for work
    me, ran_on = threading.get_ident(), []
    for i in range(20):
        bg.submit(tmp_path / f"{i}.txt", b"x")
        bg.submit_call(lambda: ran_on.append(threading.get_ident()), counted=False)
        bg.submit_call(lambda: ran_on.append(threading.get_ident()))  # waits for the place
        (bg.wait_idle if i % 2 else bg.flush)()
    bg.close()
    assert len(ran_on) == 40 and me not in ran_on
    assert bg.run_by_callers == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{i}.txt" for i in range(20))


def test_a_thread_that_resumes_takes_the_jobs_again(tmp_path: Path) -> None:
    """Starved, the caller runs the queued jobs; once the thread runs again, it does them."""
    bg = _StalledWriter(max_pending=4, help_after=0)
    ran_on: list[int] = []
    bg.submit_call(lambda: ran_on.append(threading.get_ident()))
    bg.flush()
    assert ran_on == [threading.get_ident()]
    bg.resume()
    done = threading.Event()
    bg.submit_call(lambda: (ran_on.append(threading.get_ident()), done.set()))
    assert done.wait(30)  # nobody waits for it: the thread ran it
    assert ran_on[1] != threading.get_ident()
    bg.close()


@pytest.mark.parametrize("value", [-0.001, math.nan, math.inf, 3600.001, True, "0.002", None])
def test_help_after_is_checked(value: object) -> None:
    with pytest.raises(ConfigValueError, match=r"help_after.*from 0 to 3600"):
        BackgroundWriter(help_after=value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [0, 0.002, 3600])
def test_help_after_accepts_0_to_3600_inclusive(value: float) -> None:
    """The bounds the docstring and the error message give are both allowed."""
    BackgroundWriter(help_after=value).close()
