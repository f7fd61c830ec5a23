"""Seeded fuzzing of the reader (issue 16, acceptance): hostile bytes never crash or lie.

Real runs (two written by smdebug 1.0.34, one by this package's hook) are mutated one
change at a time: truncations at every record-boundary class, flipped bytes, wrong CRCs,
wrong JSON types, huge lengths, stray index files, empty and missing files. Each mutated
run is read completely. The only allowed outcomes are:

- ``correct``: every value that the pristine run holds reads back identically;
- ``payload-changed``: as ``correct``, except records whose tensor bytes were flipped
  (the smdebug format has no payload CRC: such a flip is undetectable by design);
- ``error:<Class>``: one of the package's documented exceptions (``DebuggerExtError``).

Anything else (another exception, a wrong value elsewhere, a hang) fails the test.
``FUZZ_CASES`` sets the number of cases (default 4000, under a minute here); ``make fuzz``
runs 20,000. ``FUZZ_SEED`` changes the seed; ``FUZZ_REPORT`` names a JSON file for the
outcome counts.
"""

from __future__ import annotations

import collections
import json
import os
import random
import shutil
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from trial_mutations import Files, mutate

from sagemaker_debugger_ext._exceptions import DebuggerExtError
from sagemaker_debugger_ext.exceptions import ShapeUnavailableForStep, TensorUnavailableForStep
from sagemaker_debugger_ext.hooks import Hook, ReductionConfig, SaveConfig, TrainingContext
from sagemaker_debugger_ext.modes import ModeKeys
from sagemaker_debugger_ext.storage import MemoryStorage
from sagemaker_debugger_ext.trials import create_trial

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "smdebug_runs"
CASES = int(os.environ.get("FUZZ_CASES", "4000"))
SEED = int(os.environ.get("FUZZ_SEED", "16"))
HANG_S = 20
MODES = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT, ModeKeys.GLOBAL)


# --- the runs ---------------------------------------------------------------------------------
def _load(folder: Path) -> Files:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _hook_run(folder: Path) -> Files:
    hook = Hook(
        out_dir=folder,
        context=TrainingContext(),
        save_config=SaveConfig(save_interval=1),
        include_collections=["weights", "losses", "r"],
    )
    hook.get_collection("r").include("^r")
    hook.get_collection("r").reduction_config = ReductionConfig(
        reductions=["max", "mean"], abs_reductions=["min"], norms=["l2"], save_raw_tensor=True
    )
    for mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
        hook.set_mode(mode)
        for i in range(3):
            hook.advance_step()
            hook.record_tensor_value("w.weight", np.arange(6, dtype=np.float32).reshape(2, 3) * (i + 1))
            hook.record_tensor_value("r_act", np.linspace(-1, 1, 5) * i)
            hook.save_tensor("ints", np.arange(4, dtype=np.int64) + i, "weights")
            hook.save_tensor("empty", np.zeros((0, 3), dtype=np.float32), "weights")
            hook.save_tensor("text", np.array(["a", "bc"][: i + 1]), "weights")
            hook.save_scalar("loss", 1.0 / (i + 1))
    hook.close()
    return _load(folder)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Files]:
    out = {name: _load(FIXTURES / name) for name in ("sample_run", "sample_run_min")}
    folder = tmp_path_factory.mktemp("hook_run")
    out["hook_run"] = _hook_run(folder / "run")
    shutil.rmtree(folder, ignore_errors=True)
    return out


# --- reading everything -----------------------------------------------------------------------
Key = tuple[str, str, int, str]  # (what, tensor, step, worker)


def read_all(files: Files, folder: Path | None = None) -> dict[Key, Any]:
    """Read every tensor, step, worker, shape and reduction of a run held in memory (or,
    with ``folder``, written there first and read from disk)."""
    source: Any = MemoryStorage(files)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        for key, data in files.items():
            (folder / key).parent.mkdir(parents=True, exist_ok=True)
            (folder / key).write_bytes(data)
        folder.mkdir(parents=True, exist_ok=True)
        source = folder
    trial = create_trial(source, poll_interval_s=0.001, wait_timeout_s=0.01)
    out: dict[Key, Any] = {}
    out[("workers", "", -1, "")] = tuple(trial.workers())
    out[("steps", "", -1, "")] = tuple(trial.steps())
    for mode in MODES:
        out[("mode_steps", mode.name, -1, "")] = tuple(trial.steps(mode=mode))
    for cname, coll in trial.collections().items():
        out[("collection", cname, -1, "")] = tuple(sorted(coll.tensor_names))
    for name in trial.tensor_names():
        tensor = trial.tensor(name)
        for step in tensor.steps():
            for worker in tensor.workers(step):
                for what, get in (("shape", tensor.shape), ("value", tensor.value)):
                    try:
                        out[(what, name, step, worker)] = get(step, worker=worker)
                    except (ShapeUnavailableForStep, TensorUnavailableForStep):
                        pass  # only reductions were saved
                for (op, is_abs), val in tensor.reduction_values(step, worker=worker).items():
                    out[(f"reduction:{op}:{is_abs}", name, step, worker)] = val
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    return a == b


# --- the loop ---------------------------------------------------------------------------------
class _Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Hang


def classify(
    expected: dict[Key, Any],
    files: Files,
    kind: str,
    affected: Callable[[Key], bool],
    index_changed: bool,
    folder: Path | None = None,
) -> str:
    """Read the mutated run; return the outcome class or raise AssertionError for a wrong value."""
    try:
        got = read_all(files, folder)
    except DebuggerExtError as exc:
        return f"error:{type(exc).__name__}"
    outcome = "correct"
    for key, want in expected.items():
        have = got.get(key)
        if key[0] == "collection" and affected(key):
            outcome = "json-changed-read-as-written" if have != want else outcome
            continue
        if key[2] == -1:  # aggregates: a deleted file removes, a stray file may add
            ok = (set(have or ()) <= set(want) if kind == "delete" else
                  set(want) <= set(have or ()) if kind == "stray" else
                  True if index_changed else have == want)  # fmt: skip
            if not ok:
                raise AssertionError(f"{key}: {have!r} instead of {want!r}")
            if have != want:
                outcome = ("data-missing" if kind == "delete" else "stray-data-added" if kind == "stray"
                           else "json-changed-read-as-written")  # fmt: skip
            continue
        if key not in got:
            if kind == "delete" or affected(key):
                outcome = "data-missing" if kind == "delete" else "payload-changed"
                continue
            raise AssertionError(f"{key} missing from a run that read without error")
        if not _same(have, want):
            if affected(key):
                outcome = "payload-changed"
                continue
            raise AssertionError(f"wrong value for {key}: {have!r} != {want!r}")
    return outcome


def run_fuzz(runs: dict[str, Files], cases: int, seed: int, scratch: Path) -> collections.Counter[str]:
    rng = random.Random(seed)
    pristine = {name: read_all(files) for name, files in runs.items()}
    names = sorted(runs)
    outcomes: collections.Counter[str] = collections.Counter()
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for case in range(cases):
            name = names[case % len(names)]
            kind, files, changed = mutate(rng, runs[name])
            locs = _record_locations(runs[name], changed)
            signal.alarm(HANG_S)
            try:
                index_changed = any(k.startswith("index/") for k, off in changed if off == -1)
                on_disk = scratch / "run" if case % 10 == 0 else None  # one case in ten through the local store
                outcome = classify(pristine[name], files, kind.split(":")[0], locs.__contains__, index_changed, on_disk)
            except _Hang:
                raise AssertionError(f"case {case} ({name}, {kind}) did not finish in {HANG_S} s") from None
            except AssertionError as exc:
                raise AssertionError(f"case {case} ({name}, {kind}, seed {seed}): {exc}") from None
            except Exception as exc:
                raise AssertionError(f"case {case} ({name}, {kind}, seed {seed}) raised {exc!r}") from exc
            finally:
                signal.alarm(0)
            outcomes[outcome] += 1
            outcomes[f"mutation:{kind}"] += 1
    finally:
        signal.signal(signal.SIGALRM, old)
    return outcomes


def _record_locations(files: Files, changed: set[tuple[str, int]]) -> set[Key]:
    """The read keys that a mutation may legitimately change (from the pristine index).

    A record whose tensor bytes were flipped (no payload CRC in the format); every key of
    the step whose index file was rewritten (JSON has no checksum: a valid but different
    document is read as written, but only for its own step); the collections after a
    collections file changed; the aggregate lists whenever an index changed.
    """
    out: set[Key] = set()
    touched = {key for key, off in changed if off == -1}
    if any(k.startswith("collections/") for k in touched):
        out.update(("collection", name, -1, "") for name in _collection_names(files))
    for key, data in files.items():
        if not key.startswith("index/"):
            continue
        doc = json.loads(data)
        event = doc["meta"].get("event_file_name")
        step, worker = int(key.rsplit("/", 1)[1][:12]), key.rsplit("/", 1)[1][13:-5]
        whole = key in touched or event in touched
        for entry in [*(doc.get("tensor_payload") or ()), *(doc.get("shape_payload") or ())]:
            if not whole and (event, entry.get("start_idx")) not in changed:
                continue
            name = entry["tensorname"]
            if name.startswith("smdebug/reductions/"):
                op, _, tensor = name[len("smdebug/reductions/") :].partition("/")
                is_abs = op.startswith("abs_")
                out.add((f"reduction:{op[4:] if is_abs else op}:{is_abs}", tensor, step, worker))
            else:
                out.add(("value", name, step, worker))
                out.add(("shape", name, step, worker))
    return out


def _collection_names(files: Files) -> set[str]:
    names: set[str] = set()
    for key, data in files.items():
        if key.startswith("collections/"):
            names.update(json.loads(data)["collections"])
    return names


def test_fuzz_reader_never_crashes_or_lies(runs: dict[str, Files], tmp_path: Path) -> None:
    """The acceptance fuzz: FUZZ_CASES mutated runs, only correct values or documented errors."""
    outcomes = run_fuzz(runs, CASES, SEED, tmp_path)
    report = os.environ.get("FUZZ_REPORT")
    if report:
        Path(report).write_text(json.dumps({"cases": CASES, "seed": SEED, "outcomes": dict(sorted(outcomes.items()))},
                                           indent=1))  # fmt: skip
    print(f"fuzz: {CASES} cases, seed {SEED}: {dict(sorted(outcomes.items()))}")
    assert sum(v for k, v in outcomes.items() if not k.startswith("mutation:")) == CASES
    assert outcomes["correct"] > 0 and any(k.startswith("error:") for k in outcomes)


def test_pristine_runs_read_back(runs: dict[str, Files]) -> None:
    """The runs the fuzz starts from are read without error and hold what was written."""
    hook = read_all(runs["hook_run"])
    assert hook[("mode_steps", "EVAL", -1, "")] == (0, 1, 2)
    np.testing.assert_array_equal(hook[("value", "ints", 4, "worker_0")], np.arange(4) + 1)
    assert hook[("value", "empty", 4, "worker_0")].shape == (0, 3)
    assert hook[("value", "text", 4, "worker_0")].tolist() == ["a", "bc"]
    assert ("reduction:max:False", "r_act", 2, "worker_0") in hook
    sample = read_all(runs["sample_run"])
    assert sample[("steps", "", -1, "")] == tuple(range(8))
