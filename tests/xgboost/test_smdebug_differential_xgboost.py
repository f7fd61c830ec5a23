"""The XGBoost flow of smdebug's docs, differentially: one script under real smdebug 1.0.34 and under us.

``tests/oracle_scripts/smdebug_xgboost_script.py`` trains with ``Hook(..., export_tensorboard=True)``
(``include_collections=["all"]``: string ``trees/*`` columns must not break the TensorBoard export),
saves scalars before and after ``xgboost.train()`` (both kept, at smdebug's steps), uses
``get_hook``/``set_hook``/``del_hook`` and ``<pkg>.xgboost.hook``, and reads the trial back.

The reference venv needs xgboost (``make smdebug-venv`` installs 1.7.6); where it has none,
``SMDEBUG_ORACLE_PYTHONPATH`` may name a folder holding it, else the comparison is skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import sagemaker_debugger_ext

pytestmark = pytest.mark.slow  # two trainings in subprocesses

SCRIPT = Path(__file__).resolve().parent.parent / "oracle_scripts" / "smdebug_xgboost_script.py"
CONTAINER_SCRIPT = SCRIPT.with_name("smdebug_xgboost_container_script.py")
# the package under test (a worktree's or a checkout's), not whichever one the venv installed
OURS = str(Path(sagemaker_debugger_ext.__file__).resolve().parent.parent)
# smdebug.xgboost has no "scalars" collection in its trial; we export it (docs/migration.md)
OUR_EXTRA_COLLECTIONS = {"scalars"}


def _env(extra_path: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TRAINING_JOB_NAME", "PYTHONPATH")}
    env["SMDEBUG_TRAINING_END_DELAY_REFRESH"] = "0"
    if extra_path:
        env["PYTHONPATH"] = extra_path
    return env


@pytest.fixture(scope="module")
def oracle_env(smdebug_python: Path) -> dict[str, str]:
    env = _env(os.environ.get("SMDEBUG_ORACLE_PYTHONPATH"))
    probe = subprocess.run([str(smdebug_python), "-c", "import xgboost, smdebug.xgboost"], env=env,
                           capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    if probe.returncode != 0:
        pytest.skip(f"the smdebug reference venv cannot import xgboost ({probe.stderr.strip()[-200:]}); "
                    "run `make smdebug-venv` or set SMDEBUG_ORACLE_PYTHONPATH")  # fmt: skip
    return env


def _run(python: str | Path, package: str, work: Path, collections: str, env: dict[str, str]) -> dict:
    out = work / "out.json"
    proc = subprocess.run([str(python), str(SCRIPT), package, str(work), str(out), collections], env=env,
                          cwd=work, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.fixture(scope="module", params=["all", "metrics,hyperparameters,scalars"])
def both(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, smdebug_python: Path,
         oracle_env: dict[str, str]) -> tuple[dict, dict]:  # fmt: skip
    ref = _run(smdebug_python, "smdebug", tmp_path_factory.mktemp("smdebug"), request.param, oracle_env)
    ours = _run(sys.executable, "sagemaker_debugger_ext", tmp_path_factory.mktemp("ours"), request.param, _env(OURS))
    return ref, ours


@pytest.mark.parametrize(
    "key",
    ["hook_submodule", "keys", "get_hook_is_hook", "get_hook_after_del", "get_hook_after_set", "steps",
     "train_steps", "names_no_trees", "has_trees", "scalars", "metric_steps", "hyper_eta", "tensorboard_files",
     "shapes"],
)  # fmt: skip
def test_same_as_smdebug(both: tuple[dict, dict], key: str) -> None:
    """Tensor names, steps, shapes, scalar values and the singleton equal smdebug's."""
    ref, ours = both
    assert ours[key] == ref[key]


def test_collections_same_but_documented_extra(both: tuple[dict, dict]) -> None:
    """The trial's collections equal smdebug's, but for the documented extra ``scalars``."""
    ref, ours = both
    assert set(ours["collections"]) - OUR_EXTRA_COLLECTIONS == set(ref["collections"])


def test_behaviours_hold(both: tuple[dict, dict]) -> None:
    """Not vacuous: a scalar saved after train() is kept, TensorBoard files exist, training finished."""
    _, ours = both
    assert "scalar/after_train" in ours["scalars"] and ours["scalars"]["scalar/after_train"] == {"9": 2.5}
    assert ours["tensorboard_files"] is True and ours["steps"][-1] == 9


def test_the_xgboost_containers_hook_from_config_pattern_as_smdebug(
    tmp_path: Path, smdebug_python: Path, oracle_env: dict[str, str]
) -> None:
    """``Hook.hook_from_config()`` (smdebug.xgboost's compatibility name, which the SageMaker
    XGBoost 1.x images call in algorithm mode and users copy into script mode) from the
    environment and from a path, then ``hyperparameters``/``train_data``/``validation_data`` set
    as attributes: the same trial as smdebug's, and the same error for a missing file."""

    def run(python: str | Path, package: str, env: dict[str, str]) -> dict:
        work = tmp_path / package
        work.mkdir()
        out = work / "out.json"
        proc = subprocess.run([str(python), str(CONTAINER_SCRIPT), package, str(work), str(out)], env=env,
                              cwd=work, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(out.read_text())

    ref = run(smdebug_python, "smdebug", oracle_env)
    ours = run(sys.executable, "sagemaker_debugger_ext", _env(OURS))
    assert ours == ref
    # not vacuous: the attributes set after construction were used
    assert ours["from_env_is_hook"] is True and ours["steps"] == [0, 2, 4]
    assert {"average_shap", "predictions", "labels", "hyperparameters"} <= set(ours["collections_saved"])
    assert ours["missing"] is not None
