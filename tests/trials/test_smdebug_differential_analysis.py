"""The smdebug analysis/core API, differentially: one script under real smdebug 1.0.34 and under us.

``tests/oracle_scripts/smdebug_api_script.py`` uses only public smdebug names (FileWriter,
CollectionManager, config JSON round trips, create_trial, LocalTrial, trial.collection,
no_refresh/refresh on a trial or a list, has_passed_step, errors); both runs must see the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import sagemaker_debugger_ext

SCRIPT = Path(__file__).resolve().parent.parent / "oracle_scripts" / "smdebug_api_script.py"
# the package under test (a worktree's or a checkout's), not whichever one the venv installed
OURS = str(Path(sagemaker_debugger_ext.__file__).resolve().parent.parent)


def _run(python: str | Path, package: str, work: Path) -> dict:
    out = work / "out.json"
    env = {k: v for k, v in os.environ.items() if k not in ("TRAINING_JOB_NAME", "PYTHONPATH")}
    env["SMDEBUG_TRAINING_END_DELAY_REFRESH"] = "0"
    if package == "sagemaker_debugger_ext":
        env["PYTHONPATH"] = OURS
    proc = subprocess.run([str(python), str(SCRIPT), package, str(work), str(out)], env=env, cwd=work,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory, smdebug_python: Path) -> tuple[dict, dict]:
    ref_dir, our_dir = tmp_path_factory.mktemp("smdebug"), tmp_path_factory.mktemp("ours")
    return _run(smdebug_python, "smdebug", ref_dir), _run(sys.executable, "sagemaker_debugger_ext", our_dir)


KEYS = [
    "top_level_same", "save_config", "save_config_modes", "reduction_config", "collection", "collection_keys",
    "consts", "manager_round_trip", "ended_before", "steps", "mode_of", "global_step", "tensor_names", "values",
    "tensor_steps", "collections", "new_collection", "errors", "has_passed_running", "no_refresh_one",
    "no_refresh_list", "refresh", "ended_after", "local_trial", "state_names",
]  # fmt: skip


@pytest.mark.parametrize("key", KEYS)
def test_same_as_smdebug(both: tuple[dict, dict], key: str) -> None:
    """Names, steps, modes, values, collections and errors equal smdebug's for each part."""
    ref, ours = both
    assert key in ref, f"the smdebug run did not record {key!r}"
    assert ours[key] == ref[key]


def test_script_checks_what_it_claims(both: tuple[dict, dict]) -> None:
    """Guards against a vacuous comparison: the shared answers are the documented ones."""
    _, ours = both
    assert ours["no_refresh_one"] == [True, [0, 1, 2, 3, 4, 5]] and ours["refresh"] == [0, 1, 2, 3, 4, 5, 6]
    assert ours["new_collection"] == ["foo_0", "foo_2"]
    assert ours["errors"] == [["error", "TensorUnavailable"], ["error", "StepNotYetAvailable"]]
    assert ours["values"][2] == ["x", "yz"] and ours["top_level_same"] == [True] * 4
