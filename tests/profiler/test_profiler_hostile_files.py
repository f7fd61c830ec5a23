"""Profiler files with wrong JSON types are skipped and counted, never a crash (issue 16 item 2)."""

from __future__ import annotations

import json
from pathlib import Path

from sagemaker_debugger_ext.profiler._readers import FrameworkMetricsReader, SystemMetricsReader

GOOD = {
    "Type": "cpu",
    "Name": "cpu0",
    "Dimension": "CPUUtilization",
    "Value": 5.0,
    "NodeId": "algo-1",
    "Timestamp": 10.0,
}


def test_system_lines_with_wrong_types_are_counted(tmp_path: Path) -> None:
    folder = tmp_path / "system" / "incremental" / "2026112300"
    folder.mkdir(parents=True)
    lines = [
        GOOD,
        [1, 2],
        "text",
        5,
        {**GOOD, "Value": 10**400},
        {**GOOD, "Timestamp": {"a": 1}},
        {**GOOD, "Timestamp": 11.0},
    ]
    body = "\n".join(json.dumps(x) if not (isinstance(x, dict) and x.get("Value") == 10**400)
                     else json.dumps(GOOD).replace("5.0", "1" + "0" * 400) for x in lines)  # fmt: skip
    (folder / "10.algo-1.json").write_text(body + "\n" + "[" * 100000 + "\n")
    reader = SystemMetricsReader(tmp_path)
    assert reader.refresh() == 2
    assert [e.timestamp for e in reader.events] == [10.0, 11.0]
    assert reader.bad_lines == 6


def test_framework_events_with_wrong_types_are_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "framework" / "pevents" / "2026112300"
    folder.mkdir(parents=True)
    events = [
        {"ph": "M", "name": "process_name", "args": ["not", "a", "dict"]},
        {"ph": "M", "name": "process_name", "pid": "x", "args": {"name": "Step"}},
        {"ph": "M", "name": "process_name", "args": {"start_time_since_epoch_in_micros": "soon"}},
        {"ph": "X", "name": "ok", "ts": 5, "dur": 2, "pid": 0},
        {"ph": "X", "name": "bad-ts", "ts": [1], "dur": 2},
        {"ph": "X", "name": "bad-pid", "ts": 1, "pid": {"a": 1}},
        {"ph": "X", "name": "bad-args", "ts": 1, "args": [[1, 2, 3]]},
        {"ph": "X", "name": "bad-dur", "ts": 1, "dur": None},
    ]
    (folder / "100_algo-1_pythontimeline.json").write_text(json.dumps(events))
    (folder / "200_algo-1_pythontimeline.json").write_text("[" * 100000)
    reader = FrameworkMetricsReader(tmp_path)
    assert reader.refresh() == 1
    assert [(e.name, e.start_us, e.end_us) for e in reader.events] == [("ok", 5, 7)]
    assert reader.bad_files == 1
