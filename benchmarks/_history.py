"""Benchmark history: every ``make bench`` run appends its figures to ``benchmarks/history.jsonl``.

One JSON object a line: ``{"commit", "dirty", "time", "benchmarks", "results"}``. ``commit`` is
``git rev-parse HEAD`` of the checkout that ran (``dirty``: uncommitted changes to tracked files),
``results`` the flat figures that run produced (only the benchmarks it ran). ``python -m benchmarks
compare`` prints, for each figure of the newest commit's runs, the change against the most recent
run of an earlier commit that measured the same figure, so a regression shows the day it lands.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import TextIO

HISTORY = Path(__file__).resolve().parent / "history.jsonl"

__all__ = ["HISTORY", "append_run", "compare", "git_commit", "load_history"]


#: the benchmarks' own outputs: changed by every run, so not counted as uncommitted changes
OUTPUTS = ("benchmarks/results.json", "benchmarks/history.jsonl")


def git_commit(repo: Path) -> tuple[str, bool]:
    """``(HEAD commit, whether tracked files other than the benchmarks' outputs differ from
    it)``; ``("unknown", False)`` outside git."""
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=30, check=True).stdout.strip()  # fmt: skip
        status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=30, check=True).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "unknown", False
    changed = [line[3:] for line in status.splitlines() if line.strip()]
    return head, any(path not in OUTPUTS for path in changed)


def append_run(
    results: dict[str, object],
    benchmarks: list[str],
    *,
    path: Path = HISTORY,
    commit: tuple[str, bool] | None = None,
) -> dict[str, object]:
    """Append one run's figures (numbers only) with ``commit`` (``(commit, dirty)``, by default
    the checkout's now: pass the one taken when the run started) to ``path``; return the entry."""
    commit, dirty = commit or git_commit(path.parent)
    figures = {k: v for k, v in sorted(results.items()) if isinstance(v, (int, float)) and not isinstance(v, bool)}
    entry: dict[str, object] = {
        "commit": commit,
        "dirty": dirty,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "benchmarks": sorted(benchmarks),
        "results": figures,
    }
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, sort_keys=True) + "\n")
    return entry


def load_history(path: Path = HISTORY) -> list[dict[str, object]]:
    """The entries of ``path`` in file order; blank lines skipped, a malformed line is an error naming it."""
    if not path.exists():
        return []
    entries = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            msg = f"{path}:{lineno}: not a JSON object ({exc.msg})"
            raise ValueError(msg) from None
        if not isinstance(entry, dict) or not isinstance(entry.get("results"), dict) or "commit" not in entry:
            msg = f"{path}:{lineno}: expected an object with 'commit' and 'results'"
            raise ValueError(msg)
        entries.append(entry)
    return entries


def _figures(entries: list[dict[str, object]]) -> dict[str, tuple[float, str]]:
    """Each figure's newest value in ``entries`` (file order), with the commit that measured it."""
    out: dict[str, tuple[float, str]] = {}
    for entry in entries:
        results = entry["results"]
        assert isinstance(results, dict)
        for key, value in results.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[key] = (float(value), str(entry["commit"]))
    return out


def compare(out: TextIO, *, path: Path = HISTORY) -> int:
    """Print the newest commit's figures against the previous commit's; returns an exit status."""
    entries = load_history(path)
    if not entries:
        out.write(f"no benchmark history in {path}: run `make bench` first\n")
        return 1
    head = entries[-1]["commit"]
    current = _figures([e for e in entries if e["commit"] == head])
    before = _figures([e for e in entries if e["commit"] != head])
    out.write(f"benchmarks at {str(head)[:12]} against the previous commit's run of each figure\n")
    width = max(len(k) for k in current)
    out.write(f"{'figure':<{width}}  {'before':>12}  {'now':>12}  {'change':>8}  commit\n")
    for key in sorted(current):
        now = current[key][0]
        if key not in before:
            out.write(f"{key:<{width}}  {'-':>12}  {now:>12.6g}  {'new':>8}\n")
            continue
        old, commit = before[key]
        change = f"{(now - old) / abs(old) * 100:+.1f}%" if old else ("0.0%" if now == old else "n/a")
        out.write(f"{key:<{width}}  {old:>12.6g}  {now:>12.6g}  {change:>8}  {commit[:12]}\n")
    return 0
