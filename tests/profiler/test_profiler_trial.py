"""Framework timeline writer and the profiler trial reader."""

from __future__ import annotations

import json
import re
import time

import pytest

from sagemaker_debugger_ext._exceptions import ProfilerError
from sagemaker_debugger_ext.profiler import (
    FrameworkMetricsWriter,
    ProfilerTrial,
    SystemMetricsWriter,
)
from sagemaker_debugger_ext.profiler._events import SystemEvent

T0 = 1_700_000_000.0


def test_timeline_file_matches_smdebug_layout(tmp_path):
    """The writer produces framework/pevents/<hour>/<end_us>_<node>_pythontimeline.json as smdebug."""
    with FrameworkMetricsWriter(tmp_path, "42-algo-1") as w:
        w.record("Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", T0, T0 + 0.25, step=0, mode="TRAIN")
        w.record("forward", "forward", T0 + 0.01, T0 + 0.1, step=0, mode="ModeKeys.TRAIN")
        w.record("Step:ModeKeys.EVAL", "Step:ModeKeys.EVAL", T0 + 1, T0 + 1.5, step=0, mode="EVAL")
    (path,) = (tmp_path / "framework" / "pevents").glob("*/*.json")
    end_us = int((T0 + 1.5) * 1e6)
    assert path.name == f"{end_us}_42-algo-1_pythontimeline.json"
    assert path.parent.name == "2023111422"
    data = json.loads(path.read_text())
    assert data[0]["name"] == "process_name" and "start_time_since_epoch_in_micros" in data[0]["args"]
    steps = [e for e in data if e.get("ph") == "X" and e["name"].startswith("Step")]
    assert steps[0]["args"]["step_num"] == "0" and steps[0]["dur"] == 250000
    base = data[0]["args"]["start_time_since_epoch_in_micros"]
    assert base + steps[0]["ts"] == int(T0 * 1e6)
    assert not (tmp_path / "42-algo-1.tmp").exists()


def test_writer_rotates_on_size(tmp_path):
    """A small RotateMaxFileSizeInBytes splits events over several complete files."""
    with FrameworkMetricsWriter(tmp_path, "n", rotate_max_bytes=300) as w:
        for i in range(10):
            w.record("Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", T0 + i, T0 + i + 0.5, step=i, mode="TRAIN")
    files = sorted((tmp_path / "framework" / "pevents").glob("*/*.json"))
    assert len(files) > 2
    trial = ProfilerTrial(tmp_path)
    assert [e.step for e in trial.step_events()] == list(range(10))


def test_from_profiler_config_uses_local_path_and_disable(tmp_path):
    """from_profiler_config honours ProfilingParameters.LocalPath and returns None when disabled."""
    cfg = tmp_path / "profilerconfig.json"
    cfg.write_text(json.dumps({"DisableProfiler": False, "ProfilingParameters": {"LocalPath": str(tmp_path / "prof")}}))
    writer = FrameworkMetricsWriter.from_profiler_config(cfg, "7-algo-1")
    assert writer is not None
    t = time.time()
    writer.record("Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", t, t + 0.01, step=1, mode="TRAIN")
    writer.close()
    assert list((tmp_path / "prof" / "framework" / "pevents").glob("*/*_7-algo-1_pythontimeline.json"))
    cfg.write_text(json.dumps({"DisableProfiler": True}))
    assert FrameworkMetricsWriter.from_profiler_config(cfg, "7-algo-1") is None


@pytest.mark.parametrize("node", ["", "a/b", ".."], ids=["empty", "slash", "dotdot"])
def test_writer_rejects_node_ids_that_escape(tmp_path, node):
    """A node id that would leave the profiler folder is refused."""
    with pytest.raises(ProfilerError, match="'node_id'"):
        FrameworkMetricsWriter(tmp_path, node)


def test_record_after_close_and_negative_duration_raise(tmp_path):
    """Misuse raises ProfilerError."""
    w = FrameworkMetricsWriter(tmp_path, "n")
    with pytest.raises(ProfilerError, match="'end_s'"):
        w.record("x", "x", T0 + 1, T0, step=0, mode="TRAIN")
    w.close()
    with pytest.raises(ProfilerError, match="closed"):
        w.record("x", "x", T0, T0 + 1, step=0, mode="TRAIN")


def test_trial_time_range_queries_and_end_marker(tmp_path):
    """get_system_metrics/get_framework_metrics filter by µs range; end marker at root or system/."""
    with SystemMetricsWriter(tmp_path, "algo-1") as w:
        for i in range(130):  # spans three minute files
            w.write(
                [
                    SystemEvent(
                        type="cpu",
                        name="cpu0",
                        dimension="CPUUtilization",
                        value=float(i),
                        node_id="algo-1",
                        timestamp=T0 + i,
                    )
                ]
            )
    trial = ProfilerTrial(tmp_path)
    assert len(list((tmp_path / "system/incremental").glob("*/*.json"))) == 3
    got = trial.get_system_metrics(int((T0 + 10) * 1e6), int((T0 + 20) * 1e6))
    assert [e.value for e in got] == [float(i) for i in range(10, 20)]
    assert trial.first_timestamp == int(T0 * 1e6)
    assert not trial.training_ended()
    (tmp_path / "system" / "training_job_end.ts").touch()
    assert trial.training_ended()


def test_system_reader_skips_half_written_line_until_complete(tmp_path):
    """A torn last line is read on a later refresh once its newline arrives."""
    d = tmp_path / "system/incremental/2023111422"
    d.mkdir(parents=True)
    line = json.dumps(
        {"Type": "cpu", "Name": "cpu0", "Dimension": "CPUUtilization", "Value": 5, "NodeId": "algo-1", "Timestamp": T0}
    )
    f = d / "1699999980.algo-1.json"
    f.write_text(line + "\n" + line[:20])
    trial = ProfilerTrial(tmp_path)
    assert len(trial.get_system_metrics()) == 1
    f.write_text(line + "\n" + line + "\n")
    trial.refresh()
    assert len(trial.get_system_metrics()) == 2


def test_dataframes(tmp_path):
    """Pandas DataFrames carry the metrics with the documented columns."""
    pytest.importorskip("pandas")
    with SystemMetricsWriter(tmp_path, "algo-1") as w:
        w.write(
            [
                SystemEvent(
                    type="cpu", name="cpu0", dimension="CPUUtilization", value=1.0, node_id="algo-1", timestamp=T0
                )
            ]
        )
    with FrameworkMetricsWriter(tmp_path, "n") as fw:
        fw.record("Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", T0, T0 + 2, step=3, mode="TRAIN")
    trial = ProfilerTrial(tmp_path)
    sdf = trial.system_metrics_df()
    assert list(sdf["dimension"]) == ["CPUUtilization"]
    fdf = trial.framework_metrics_df()
    assert fdf.loc[0, "step"] == 3 and fdf.loc[0, "duration_s"] == pytest.approx(2.0)
    assert fdf.loc[0, "mode"] == "TRAIN"


def test_reads_smdebug_timeline_sample(tmp_path):
    """A timeline in smdebug's exact shape (no mode arg) is read with steps and modes."""
    d = tmp_path / "framework/pevents/2020071317"
    d.mkdir(parents=True)
    data = [
        {"name": "process_name", "ph": "M", "pid": 0, "args": {"start_time_since_epoch_in_micros": 1594662605425850}},
        {"name": "process_sort_index", "ph": "M", "pid": 0, "args": {"sort_index": 0}},
        {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "Step:ModeKeys.TRAIN"}},
        {
            "name": "Step:ModeKeys.TRAIN",
            "pid": 1,
            "ph": "X",
            "ts": 2664345,
            "dur": 9020725,
            "args": {"pid": 905, "step_num": "0"},
        },
    ]
    (d / "1594662624718694_905-b88ab1bb8259_pythontimeline.json").write_text(json.dumps(data))
    (event,) = ProfilerTrial(tmp_path).step_events("TRAIN")
    assert event.start_us == 1594662605425850 + 2664345 and event.step == 0
    assert event.node_id == "905-b88ab1bb8259"


def test_unsupported_uri_is_refused():
    """URIs other than file:// and s3:// are refused with the field named."""
    with pytest.raises(ProfilerError, match=re.escape("'path'")):
        ProfilerTrial("gs://bucket/job/profiler-output")
