"""``make bench``: run every ``benchmarks/bench_*.py`` and merge their results.

Each module exposes ``run() -> dict[str, object]`` returning flat JSON-able metrics
(ratios measured against a baseline run in the same process or run). The merged dict is
written to ``benchmarks/results.json`` and printed. ``python -m benchmarks NAME ...`` runs
only the named modules (``bench_NAME``) and updates their keys in the existing file. Every run
also appends its figures with the commit to ``benchmarks/history.jsonl``; ``python -m benchmarks
compare`` prints the newest commit's figures against the previous commit's (see ``_history``).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
import time
from pathlib import Path

from benchmarks._history import append_run, compare, git_commit

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.json"


def main(argv: list[str]) -> int:
    if argv[:1] == ["compare"]:
        return compare(sys.stdout)
    commit = git_commit(HERE)  # the code measured: taken before the run writes its outputs
    names = sorted(m.name for m in pkgutil.iter_modules([str(HERE)]) if m.name.startswith("bench_"))
    if argv:
        wanted = {a if a.startswith("bench_") else f"bench_{a}" for a in argv}
        names = [n for n in names if n in wanted]
    results: dict[str, object] = {}
    failures = 0
    for name in names:
        module = importlib.import_module(f"benchmarks.{name}")
        t0 = time.perf_counter()
        print(f"== {name}", flush=True)
        try:
            out = module.run()
        except Exception as exc:  # a broken benchmark must not hide the others' numbers
            failures += 1
            print(f"   FAILED: {type(exc).__name__}: {exc}", flush=True)
            results[f"{name}_error"] = f"{type(exc).__name__}: {exc}"
            continue
        results.update(out)
        print(json.dumps(out, indent=2, sort_keys=True), f"({time.perf_counter() - t0:.1f} s)", flush=True)
    # Re-read just before writing, so concurrent runs of different benchmarks keep each other's keys.
    merged: dict[str, object] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    for name in names:
        if f"{name}_error" not in results:
            merged.pop(f"{name}_error", None)
    merged.update(results)
    tmp = RESULTS.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(merged, indent=2, sort_keys=True) + "\n")
    tmp.replace(RESULTS)
    append_run(results, names, commit=commit)
    print(json.dumps(merged, indent=2, sort_keys=True))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
