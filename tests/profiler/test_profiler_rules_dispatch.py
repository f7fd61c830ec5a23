"""Profiler rule names come from the one registry, and the rule-container entry point runs them in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sagemaker_debugger_ext.cli import main as cli_main
from sagemaker_debugger_ext.profiler.rules import PROFILER_RULES, ProfilerReport, get_profiler_rule_class
from sagemaker_debugger_ext.rules._run_rule import PROFILER_RULE_NAMES

REPO = Path(__file__).resolve().parents[2]


def test_profiler_rule_names_are_the_registry() -> None:
    """The names the rule entry point and the CLI accept are exactly the registry's (no OverallFrameworkMetrics)."""
    assert set(PROFILER_RULE_NAMES) == {*PROFILER_RULES, ProfilerReport.NAME}
    assert "OverallFrameworkMetrics" not in PROFILER_RULE_NAMES
    for name in PROFILER_RULE_NAMES:
        assert get_profiler_rule_class(name).NAME == name


def test_cli_refuses_a_profiler_rule_that_does_not_exist(capsys, tmp_path: Path) -> None:
    """`rules run <trial> OverallFrameworkMetrics` is a one-line error before anything runs."""
    code = cli_main(["rules", "run", str(tmp_path), "OverallFrameworkMetrics", "--output-dir", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert "OverallFrameworkMetrics" in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "o").exists()


_AUDITED = ("subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork")


def test_rules_entry_point_runs_a_profiler_rule_without_a_second_python(profiler_data, tmp_path: Path) -> None:
    """`python -m sagemaker_debugger_ext.rules run` evaluates a profiler rule in its own process (no child)."""
    profiler_data.system(40, cpu=lambda i, c: 99.0)
    profiler_data.end()
    params = tmp_path / "params.json"
    params.write_text(json.dumps({"rule_to_invoke": "CPUBottleneck", "patience": "5", "scan_interval_us": "1000000"}))
    status = tmp_path / "status.json"
    argv = [
        "run", "--trial-path", str(profiler_data.root), "--rule-name", "MyCPU", "--rule-parameters-file", str(params),
        "--output-dir", str(tmp_path / "out"), "--status-file", str(status),
    ]  # fmt: skip
    code = (
        "import json, sys\n"
        "spawned = []\n"
        f"sys.addaudithook(lambda event, args: spawned.append(event) if event in {_AUDITED!r} else None)\n"
        "from sagemaker_debugger_ext.rules.__main__ import main\n"
        f"rc = main({argv!r})\n"
        "print(json.dumps({'rc': rc, 'spawned': spawned}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"rc": 0, "spawned": []}
    body = json.loads(status.read_text())
    assert body["RuleEvaluationStatus"] == "IssuesFound", body
