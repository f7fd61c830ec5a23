"""The composed hook: one step clock, nothing opened by ``__init__`` but smdebug's out_dir check."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext import modes
from sagemaker_debugger_ext.exceptions import HookConfigError
from sagemaker_debugger_ext.hooks import Hook, SaveConfig
from sagemaker_debugger_ext.hooks._clock import StepClock
from sagemaker_debugger_ext.hooks._context import TrainingContext
from sagemaker_debugger_ext.trials import create_trial

PACKAGE = Path(__file__).resolve().parents[2] / "sagemaker_debugger_ext"


def test_clock_advance_counts_global_and_mode_steps() -> None:
    clock = StepClock()
    clock.mode = modes.TRAIN
    clock.advance()
    clock.advance()
    clock.mode = modes.EVAL
    clock.advance()
    assert (clock.step, clock.mode_steps[modes.TRAIN], clock.mode_steps[modes.EVAL]) == (2, 1, 0)
    assert clock.mode_steps[modes.GLOBAL] == 2 and (clock.step_mode, clock.step_mode_step) == (modes.EVAL, 0)
    clock.advance(at=7)  # XGBoost's iteration
    assert (clock.step, clock.mode_steps[modes.EVAL], clock.open) == (7, 7, True)
    clock.mode = modes.TRAIN
    clock.advance(mode=modes.EVAL)  # a step in the last step's mode, whatever the current one
    assert (clock.step, clock.step_mode, clock.step_mode_step, clock.mode_steps[modes.TRAIN]) == (8, modes.EVAL, 8, 1)


def test_only_the_clock_advances_step_counters() -> None:
    """Every way of opening a step (long, quiet, XGBoost's after training) goes through
    ``StepClock.advance``: no other module assigns a step counter."""
    assigns = re.compile(r"(\.step\s*(\+=|=[^=])|mode_steps\[[^]]*\]\s*(\+=|=[^=])|step_mode_step\s*=[^=])")
    offenders = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in (PACKAGE / "hooks").rglob("*.py")
        if path.name != "_clock.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if assigns.search(line) and "self.step = step" not in line  # StepOutput's own record of its step
    ]
    assert offenders == []


def test_init_opens_nothing(tmp_path: Path) -> None:
    """No folder, file or thread until the first write; then the writer thread runs."""
    before = {t.ident for t in threading.enumerate()}
    out = tmp_path / "run"
    hook = Hook(out_dir=out, include_regex=["x"], save_config=SaveConfig(save_interval=1), context=TrainingContext())
    assert not out.exists() and hook._writer.background is None
    assert {t.ident for t in threading.enumerate()} <= before  # no thread started (others may end)
    hook.advance_step()
    assert not out.exists()  # a step that has written nothing yet
    hook.record_tensor_value("x", np.ones(3, np.float32))
    assert hook._writer.background is not None and out.is_dir()
    hook.close()
    assert create_trial(str(out)).tensor("x").steps() == [0]


def test_finished_run_folder_is_still_refused_at_construction(tmp_path: Path) -> None:
    (tmp_path / "training_job_end.ts").write_text("")
    with pytest.raises(HookConfigError, match="out_dir") as err:
        Hook(out_dir=tmp_path, context=TrainingContext())
    assert err.value.field == "out_dir"


def test_profiler_config_is_read_at_the_first_step(tmp_path: Path) -> None:
    """The profiler's config is read when training starts, not when the hook is made."""
    cfg = tmp_path / "profilerconfig.json"
    hook = Hook(out_dir=tmp_path / "run", context=TrainingContext(profiler_config_path=str(cfg)))
    assert hook._metrics is None
    cfg.write_text(json.dumps({"ProfilingParameters": {"LocalPath": str(tmp_path / "prof")}}))
    for _ in range(2):
        hook.advance_step()
    hook.close()
    files = list((tmp_path / "prof").rglob("*_pythontimeline.json"))
    assert len(files) == 1
    steps = [e for e in json.loads(files[0].read_text()) if e.get("name") == "Step:ModeKeys.GLOBAL"]
    assert [e["args"]["step_num"] for e in steps] == ["0", "1"]
