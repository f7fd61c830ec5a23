"""The hook's writer thread yields the CPU to the training: its niceness (Linux), the
environment variable that sets it, and bad values refused before anything starts."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext.format import BackgroundWriter
from sagemaker_debugger_ext.hooks import Hook, HookConfigError, SaveConfig, TrainingContext
from sagemaker_debugger_ext.trials import create_trial

ENV = "SAGEMAKER_DEBUGGER_EXT_WRITER_NICE"
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")


def _thread_niceness(writer: BackgroundWriter) -> int:
    """The niceness of ``writer``'s thread as the kernel reports it (/proc)."""
    tid = writer._thread.native_id  # type: ignore[union-attr]
    fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[16])  # field 19 of stat: nice (fields[0] is field 3, the state)


@linux_only
def test_writer_thread_runs_at_the_given_niceness_and_writes(tmp_path: Path) -> None:
    """nice=19: the writer thread (only it) runs at niceness 19 and still writes in order."""
    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    with BackgroundWriter(nice=19) as bg:
        bg.submit(tmp_path / "a.bin", b"first")
        bg.submit(tmp_path / "b.bin", [b"sec", b"ond"])
        bg.flush()
        assert bg.niceness == 19
        assert _thread_niceness(bg) == 19
    assert (tmp_path / "a.bin").read_bytes() == b"first"
    assert (tmp_path / "b.bin").read_bytes() == b"second"
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before  # the caller's is untouched


@linux_only
def test_nice_zero_keeps_the_callers_priority(tmp_path: Path) -> None:
    own = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    with BackgroundWriter() as bg:
        bg.submit(tmp_path / "a.bin", b"x")
        bg.flush()
        assert bg.niceness is None
        assert _thread_niceness(bg) == own


@pytest.mark.parametrize("value", [-1, 20, True, 2.5, "5"])
def test_bad_nice_is_refused_naming_the_field(value: object) -> None:
    from sagemaker_debugger_ext.exceptions import ConfigValueError

    with pytest.raises(ConfigValueError, match=r"nice.*0 to 19") as err:
        BackgroundWriter(nice=value)  # type: ignore[arg-type]
    assert err.value.field == "nice"


@linux_only
def test_hook_writer_niceness_default_and_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Default 19; $SAGEMAKER_DEBUGGER_EXT_WRITER_NICE sets another (at least the caller's own:
    a thread's priority is never raised, also when pytest runs under ``nice``); the run reads
    back whole."""
    own = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    for env, expected in ((None, 19), ("7", max(7, own))):
        if env is None:
            monkeypatch.delenv(ENV, raising=False)
        else:
            monkeypatch.setenv(ENV, env)
        out = tmp_path / f"run-{env}"
        hook = Hook(
            out_dir=out, context=TrainingContext(), include_regex=["x"], save_config=SaveConfig(save_interval=1)
        )
        for step in range(3):
            hook.advance_step()
            hook.record_tensor_value("x", np.full(4, step, np.float32))
        hook._flush_writes()
        assert hook._writer.background is not None and _thread_niceness(hook._writer.background) == expected
        hook.close()
        trial = create_trial(str(out))
        assert [trial.tensor("x").value(s).tolist() for s in trial.steps()] == [[s] * 4 for s in range(3)]


@pytest.mark.parametrize("value", ["abc", "20", "-1", "1.5"])
def test_bad_environment_value_is_refused_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(ENV, value)
    with pytest.raises(HookConfigError, match=rf"{ENV}.*0 to 19") as err:
        Hook(out_dir=tmp_path / "run", context=TrainingContext())
    assert err.value.field == ENV
    assert repr(value) in str(err.value)
    assert not (tmp_path / "run").exists()
