"""The same PyTorch scripts under real smdebug 1.0.34 (``.venv-smdebug``) and under this
package, imports changed only; both runs are read back and compared: tensor names, steps,
modes, values, collections, scalar wall times, and what is on disk before ``close()``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from smdebug_reference import IMPORTS, run_as

from sagemaker_debugger_ext.format import decode_tensor_record, read_records
from sagemaker_debugger_ext.trials import create_trial

pytestmark = pytest.mark.slow  # two training subprocesses per scenario

COMMON = """
import json, sys
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
OUT = sys.argv[1]
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 5)
        self.relu1 = nn.ReLU()
        self.block = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Sequential(nn.Linear(4, 4), nn.ReLU()))
        self.gate = nn.Sigmoid()
        self.fc2 = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc2(self.gate(self.block(self.relu1(self.fc1(x)))))


def train(model, hook, steps, eval_steps=0, loss_fn=None):
    loss_fn = loss_fn or nn.CrossEntropyLoss()
    hook.register_loss(loss_fn)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    hook.set_mode(smd.modes.TRAIN)
    for i in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    if eval_steps:
        hook.set_mode(smd.modes.EVAL)
        with torch.no_grad():
            for i in range(eval_steps):
                loss_fn(model(x), y)
"""

SCENARIOS = {  # run in this order in one process; "open" must stay last
    # every module layout, save_all, modes, scalars with a timestamp, custom tensors
    "layouts": """
for kind in ("attrs", "sequential", "dataparallel"):
    torch.manual_seed(0)
    model = {"attrs": Net, "sequential": lambda: nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 3)),
             "dataparallel": lambda: nn.DataParallel(Net())}[kind]()
    hook = smd.Hook(out_dir=OUT + "/" + kind, save_config=smd.SaveConfig(save_interval=2), save_all=True)
    hook.register_module(model)
    hook.save_scalar("lr", 0.1, timestamp=1234567890.25)
    train(model, hook, 4, eval_steps=2)
    hook.record_tensor_value("extra", torch.ones(2))
    hook.close()
""",
    # the subclass example and a backward_hook override
    "subclass": """
class CustomHook(smd.Hook):
    def forward_hook(self, module, inputs, outputs):
        self._write_outputs(module._module_name + "_custom", outputs)

    def backward_hook(self, tname):
        def back(grad):
            self._save_for_tensor("gradient/custom_" + tname, grad)
        return back

model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
hook = CustomHook(out_dir=OUT + "/subclass", save_config=smd.SaveConfig(save_interval=1), include_regex=[".*"])
hook.register_module(model)
for _ in range(2):
    model(torch.randn(2, 4)).sum().backward()
hook.close()
""",
    # api.md: a collection of module inputs/outputs, plus the built-in collections
    "collections": """
model = Net()
hook = smd.Hook(out_dir=OUT + "/collections", save_config=smd.SaveConfig(save_steps=[0, 2]),
                include_collections=["weights", "biases", "gradients", "losses", "fc1_io"])
hook.get_collection("fc1_io").add_module_tensors(model.fc1, inputs=True, outputs=True)
hook.register_module(model)
train(model, hook, 3)
hook.close()
""",
    # issue behaviour 1: every saved step is on disk while the hook is open (no close())
    "open": """
import time
model = Net()
hook = smd.Hook(out_dir=OUT + "/open", save_config=smd.SaveConfig(save_steps=[0, 1, 2, 3, 4]),
                include_collections=["weights"])
hook.register_module(model)
train(model, hook, 10)
deadline = time.monotonic() + 30
while create_trial(OUT + "/open").steps() != [0, 1, 2, 3, 4] and time.monotonic() < deadline:
    time.sleep(0.01)
json.dump({"steps": create_trial(OUT + "/open").steps()}, open(OUT + "/open.json", "w"))
import os
os._exit(0)  # no close(), no atexit: what is on disk is what a rule would see
""",
}


def _run(python: Path, which: str, out: Path) -> None:
    """One process per library (torch imports once); the "open" scenario ends it, unclosed."""
    script = out.parent / f"train_{which}.py"  # not smdebug.py: it would shadow the package
    script.write_text(IMPORTS[which] + COMMON + "".join(SCENARIOS.values()))
    run_as(which, python, script, out)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, smdebug_torch_python: Path) -> dict[str, Path]:
    roots = {}
    for which, python in (("smdebug", smdebug_torch_python), ("ours", Path(sys.executable))):
        root = tmp_path_factory.mktemp(which) / "out"
        root.mkdir()
        _run(python, which, root)
        roots[which] = root
    return roots


def _view(run: Path) -> dict[str, Any]:
    trial = create_trial(str(run))
    view: dict[str, Any] = {
        "steps": trial.steps(),
        "modes": {s: trial.mode(s).name for s in trial.steps()},
        "mode_steps": {m.name: trial.steps(mode=m) for m in trial.modes()},
        "names": trial.tensor_names(),
        "values": {},
    }
    for name in view["names"]:
        t = trial.tensor(name)
        view["values"][name] = {s: t.value(s) for s in t.steps()}
    return view


def _compare(ours: Path, theirs: Path) -> None:
    a, b = _view(ours), _view(theirs)
    for key in ("steps", "modes", "mode_steps", "names"):
        assert a[key] == b[key], key
    for name, by_step in b["values"].items():
        assert sorted(a["values"][name]) == sorted(by_step), name
        for step, value in by_step.items():
            np.testing.assert_allclose(a["values"][name][step], value, rtol=1e-6, atol=1e-7, err_msg=f"{name}@{step}")


def _collections(run: Path) -> dict[str, list[str]]:
    trial = create_trial(str(run))
    return {c: sorted(trial.tensor_names(collection=c)) for c in trial.collections()}


@pytest.mark.parametrize("layout", ["attrs", "sequential", "dataparallel"])
def test_layouts_same_names_steps_modes_values(runs: dict[str, Path], layout: str) -> None:
    _compare(runs["ours"] / layout, runs["smdebug"] / layout)
    ours, theirs = _collections(runs["ours"] / layout), _collections(runs["smdebug"] / layout)
    for coll in ("weights", "biases", "gradients", "losses", "default"):
        assert ours.get(coll) == theirs.get(coll), coll


@pytest.mark.parametrize("layout", ["attrs", "dataparallel"])
def test_activations_listed_by_class_where_smdebug_regexes_miss(runs: dict[str, Path], layout: str) -> None:
    """Same names as smdebug; our relu/tanh/sigmoid collections also list the activation
    modules' tensors (smdebug's regexes found none of them)."""
    ours, theirs = _collections(runs["ours"] / layout), _collections(runs["smdebug"] / layout)
    prefix = "module." if layout == "dataparallel" else ""
    assert theirs.get("relu_output", []) == []
    assert ours["relu_output"] == [f"{prefix}block.2.1_output_0", f"{prefix}relu1_output_0"]
    assert ours["tanh_input"] == [f"{prefix}block.1_input_0"]
    assert ours["sigmoid_input"] == [f"{prefix}gate_input_0"]


def test_scalar_timestamp_is_wall_time_in_both(runs: dict[str, Path]) -> None:
    def wall_times(run: Path) -> set[float]:
        out = set()
        for path in run.rglob("*.tfevents"):
            if "events" not in path.parts:
                continue
            for rec in read_records(path.read_bytes()):
                dec = decode_tensor_record(rec.payload)
                if dec is not None and dec.tag == "scalar/lr":
                    out.add(dec.wall_time)
        return out

    assert wall_times(runs["smdebug"] / "attrs") == wall_times(runs["ours"] / "attrs") == {1234567890.25}


@pytest.mark.parametrize("scenario", ["subclass", "collections"])
def test_subclass_and_module_collections(runs: dict[str, Path], scenario: str) -> None:
    _compare(runs["ours"] / scenario, runs["smdebug"] / scenario)
    ours, theirs = _collections(runs["ours"] / scenario), _collections(runs["smdebug"] / scenario)
    for coll in ("fc1_io", "default", "gradients", "weights"):
        assert ours.get(coll) == theirs.get(coll), coll


def test_steps_on_disk_before_close(runs: dict[str, Path]) -> None:
    ours = json.loads((runs["ours"] / "open.json").read_text())
    theirs = json.loads((runs["smdebug"] / "open.json").read_text())
    assert ours == theirs == {"steps": [0, 1, 2, 3, 4]}
