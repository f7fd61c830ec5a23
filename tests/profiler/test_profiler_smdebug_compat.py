"""Real smdebug 1.0.34 reads the system and framework metrics files we write."""

from __future__ import annotations

import time

from smdebug_reference import smdebug_json

from sagemaker_debugger_ext.profiler import (
    FrameworkMetricsWriter,
    SystemEvent,
    SystemMetricsWriter,
)

ORACLE = """
import json, sys
from smdebug.profiler.system_metrics_reader import LocalSystemMetricsReader
from smdebug.profiler.algorithm_metrics_reader import LocalAlgorithmMetricsReader
path, start, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys_events = LocalSystemMetricsReader(path).get_events(start, end)
fw_events = LocalAlgorithmMetricsReader(path).get_events(start, end)
print(json.dumps({
    "system": [[e.dimension, e.name, e.value, e.node_id] for e in sys_events],
    "framework": [[e.event_name, e.start_time, e.end_time, e.event_args.get("step_num")] for e in fw_events],
}))
"""


def test_smdebug_readers_read_our_files(tmp_path, smdebug_python):
    """smdebug's Local{System,Algorithm}MetricsReader return our events with the same values."""
    # Whole seconds at the start of a minute: every event lands in one per-minute file whose
    # name-timestamp equals the query start (a fractional t0 made smdebug's file filter drop
    # the first event when the file was named by an earlier whole second).
    t0 = float((int(time.time()) // 60 - 2) * 60)
    with SystemMetricsWriter(tmp_path, "algo-1") as w:
        for i in range(20):
            w.write(
                [
                    SystemEvent(
                        type="cpu",
                        name="cpu0",
                        dimension="CPUUtilization",
                        value=float(i),
                        node_id="algo-1",
                        timestamp=t0 + i,
                    )
                ]
            )
    with FrameworkMetricsWriter(tmp_path, "12-algo-1") as fw:
        for i in range(5):
            fw.record("Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", t0 + i, t0 + i + 0.5, step=i, mode="TRAIN")
    start, end = int(t0 * 1e6), int((t0 + 40) * 1e6)
    got = smdebug_json(smdebug_python, ORACLE, str(tmp_path), str(start), str(end))
    assert [v for _, _, v, _ in got["system"]] == [float(i) for i in range(20)]
    assert {tuple(x[:2]) + (x[3],) for x in got["system"]} == {("CPUUtilization", "cpu0", "algo-1")}
    assert [x[3] for x in got["framework"]] == ["0", "1", "2", "3", "4"]
    first = got["framework"][0]
    assert first[0] == "Step:ModeKeys.TRAIN"
    assert first[1] == round(t0 * 1e6) and first[2] - first[1] == 500000
