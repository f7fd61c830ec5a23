"""``make bench`` history: each run appends its figures with the commit; ``compare`` shows the change."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks._history import append_run, compare, load_history

REPO = Path(__file__).resolve().parents[2]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "bench@example.com")
    _git(tmp_path, "config", "user.name", "bench")
    (tmp_path / "code.py").write_text("x = 1\n")
    _git(tmp_path, "add", "code.py")
    _git(tmp_path, "commit", "-q", "-m", "first")
    return tmp_path


def _commit(repo: Path, text: str) -> str:
    (repo / "code.py").write_text(text)
    _git(repo, "commit", "-q", "-am", text)
    return _git(repo, "rev-parse", "HEAD")


def test_each_run_appends_its_numeric_figures_with_the_commit(repo: Path) -> None:
    history = repo / "history.jsonl"
    head = _git(repo, "rev-parse", "HEAD")
    append_run(
        {"reader_vs_smdebug": 15.5, "note": "text is not a figure", "flag": True}, ["bench_format"], path=history
    )
    (repo / "code.py").write_text("x = 2\n")  # uncommitted change: the run is marked dirty
    append_run({"hook_overhead": 0.04}, ["bench_hooks"], path=history)
    _git(repo, "checkout", "code.py")
    (repo / "benchmarks").mkdir()
    (repo / "benchmarks" / "results.json").write_text("{}")
    _git(repo, "add", "benchmarks/results.json")
    _git(repo, "commit", "-q", "-m", "results")
    (repo / "benchmarks" / "results.json").write_text('{"a": 1}')  # the run's own output: not dirty
    append_run({"a": 1}, ["bench_a"], path=history)
    first, second, third = load_history(history)
    assert third["dirty"] is False
    assert first["commit"] == head
    assert first["dirty"] is False
    assert first["results"] == {"reader_vs_smdebug": 15.5}
    assert first["benchmarks"] == ["bench_format"]
    assert second["dirty"] is True
    assert second["results"] == {"hook_overhead": 0.04}


def test_compare_prints_the_change_against_the_previous_commits_run(repo: Path) -> None:
    history = repo / "history.jsonl"
    append_run({"reader_vs_smdebug": 16.0, "lm_overhead": 0.10, "gone": 1.0}, ["a"], path=history)
    old = _git(repo, "rev-parse", "HEAD")
    append_run({"reader_vs_smdebug": 15.0}, ["a"], path=history)  # the newest run of the old commit wins
    new = _commit(repo, "x = 3\n")
    append_run({"reader_vs_smdebug": 10.5, "fresh": 2.0}, ["a"], path=history)
    append_run({"lm_overhead": 0.05}, ["b"], path=history)  # a second, partial run of the new commit
    out = io.StringIO()
    assert compare(out, path=history) == 0
    lines = {line.split()[0]: line.split() for line in out.getvalue().splitlines()[2:]}
    assert out.getvalue().splitlines()[0].startswith(f"benchmarks at {new[:12]}")
    assert lines["reader_vs_smdebug"][1:] == ["15", "10.5", "-30.0%", old[:12]]
    assert lines["lm_overhead"][1:] == ["0.1", "0.05", "-50.0%", old[:12]]
    assert lines["fresh"][1:] == ["-", "2", "new"]
    assert "gone" not in lines  # only figures the newest commit measured


def test_compare_without_history_says_what_to_run(tmp_path: Path) -> None:
    out = io.StringIO()
    assert compare(out, path=tmp_path / "history.jsonl") == 1
    assert "make bench" in out.getvalue()


def test_a_malformed_history_line_is_named(tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    history.write_text(json.dumps({"commit": "a", "results": {}}) + "\n{not json\n")
    with pytest.raises(ValueError, match=r"history.jsonl:2: not a JSON object"):
        load_history(history)


def test_the_committed_history_parses_and_compare_runs() -> None:
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "compare"], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    newest = load_history(REPO / "benchmarks" / "history.jsonl")[-1]  # a partial run may be the newest
    figures = newest["results"]
    assert isinstance(figures, dict) and figures
    assert str(newest["commit"])[:12] in proc.stdout
    assert all(figure in proc.stdout for figure in figures), proc.stdout
