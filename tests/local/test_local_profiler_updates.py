"""update_profiler / disable_profiling / enable_default_profiling act on a running local job."""

from __future__ import annotations

import itertools
import json
import statistics
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

ROLE = "arn:aws:iam::123456789012:role/local"


def _timestamps(profiler_dir: Path, *, after: float = 0.0) -> list[float]:
    """Distinct sample timestamps (one per monitor sample) in the system metrics files."""
    stamps: set[float] = set()
    for path in (profiler_dir / "system" / "incremental").glob("*/*.algo-1.json"):
        for line in path.read_text().splitlines():
            try:
                ts = float(json.loads(line)["Timestamp"])
            except (ValueError, KeyError):
                continue  # a line being written
            if ts > after:
                stamps.add(ts)
    return sorted(stamps)


def _median_gap(stamps: list[float]) -> float:
    return statistics.median(b - a for a, b in itertools.pairwise(stamps))


def _monitor_pid(store: Any, job: str) -> int | None:
    return store.read_state(job).get("Pids", {}).get("monitor")


def test_profiler_updates_reach_a_running_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripts_dir: Path, poll: Any, job_pids_alive: Any
) -> None:
    """The monitor follows a new interval live, stops on disable, restarts on enable; new rules run."""
    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    from sagemaker_debugger_ext import (
        Estimator,
        ProfilerConfig,
        ProfilerRule,
        rule_configs,
    )
    from sagemaker_debugger_ext.local.store._job_store import pid_alive

    done = tmp_path / "done"
    est = Estimator(
        image_uri="local-image", role=ROLE, instance_count=1, instance_type="local",
        entry_point="train_until.py", source_dir=str(scripts_dir), output_path=(tmp_path / "out").as_uri(),
        hyperparameters={"done-file": str(done)},
        profiler_config=ProfilerConfig(system_monitor_interval_millis=500),
    )  # fmt: skip
    est.fit(job_name="prof-updates", wait=False, logs="None")
    job = est.latest_training_job
    client = est.sagemaker_session.sagemaker_client.training
    store = client.store
    profiler_dir = store.paths("prof-updates").profiler_dir
    try:
        assert job.describe()["ProfilingStatus"] == "Enabled"
        # 1. a new interval: samples 500 ms apart, then 100 ms apart (median gap, +-25 %)
        poll(lambda: len(_timestamps(profiler_dir)) >= 3, timeout_s=30, what="samples at 500 ms")
        assert 0.375 <= _median_gap(_timestamps(profiler_dir)) <= 0.625
        first_monitor = _monitor_pid(store, "prof-updates")
        changed_at = time.time()
        est.update_profiler(system_monitor_interval_millis=100)
        fast = poll(
            lambda: (s := _timestamps(profiler_dir, after=changed_at + 0.6)) and len(s) >= 12 and s,
            timeout_s=30, what="samples at 100 ms",
        )  # fmt: skip
        assert 0.075 <= _median_gap(fast) <= 0.125
        assert _monitor_pid(store, "prof-updates") == first_monitor  # the same monitor, live
        config = json.loads(
            (store.paths("prof-updates").host_root("algo-1") / "input" / "config" / "profilerconfig.json").read_text()
        )
        assert config["ProfilingIntervalInMilliseconds"] == 100
        # 2. disable: the monitor process ends, describe says Disabled
        est.disable_profiling()
        assert job.describe()["ProfilingStatus"] == "Disabled"
        root = store.paths("prof-updates").root
        poll(
            lambda: not job_pids_alive({"Pids": {"m": first_monitor}}, root, "prof-updates"),
            timeout_s=20,
            what="the monitor to exit",
        )
        assert _monitor_pid(store, "prof-updates") is None
        # 3. enable again: a new monitor samples again; a new profiler rule runs
        enabled_at = time.time()
        est.enable_default_profiling()
        assert job.describe()["ProfilingStatus"] == "Enabled"
        second = poll(lambda: _monitor_pid(store, "prof-updates"), timeout_s=20, what="a new monitor")
        assert second != first_monitor and pid_alive(second)
        poll(lambda: len(_timestamps(profiler_dir, after=enabled_at)) >= 3, timeout_s=30, what="new samples")
        est.update_profiler(rules=[ProfilerRule.sagemaker(rule_configs.CPUBottleneck())])
        rule_pid = poll(
            lambda: store.read_state("prof-updates").get("Pids", {}).get("rule:CPUBottleneck"),
            timeout_s=20, what="the new rule's process",
        )  # fmt: skip
        assert pid_alive(rule_pid)
    finally:
        done.write_text("")
    job.wait(logs="None")
    desc = job.describe()
    assert desc["TrainingJobStatus"] == "Completed", desc.get("FailureReason")
    summary = {r["RuleConfigurationName"]: r for r in est.rule_job_summary()}
    assert summary["CPUBottleneck"]["RuleEvaluationStatus"] in ("NoIssuesFound", "IssuesFound"), summary
    out = tmp_path / "out" / "prof-updates"
    assert list((out / "profiler-output" / "system" / "incremental").glob("*/*.algo-1.json"))
    assert (out / "rule-output" / "CPUBottleneck").is_dir()
    paths = store.paths("prof-updates")
    assert job_pids_alive(store.read_state("prof-updates"), paths.root, "prof-updates") == {}
    assert job_pids_alive({"Pids": {"monitor": second}}, paths.root, "prof-updates") == {}


def test_enable_profiling_on_a_job_started_without_it(
    make_request, tmp_path: Path, poll: Any, job_pids_alive: Any
) -> None:  # type: ignore[no-untyped-def]
    """A job started with DisableProfiler gets its config file, a monitor, synced metrics and end markers."""
    from sagemaker_debugger_ext._exceptions import LocalJobInputError
    from sagemaker_debugger_ext.local import LocalTrainingClient

    client = LocalTrainingClient(settings={"SyncIntervalSeconds": 0.2})
    done = tmp_path / "done"
    req = make_request("late-prof", hook=False, ProfilerConfig={"DisableProfiler": True})
    req["HyperParameters"].update({"sagemaker_program": '"train_until.py"', "done-file": f'"{done}"'})
    client.create_training_job(**req)
    paths = client.store.paths("late-prof")
    config = paths.host_root("algo-1") / "input" / "config" / "profilerconfig.json"
    try:
        poll(lambda: client.describe_training_job("late-prof")["SecondaryStatus"] == "Training", what="training")
        assert client.describe_training_job("late-prof")["ProfilingStatus"] == "Disabled"
        assert not config.exists() and "monitor" not in client.store.read_state("late-prof")["Pids"]
        client.update_training_job(
            "late-prof", ProfilerConfig={"DisableProfiler": False, "ProfilingIntervalInMilliseconds": 100}
        )
        assert client.describe_training_job("late-prof")["ProfilingStatus"] == "Enabled"
        monitor = poll(lambda: client.store.read_state("late-prof")["Pids"].get("monitor"), what="the monitor")
        written = json.loads(config.read_text())
        assert written["ProfilingParameters"]["LocalPath"] == str(paths.profiler_dir)
        assert written["ProfilingParameters"]["ProfilerEnabled"] is True
        poll(lambda: len(_timestamps(paths.profiler_dir)) >= 3, what="samples")
        with pytest.raises(
            LocalJobInputError,
            match=r"'ProfilerConfig.ProfilingIntervalInMilliseconds' must be a positive integer \(got 0\)",
        ):
            client.update_training_job("late-prof", ProfilerConfig={"ProfilingIntervalInMilliseconds": 0})
        with pytest.raises(LocalJobInputError, match="RuleConfigurationName"):
            client.update_training_job(
                "late-prof",
                ProfilerRuleConfigurations=[{"RuleConfigurationName": "A", "RuleEvaluatorImage": "x"}] * 2,
            )
    finally:
        done.write_text("")
    desc = client.wait("late-prof", timeout_s=60)
    assert desc["TrainingJobStatus"] == "Completed", desc.get("FailureReason")
    assert job_pids_alive({"Pids": {"monitor": monitor}}, paths.root, "late-prof") == {}
    synced = tmp_path / "out" / "late-prof" / "profiler-output"
    assert list((synced / "system" / "incremental").glob("*/*.algo-1.json"))
    assert (synced / "training_job_end.ts").exists()
