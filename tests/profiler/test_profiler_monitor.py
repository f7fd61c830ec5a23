"""The system monitor process: SageMaker's file layout, sample rate, SIGTERM, live config."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import psutil
import pytest
from polling import wait_until

from sagemaker_debugger_ext._exceptions import ProfilerError
from sagemaker_debugger_ext.profiler import ProfilerTrial
from sagemaker_debugger_ext.profiler._monitor import MonitorOptions, SystemMonitor

REPO = Path(__file__).resolve().parents[2]


def _start(out: Path, *extra: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen(
        [sys.executable, "-m", "sagemaker_debugger_ext.profiler", "monitor", "--output-dir", str(out), *extra],
        env=env,
        stderr=subprocess.PIPE,
    )


def _timestamps(out: Path) -> list[float]:
    trial = ProfilerTrial(out)
    return sorted({e.timestamp for e in trial.get_system_metrics()})


def _wait_for(cond, timeout: float = 30.0):
    return wait_until(cond, timeout_s=timeout, interval_s=0.05)


def _stop(proc: subprocess.Popen[bytes]) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=10)


def test_monitor_writes_sagemaker_layout_at_requested_rate(tmp_path):
    """At 100 ms: per-minute files under system/incremental/<hour>/, well formed, rate within 25%."""
    proc = _start(tmp_path, "--interval-ms", "100", "--host", "algo-1")
    try:
        _wait_for(lambda: len(_timestamps(tmp_path)) >= 30)
    finally:
        assert _stop(proc) == 0
    files = sorted((tmp_path / "system" / "incremental").glob("*/*.json"))
    assert files
    last_ts = None
    for path in files:
        minute = int(path.name.split(".")[0])
        assert path.name == f"{minute}.algo-1.json" and minute % 60 == 0
        assert path.parent.name == datetime.fromtimestamp(minute, tz=UTC).strftime("%Y%m%d%H")
        for line in path.read_text().splitlines():
            obj = json.loads(line)
            assert set(obj) == {"Type", "Name", "Dimension", "Value", "NodeId", "Timestamp"}
            assert obj["NodeId"] == "algo-1"
            assert minute <= obj["Timestamp"] < minute + 60
            assert last_ts is None or obj["Timestamp"] >= last_ts
            last_ts = obj["Timestamp"]
    ts = _timestamps(tmp_path)
    mean_gap = (ts[-1] - ts[0]) / (len(ts) - 1)
    assert 0.075 <= mean_gap <= 0.125, mean_gap
    dims = {e.dimension for e in ProfilerTrial(tmp_path).get_system_metrics()}
    assert {"CPUUtilization", "I/OWaitPercentage", "Memory", "CPUUtilizationTotal"} <= dims
    cores = {e.name for e in ProfilerTrial(tmp_path).get_system_metrics() if e.dimension == "CPUUtilization"}
    assert len(cores) == os.cpu_count()


def test_monitor_exits_promptly_on_sigterm_with_long_interval(tmp_path):
    """SIGTERM ends a monitor sampling every minute within seconds, exit code 0, data flushed."""
    proc = _start(tmp_path, "--interval-ms", "60000")
    try:
        _wait_for(lambda: len(_timestamps(tmp_path)) >= 1)
        t0 = time.monotonic()
        code = _stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0
    assert time.monotonic() - t0 < 5
    assert len(_timestamps(tmp_path)) == 1


def test_monitor_applies_interval_from_watched_config(tmp_path):
    """Changing ProfilingIntervalInMilliseconds in the watched profilerconfig.json changes the rate."""
    config = tmp_path / "profilerconfig.json"
    config.write_text(json.dumps({"DisableProfiler": False, "ProfilingIntervalInMilliseconds": 100}))
    out = tmp_path / "out"
    proc = _start(out, "--interval-ms", "500", "--config-file", str(config))
    try:
        _wait_for(lambda: len(_timestamps(out)) >= 5)
        early = _timestamps(out)
        assert (early[-1] - early[0]) / (len(early) - 1) < 0.3  # the file's 100 ms won over the flag
        tmp = tmp_path / "cfg.tmp"
        tmp.write_text(json.dumps({"DisableProfiler": False, "ProfilingIntervalInMilliseconds": 400}))
        os.replace(tmp, config)
        changed_at = time.time()

        def _slow_gaps():
            ts = [t for t in _timestamps(out) if t > changed_at + 0.2]
            return len(ts) >= 4 and ts

        ts = _wait_for(_slow_gaps)
    finally:
        assert _stop(proc) == 0
    gaps = [b - a for a, b in itertools.pairwise(ts)]
    assert all(0.3 <= g <= 0.5 for g in gaps), gaps


def test_poll_config_applies_disable_and_interval(tmp_path):
    """poll_config reads DisableProfiler/interval when the file changes and ignores broken JSON."""
    config = tmp_path / "profilerconfig.json"
    config.write_text(json.dumps({"DisableProfiler": True, "ProfilingIntervalInMilliseconds": 200}))
    monitor = SystemMonitor(MonitorOptions(output_dir=tmp_path, interval_ms=500, config_file=config))
    assert monitor.poll_config() is True
    assert monitor.disabled and monitor.interval_s == pytest.approx(0.2)
    assert monitor.poll_config() is False  # unchanged file
    config.write_text("{not json")
    assert monitor.poll_config() is False
    assert monitor.disabled


@pytest.mark.parametrize(
    "kwargs,field",
    [({"interval_ms": 0}, "interval_ms"), ({"host": "../etc"}, "host"), ({"host_index": 0}, "host_index")],
    ids=["interval", "host", "host-index"],
)
def test_monitor_options_reject_bad_values(tmp_path, kwargs, field):
    """Bad monitor options raise ProfilerError naming the field."""
    with pytest.raises(ProfilerError, match=f"'{field}'"):
        MonitorOptions(output_dir=tmp_path, **kwargs)


def test_host_index_names_the_files(tmp_path):
    """--host-index N names the files algo-N whatever the host name."""
    assert MonitorOptions(output_dir=tmp_path, host="worker", host_index=3).file_suffix == "algo-3"
    assert MonitorOptions(output_dir=tmp_path, host="algo-2").file_suffix == "algo-2"


@pytest.mark.gpu
def test_monitor_records_gpu_metrics_on_gpu_machine(tmp_path):
    """With a GPU and nvidia-ml-py, samples include GPUUtilization and GPUMemoryUtilization."""
    pynvml = pytest.importorskip("pynvml")
    try:
        pynvml.nvmlInit()
        count = pynvml.nvmlDeviceGetCount()
    except pynvml.NVMLError:
        pytest.skip("no NVIDIA GPU")
    if count == 0:
        pytest.skip("no NVIDIA GPU")
    proc = _start(tmp_path, "--interval-ms", "100")
    try:
        _wait_for(lambda: len(_timestamps(tmp_path)) >= 5)
    finally:
        assert _stop(proc) == 0
    trial = ProfilerTrial(tmp_path)
    assert trial.has_gpu_metrics()
    names = {e.name for e in trial.get_system_metrics() if e.dimension == "GPUUtilization"}
    assert names == {f"gpu{i}" for i in range(count)}


def test_update_profiler_config_file_reaches_the_monitor(tmp_path):
    """update_profiler_config_file merges an UpdateTrainingJob ProfilerConfig; the monitor applies it."""
    from sagemaker_debugger_ext.profiler import update_profiler_config_file

    config = tmp_path / "profilerconfig.json"
    config.write_text(
        json.dumps(
            {
                "DisableProfiler": False,
                "ProfilingParameters": {"ProfilerEnabled": True, "LocalPath": str(tmp_path / "prof")},
            }
        )
    )
    monitor = SystemMonitor(MonitorOptions(output_dir=tmp_path, interval_ms=500, config_file=config))
    monitor.poll_config()
    new = update_profiler_config_file(
        config, {"DisableProfiler": False, "ProfilingIntervalInMilliseconds": 1000, "ProfilingParameters": {}}
    )
    assert new["ProfilingParameters"]["LocalPath"] == str(tmp_path / "prof")
    os.utime(config, ns=(time.time_ns(), time.time_ns() + 1_000_000))  # mtime tick on coarse filesystems
    assert monitor.poll_config() and monitor.interval_s == pytest.approx(1.0)
    update_profiler_config_file(config, {"DisableProfiler": True})
    os.utime(config, ns=(time.time_ns(), time.time_ns() + 2_000_000))
    assert monitor.poll_config() and monitor.disabled
    assert json.loads(config.read_text())["ProfilingParameters"]["ProfilerEnabled"] is False


def test_sampler_sample_layout_per_metric():
    """One sample: per core CPUUtilization then I/OWaitPercentage, the total, memory, then the disk
    and network rates (since the previous sample, or the sampler's creation), every event with the
    node and the sample's timestamp."""
    from sagemaker_debugger_ext.profiler._sampler import SystemSampler

    sampler = SystemSampler("algo-7")
    samples = {1000.0: sampler.sample(timestamp=1000.0), 1001.5: sampler.sample(timestamp=1001.5)}
    cores = psutil.cpu_count() or 1
    per_core = [("cpu", f"cpu{i}", d) for i in range(cores) for d in ("CPUUtilization", "I/OWaitPercentage")]
    head = [*per_core, ("cpu", "cpu_total", "CPUUtilizationTotal"), ("memory", "MemoryUsedPercent", "Memory")]
    rates = [
        ("disk", "disk", "ReadBytesPerSecond"),
        ("disk", "disk", "WriteBytesPerSecond"),
        ("network", "network", "Algorithm"),
        ("network", "network", "ReceiveBytesPerSecond"),
        ("network", "network", "TransmitBytesPerSecond"),
    ]
    for ts, events in samples.items():
        layout = [(e.type, e.name, e.dimension) for e in events]
        assert layout[: len(head)] == head
        assert layout[len(head) :] == [r for r in rates if r in layout[len(head) :]]  # as psutil has the counters
        assert {(e.node_id, e.timestamp) for e in events} == {("algo-7", ts)}
        for e in events:
            assert isinstance(e.value, float) and e.value >= 0
            if e.type == "cpu":
                assert e.value <= 100 and round(e.value, 2) == e.value
            elif e.type in ("disk", "network"):
                assert round(e.value, 1) == e.value
        total = next(e.value for e in events if e.dimension == "CPUUtilizationTotal")
        util = [e.value for e in events if e.dimension == "CPUUtilization"]
        assert abs(total - sum(util) / cores) <= 0.01


def test_sampler_gpu_events_per_gpu_after_the_host_metrics(monkeypatch):
    """With NVML reporting two GPUs (a stand-in ``pynvml`` module: NVML is hardware), each sample ends
    with GPUUtilization then GPUMemoryUtilization per GPU, memory in % of the total."""
    import types

    from sagemaker_debugger_ext.profiler._sampler import GpuProbe, SystemSampler

    nvml = types.ModuleType("pynvml")
    nvml.NVMLError = type("NVMLError", (Exception,), {})
    nvml.nvmlInit = nvml.nvmlShutdown = lambda: None
    nvml.nvmlDeviceGetCount = lambda: 2
    nvml.nvmlDeviceGetHandleByIndex = lambda i: i
    nvml.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(gpu=[30, 75][h])
    nvml.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(used=[1, 2][h], total=3)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    probe = GpuProbe()
    assert probe.count == 2
    events = SystemSampler("algo-7", probe).sample(timestamp=5.0)
    probe.close()
    gpu = [(e.type, e.name, e.dimension, e.value, e.node_id, e.timestamp) for e in events if e.type == "gpu"]
    assert gpu == [
        ("gpu", "gpu0", "GPUUtilization", 30.0, "algo-7", 5.0),
        ("gpu", "gpu0", "GPUMemoryUtilization", 33.33, "algo-7", 5.0),
        ("gpu", "gpu1", "GPUUtilization", 75.0, "algo-7", 5.0),
        ("gpu", "gpu1", "GPUMemoryUtilization", 66.67, "algo-7", 5.0),
    ]
    assert [e.type for e in events[-4:]] == ["gpu"] * 4
