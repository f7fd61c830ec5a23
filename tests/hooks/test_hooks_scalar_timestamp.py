"""save_scalar(..., timestamp=ts) writes ts as the event's wall_time (smdebug's behaviour)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sagemaker_debugger_ext.format import decode_tensor_record, read_records
from sagemaker_debugger_ext.hooks import Hook, HookConfigError, SaveConfig, TrainingContext


def _wall_times(run: Path) -> dict[str, float]:
    out = {}
    for path in sorted((run / "events").rglob("*.tfevents")):
        for rec in read_records(path.read_bytes()):
            dec = decode_tensor_record(rec.payload)
            if dec is not None:
                out[dec.tag] = dec.wall_time
    return out


def test_scalar_timestamp_is_event_wall_time(tmp_path: Path) -> None:
    hook = Hook(out_dir=tmp_path / "run", save_config=SaveConfig(save_interval=1), context=TrainingContext())
    hook.advance_step()
    before = time.time()
    hook.save_scalar("lr", 0.1, timestamp=1234567890.5)
    hook.save_scalar("now", 2.0)
    hook.close()
    times = _wall_times(tmp_path / "run")
    assert times["scalar/lr"] == 1234567890.5
    assert before - 1 <= times["scalar/now"] <= time.time() + 1


def test_scalar_timestamp_must_be_a_number(tmp_path: Path) -> None:
    hook = Hook(out_dir=tmp_path / "run", context=TrainingContext())
    with pytest.raises(HookConfigError, match="timestamp"):
        hook.save_scalar("lr", 0.1, timestamp="yesterday")  # type: ignore[arg-type]
    hook.close()
