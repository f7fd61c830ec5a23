"""ProfilerReport HTML (every image a real PNG) and a real workload through the real monitor."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import struct
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from polling import wait_until

from sagemaker_debugger_ext.cli import main as cli_main
from sagemaker_debugger_ext.profiler import ProfilerTrial, render_profiler_report
from sagemaker_debugger_ext.profiler.rules import PROFILER_RULES

REPO = Path(__file__).resolve().parents[2]
PNG_SIG = b"\x89PNG\r\n\x1a\n"


class _Images(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.srcs: list[str] = []
        self.svgs = 0

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.srcs.append(dict(attrs).get("src") or "")
        elif tag == "svg":
            self.svgs += 1


def assert_images_valid(html_path: Path) -> int:
    """Every <img> is a non-empty PNG (or SVG) data URI; returns how many images."""
    parser = _Images()
    parser.feed(html_path.read_text(encoding="utf-8"))
    assert parser.srcs or parser.svgs
    for src in parser.srcs:
        head, _, payload = src.partition(",")
        if head == "data:image/svg+xml;base64":
            assert b"<svg" in base64.b64decode(payload)
            continue
        assert head == "data:image/png;base64", head
        png = base64.b64decode(payload, validate=True)
        assert png[:8] == PNG_SIG and png[12:16] == b"IHDR"
        width, height = struct.unpack(">II", png[16:24])
        assert width > 100 and height > 50 and len(png) > 1000
    return len(parser.srcs) + parser.svgs


def test_report_images_are_pngs_and_table_lists_rules(profiler_data, tmp_path):
    """render_profiler_report writes an HTML whose images are PNGs and whose table names every rule."""
    profiler_data.system(60, cpu=lambda i, c: 50.0 + c)
    profiler_data.steps([0.1] * 50 + [2.0] * 3)
    profiler_data.end()
    out = render_profiler_report(profiler_data.root, tmp_path / "report")
    assert out == tmp_path / "report" / "profiler-report.html"
    assert assert_images_valid(out) == 4  # CPU, memory, step histogram, step timeline; no GPU plot without GPUs
    text = out.read_text()
    for rule in ("StepOutlier", "CPUBottleneck", "LowGPUUtilization", "MaxInitializationTime", "Dataloader"):
        assert f"<b>{rule}</b>" in text
    assert "Times triggered" in text and "Recommendation" in text
    assert "no GPU" in text
    assert json.loads((tmp_path / "report/profiler-reports/StepOutlier.json").read_text())["RuleName"] == "StepOutlier"


def test_no_gpu_note_said_once(profiler_data, tmp_path):
    """Without GPU metrics the note is one line naming the GPU rules; their rows say "not evaluated"."""
    profiler_data.system(30)
    profiler_data.end()
    text = render_profiler_report(profiler_data.root, tmp_path / "report").read_text()
    assert text.count("no GPU") == 1
    line = re.search(r"<th>GPU metrics</th><td>([^<]*)</td>", text).group(1)
    assert line.startswith("none (no GPU on the training machine): ")
    assert {"BatchSize", "GPUMemoryIncrease", "LoadBalancing", "LowGPUUtilization"} <= set(re.findall(r"\w+", line))
    assert text.count('<tr class="not-evaluated">') == 4
    assert 'alt="GPU utilization"' not in text  # no empty GPU plot
    assert "no step durations to plot" in text and "Step duration histogram" not in text


def test_violations_without_triggers_are_explained(profiler_data, tmp_path):
    """A rule with violations but no trigger says why in its row; the counts are explained above the table."""
    profiler_data.system(30, cpu=lambda i, c: 95.0)  # busy CPU, no GPU: every sample is a CPU bottleneck
    profiler_data.steps([0.1] * 40 + [2.0] * 2)  # 2 outliers, StepOutlier fires above n_outliers=10
    profiler_data.end()
    text = render_profiler_report(profiler_data.root, tmp_path / "report").read_text()
    assert "<b>Times triggered</b> counts" in text and "<b>Violations</b> counts" in text
    row = re.search(r"<b>CPUBottleneck</b>.*?</tr>", text).group(0)
    cells = re.findall(r"<td>(.*?)</td>", row)
    assert cells[2:4] == ["0", "30"]  # times triggered, violations
    assert "30 of 30 data points violated, but the rule judges only after patience=1000 data points" in row
    outlier_row = re.search(r"<b>StepOutlier</b>.*?</tr>", text).group(0)
    assert "2 outlier steps, not more than n_outliers=10, so it did not trigger." in outlier_row


def test_step_timeline_log_axis_when_durations_span_orders(profiler_data):
    """Step durations from 1 ms to 5 s are drawn on a log axis."""
    from sagemaker_debugger_ext.profiler import _plots
    from sagemaker_debugger_ext.profiler._trial import ProfilerTrial

    profiler_data.steps([0.001] * 20 + [5.0])
    trial = ProfilerTrial(profiler_data.root)
    trial.refresh()
    steps = trial.step_events()
    assert _plots.step_duration_yscale(steps) == "log"
    assert _plots.step_duration_yscale(steps[:20]) == "linear"


def test_cli_report_subcommand_renders_folder(profiler_data, tmp_path, capsys):
    """`sagemaker-debugger-ext report PATH --out DIR` prints the HTML path."""
    profiler_data.system(10)
    code = cli_main(
        ["report", str(profiler_data.root), "--out", str(tmp_path / "r"), "--param", "StepOutlier_stddev=2"]
    )
    assert code == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "r" / "profiler-report.html")
    assert_images_valid(tmp_path / "r" / "profiler-report.html")


def test_cli_report_bad_param_is_one_line_error(profiler_data, tmp_path, capsys):
    """A malformed --param is reported as an error, exit code 2."""
    assert cli_main(["report", str(profiler_data.root), "--param", "Nope_x=1"]) == 2
    assert "'parameter' must be" in capsys.readouterr().err


WORKLOAD = r"""
import os, sys, time
from sagemaker_debugger_ext.profiler import FrameworkMetricsWriter
prof = sys.argv[1]
end = time.time() + 2.5
while time.time() < end:  # slow, CPU-bound start
    pass
w = FrameworkMetricsWriter(prof, f"{os.getpid()}-algo-1", close_interval_s=0.5)
for step in range(160):
    t0 = time.time()
    x = 0
    for i in range(150000):  # CPU-bound "data loader"
        x += i * i
    w.record("DataLoaderIterator", "dataloader", t0, time.time(), step, "TRAIN")
    # Injected slow steps: 4 in 160, so they are 2.5 % of the steps and stand far above
    # mean + 3 std (about 0.5 x their extra time) even when load slows the normal steps.
    if step in (40, 80, 120, 150):
        stop = time.time() + 0.6
        while time.time() < stop:
            pass
    w.record("Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", t0, time.time(), step, "TRAIN")
w.close()
"""


@pytest.mark.slow
def test_real_workload_through_real_monitor_and_rule_process(tmp_path):
    """Monitor + ProfilerReport process on a slow-starting, CPU-bound job with slow steps."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    prof = tmp_path / "profiler"
    prof.mkdir()
    params = {
        "MaxInitializationTime_threshold": "0.03",
        "StepOutlier_n_outliers": "2",
        "CPUBottleneck_patience": "5",
        "CPUBottleneck_threshold": "30",
        "CPUBottleneck_cpu_threshold": "45",
    }
    params.update({f"{rule}_scan_interval_us": "1000000" for rule in PROFILER_RULES})  # every sub-rule
    params_file = tmp_path / "params.json"
    params_file.write_text(json.dumps({"rule_to_invoke": "ProfilerReport", **params}))
    status = tmp_path / "status.json"
    out = tmp_path / "rule-out"
    monitor = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sagemaker_debugger_ext.profiler",
            "monitor",
            "--output-dir",
            str(prof),
            "--interval-ms",
            "100",
        ],
        env=env,
    )
    rule = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sagemaker_debugger_ext.profiler.rules",
            "run",
            "--trial-path",
            str(prof),
            "--rule-name",
            "ProfilerReport",
            "--rule-parameters-file",
            str(params_file),
            "--output-dir",
            str(out),
            "--status-file",
            str(status),
        ],
        env=env,
    )
    try:
        wait_until(lambda: list(prof.glob("system/incremental/*/*.json")), timeout_s=30, what="first system metrics")
        script = tmp_path / "train.py"
        script.write_text(WORKLOAD)
        subprocess.run([sys.executable, str(script), str(prof)], env=env, check=True, timeout=120)
        monitor.send_signal(signal.SIGTERM)
        assert monitor.wait(timeout=10) == 0
        (prof / "training_job_end.ts").touch()
        assert rule.wait(timeout=120) == 0
    finally:
        for proc in (monitor, rule):
            if proc.poll() is None:
                proc.kill()
    body = json.loads(status.read_text())
    assert body["RuleEvaluationStatus"] == "IssuesFound", body
    reports = out / "profiler-output" / "profiler-reports"
    for name in ("MaxInitializationTime", "StepOutlier", "CPUBottleneck"):
        report = json.loads((reports / f"{name}.json").read_text())
        assert report["RuleTriggered"] >= 1, (name, report)
    assert json.loads((reports / "OverallSystemUsage.json").read_text())["RuleTriggered"] == 0
    gpu = ProfilerTrial(prof).has_gpu_metrics()  # on a GPU machine (make gpu-check) the report adds its timeline
    assert assert_images_valid(out / "profiler-output" / "profiler-report.html") == (5 if gpu else 4)
