"""A script written for smdebug runs unchanged but for its imports, and matches smdebug's output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from smdebug_reference import smdebug_json

from sagemaker_debugger_ext.trials import create_trial

pytestmark = pytest.mark.slow  # trains in a subprocess

# smdebug's make_sample_run.py training part, with only the imports changed.
SCRIPT = """
import numpy as np
import torch
import sagemaker_debugger_ext.pytorch as smd
ModeKeys = smd.modes

torch.manual_seed(0)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 3)
        self.relu = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(3, 2)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


net = Net()
loss_fn = torch.nn.CrossEntropyLoss()
opt = torch.optim.SGD(net.parameters(), lr=0.1)

hook = smd.Hook.create_from_json_file()
hook.register_module(net)
hook.register_loss(loss_fn)

x = torch.randn(8, 4)
y = torch.randint(0, 2, (8,))

hook.set_mode(ModeKeys.TRAIN)
for i in range(4):
    opt.zero_grad()
    loss = loss_fn(net(x), y)
    loss.backward()
    opt.step()
    if i == 1:
        hook.save_scalar("lr", 0.1)
        hook.save_tensor("my_custom", np.arange(6, dtype=np.float64).reshape(2, 3), "default")

hook.set_mode(ModeKeys.EVAL)
with torch.no_grad():
    for i in range(2):
        loss = loss_fn(net(x), y)

hook.set_mode(ModeKeys.TRAIN)
for i in range(2):
    opt.zero_grad()
    loss = loss_fn(net(x), y)
    loss.backward()
    opt.step()
# no hook.close(): smdebug closed at interpreter exit, so do we
"""


@pytest.fixture(scope="module")
def our_run(tmp_path_factory: pytest.TempPathFactory, smdebug_runs: Path) -> Path:
    """Run the smdebug-style script in a subprocess configured through SMDEBUG_CONFIG_FILE_PATH."""
    tmp = tmp_path_factory.mktemp("script")
    config = json.loads((smdebug_runs / "sample_debughookconfig.json").read_text())
    config["LocalPath"] = str(tmp / "run")
    config["HookParameters"]["tensorboard_dir"] = str(tmp / "tb")
    (tmp / "hook.json").write_text(json.dumps(config))
    (tmp / "train.py").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("TRAINING_JOB_NAME", "RANK", "WORLD_SIZE")}
    env["SMDEBUG_CONFIG_FILE_PATH"] = str(tmp / "hook.json")
    proc = subprocess.run(
        [sys.executable, str(tmp / "train.py")], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return tmp


def test_tensorboard_export_from_json_config(our_run: Path) -> None:
    """export_tensorboard + tensorboard_dir from the JSON give TensorBoard files per mode."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(our_run / "tb" / "TRAIN"), size_guidance={"scalars": 0, "histograms": 0})
    acc.Reload()
    assert [e.step for e in acc.Scalars("CrossEntropyLoss_output_0")] == [0, 1, 2, 3, 6, 7]
    assert [e.step for e in acc.Scalars("scalar/lr")] == [1]
    assert "weights/Net_fc1.weight" in acc.Tags()["histograms"]
    assert (our_run / "tb" / "EVAL").is_dir()


def _collections(run: Path) -> dict:
    return json.loads((run / "collections/000000000/worker_0_collections.json").read_text())


def test_same_steps_modes_and_names_as_smdebug(our_run: Path, smdebug_runs: Path) -> None:
    """Every step has the mode, mode step and tensor names smdebug's own hook wrote."""
    ours, theirs = create_trial(str(our_run / "run")), create_trial(str(smdebug_runs / "sample_run"))
    assert ours.steps() == theirs.steps() == list(range(8))
    for step in theirs.steps():
        assert ours.mode_modestep(step) == theirs.mode_modestep(step), step
        assert sorted(ours.tensor_names(step=step)) == sorted(theirs.tensor_names(step=step)), step
    assert (our_run / "run" / "training_job_end.ts").exists()


def test_same_values_as_smdebug(our_run: Path, smdebug_runs: Path) -> None:
    """Same seed, same torch: every value and reduction equals what smdebug saved."""
    ours, theirs = create_trial(str(our_run / "run")), create_trial(str(smdebug_runs / "sample_run"))
    checked = 0
    for name in theirs.tensor_names():
        mine, ref = ours.tensor(name), theirs.tensor(name)
        assert mine.steps() == ref.steps(), name
        for step in ref.steps():
            reductions = ref.reduction_values(step)
            if reductions:
                got = mine.reduction_values(step)
                assert got.keys() == reductions.keys()
                for key, val in reductions.items():
                    np.testing.assert_allclose(got[key], val, rtol=1e-5, err_msg=f"{name} {key}")
            else:
                np.testing.assert_allclose(
                    np.asarray(mine.value(step), dtype=np.float64).reshape(-1),
                    np.asarray(ref.value(step), dtype=np.float64).reshape(-1),
                    rtol=1e-5,
                    atol=1e-6,
                    err_msg=name,
                )
            checked += 1
    assert checked >= 30


def test_collections_cover_smdebug_membership(our_run: Path, smdebug_runs: Path) -> None:
    """Our collections file has smdebug's collections and members, plus late tensors it missed."""
    ours, theirs = _collections(our_run / "run"), _collections(smdebug_runs / "sample_run")
    assert ours["_meta"] == theirs["_meta"]
    for name, coll in theirs["collections"].items():
        mine = ours["collections"][name]
        assert set(coll["tensor_names"]) <= set(mine["tensor_names"]), name
        assert mine["save_config"] == coll["save_config"], name
        assert mine["reduction_config"] == coll["reduction_config"], name
        assert mine["save_histogram"] == coll["save_histogram"], name
    assert "my_custom" in ours["collections"]["default"]["tensor_names"]


SMDEBUG_READER = """
import json, sys
from smdebug.trials import create_trial
from smdebug.core.modes import ModeKeys
trial = create_trial(sys.argv[1])
out = {"steps": trial.steps(), "train": trial.steps(mode=ModeKeys.TRAIN), "eval": trial.steps(mode=ModeKeys.EVAL),
       "workers": sorted(trial.workers()), "losses": trial.tensor_names(collection="losses"), "values": {}}
for name in trial.tensor_names():
    t = trial.tensor(name)
    for step in t.steps():
        try:
            out["values"][f"{step}|{name}"] = t.value(step).astype("float64").reshape(-1).tolist()
        except Exception as exc:
            out["values"][f"{step}|{name}"] = "reductions:" + ",".join(sorted(f"{k[0]}{k[1]}" for k in t.reduction_values(step)))
print(json.dumps(out))
"""


def test_real_smdebug_reads_our_output(our_run: Path, smdebug_python: Path) -> None:
    """smdebug 1.0.34's create_trial reads our files with identical steps, names and values."""
    got = smdebug_json(smdebug_python, SMDEBUG_READER, str(our_run / "run"))
    assert got["steps"] == list(range(8))
    assert got["train"] == [0, 1, 2, 3, 4, 5]  # mode steps
    assert got["eval"] == [0, 1]
    assert got["workers"] == ["worker_0"]
    assert got["losses"] == ["CrossEntropyLoss_output_0"]
    ours = create_trial(str(our_run / "run"))
    expected = {f"{s}|{n}" for n in ours.tensor_names() for s in ours.tensor(n).steps()}
    assert set(got["values"]) == expected
    for key, values in got["values"].items():
        step, name = key.split("|", 1)
        if isinstance(values, str):
            assert ours.tensor(name).reduction_values(int(step)) != {}
            continue
        np.testing.assert_allclose(values, np.asarray(ours.tensor(name).value(int(step)), dtype=np.float64).reshape(-1))
    assert got["values"]["0|relu_output_0"] == "reductions:l2False,maxFalse,meanFalse,meanTrue"
