"""The MXNet Gluon hook against smdebug 1.0.34's: the same script in each venv (MXNet needs
NumPy < 1.24, so both run outside .venv), both runs read back with this package's reader and
compared: tensor names, steps per mode, collections, values."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext import modes
from sagemaker_debugger_ext.exceptions import TensorUnavailableForStep
from sagemaker_debugger_ext.trials import create_trial

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).resolve().parent / "scripts" / "gluon_scenarios.py"
OURS = ROOT / ".venv-mxnet" / "bin" / "python"
ORACLE = ROOT / ".venv-smdebug-mxnet" / "bin" / "python"
SCENARIOS = ["default", "wbg", "save_all", "regex", "modes", "reductions", "custom"]

pytestmark = pytest.mark.skipif(
    not (OURS.exists() and ORACLE.exists()),
    reason="MXNet venvs missing: `make mxnet-venv` builds .venv-mxnet and .venv-smdebug-mxnet",
)


def _run(python: Path, lib: str, scenario: str, out: Path) -> None:
    proc = subprocess.run([str(python), str(SCRIPT), lib, scenario, str(out)], capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    base = tmp_path_factory.mktemp("mxnet")
    out = {}
    for scenario in SCENARIOS:
        ours, theirs = base / f"ours-{scenario}", base / f"smdebug-{scenario}"
        _run(OURS, "ours", scenario, ours)
        _run(ORACLE, "smdebug", scenario, theirs)
        out[scenario] = (ours, theirs)
    return out


def _value(tensor: object, step: int, mode: modes.ModeKeys) -> object:
    """The raw value, else the reductions saved for the step (name -> value)."""
    try:
        return tensor.value(step, mode=mode)  # type: ignore[attr-defined]
    except TensorUnavailableForStep:
        return dict(sorted(tensor.reduction_values(step, mode=mode).items()))  # type: ignore[attr-defined]


def _snapshot(path: Path) -> dict[str, object]:
    trial = create_trial(str(path))
    tensors = {}
    for name in trial.tensor_names():
        t = trial.tensor(name)
        per_mode = {}
        for mode in (modes.TRAIN, modes.EVAL, modes.GLOBAL):
            steps = t.steps(mode=mode)
            if steps:
                per_mode[mode.name] = {s: _value(t, s, mode) for s in steps}
        tensors[name] = per_mode
    return {
        "steps": {m.name: trial.steps(mode=m) for m in (modes.TRAIN, modes.EVAL, modes.GLOBAL)},
        "collections": {
            c: sorted(trial.tensor_names(collection=c)) for c in ("weights", "biases", "gradients", "losses")
        },
        "tensors": tensors,
    }


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_same_run_as_smdebug(runs: dict[str, tuple[Path, Path]], scenario: str) -> None:
    ours, theirs = (_snapshot(p) for p in runs[scenario])
    assert ours["steps"] == theirs["steps"]
    assert ours["collections"] == theirs["collections"]
    assert sorted(ours["tensors"]) == sorted(theirs["tensors"])  # type: ignore[arg-type]
    for name, per_mode in theirs["tensors"].items():  # type: ignore[attr-defined]
        mine = ours["tensors"][name]  # type: ignore[index]
        assert sorted(mine) == sorted(per_mode), name
        for mode, values in per_mode.items():
            assert sorted(mine[mode]) == sorted(values), (name, mode)
            for step, value in values.items():
                if isinstance(value, dict):
                    assert sorted(mine[mode][step]) == sorted(value), (name, mode, step)
                    for key, reduced in value.items():
                        # float32 sums in another order: a mean of gradients that cancel differs in ulps
                        np.testing.assert_allclose(np.ravel(mine[mode][step][key]), np.ravel(reduced), rtol=1e-5,
                                                   atol=1e-8, err_msg=f"{name} {key}")  # fmt: skip
                else:
                    np.testing.assert_allclose(mine[mode][step], value, rtol=1e-6, err_msg=f"{name} {mode} {step}")


def test_names_are_gluon_names(runs: dict[str, tuple[Path, Path]]) -> None:
    """The names users' analysis code spells: parameters, gradients, block outputs, the loss."""
    names = set(create_trial(str(runs["save_all"][0])).tensor_names())
    assert {"dense0_weight", "dense0_bias", "gradient/dense0_weight", "dense1_output_0",
            "softmaxcrossentropyloss0_output_0"} <= names  # fmt: skip


API_SNIPPET = r"""
import json, os, sys
import mxnet as mx
import sagemaker_debugger_ext.mxnet as smd
from sagemaker_debugger_ext.exceptions import HookError

try:
    smd.Hook(out_dir=sys.argv[1]).register_block(object())
except HookError as exc:
    print("ERROR", exc)
smd.del_hook()
config = os.path.join(sys.argv[1], "debughookconfig.json")
with open(config, "w") as f:
    json.dump({"LocalPath": os.path.join(sys.argv[1], "from-json"), "HookParameters": {"save_interval": "1"},
               "CollectionConfigurations": [{"CollectionName": "weights"}]}, f)
os.environ["SMDEBUG_CONFIG_FILE_PATH"] = config
hook = smd.get_hook()
assert hook is smd.get_hook() and smd.singleton_utils.get_hook() is hook
net = mx.gluon.nn.Dense(2, in_units=3)
net.initialize()
hook.register_block(net)
for _ in range(3):
    net(mx.nd.ones((1, 3)))
hook.close()
print("INCLUDED", sorted(hook.include_collections))
"""


def test_errors_and_json_config(tmp_path: Path) -> None:
    """A non-block is refused naming the field; ``get_hook()`` builds the hook from SageMaker's JSON."""
    proc = subprocess.run([str(OURS), "-c", API_SNIPPET, str(tmp_path)], capture_output=True, text=True, timeout=120,
                          check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ERROR" in proc.stdout and "'block'" in proc.stdout and "mxnet.gluon.Block" in proc.stdout, proc.stdout
    assert "INCLUDED ['losses', 'weights']" in proc.stdout, proc.stdout
    trial = create_trial(str(tmp_path / "from-json"))
    assert trial.steps() == [0, 1, 2]
    assert trial.tensor_names(collection="weights") == ["dense0_weight"]
