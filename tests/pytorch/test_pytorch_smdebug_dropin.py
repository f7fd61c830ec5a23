"""smdebug documentation snippets and AWS example code, run under real smdebug 1.0.34
(``.venv-smdebug``) and under this package with the imports changed only: each scenario
records what a user sees (outcomes, steps, tensor names) and both records must be equal."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from smdebug_reference import IMPORTS, run_as

pytestmark = pytest.mark.slow  # one training subprocess per library

COMMON = """
import json, os, sys, tempfile
import torch
import torch.nn as nn
OUT = sys.argv[1]
RESULTS = {}
torch.manual_seed(0)


def outcome(fn):
    try:
        fn()
    except Exception as exc:
        return type(exc).__name__
    return "ok"


def files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


def tiny_training(hook, steps=2):
    model = nn.Linear(2, 2)
    hook.register_module(model)
    for _ in range(steps):
        model(torch.ones(1, 2)).sum().backward()
    hook.close()
"""

SCENARIOS = {
    # smdebug's docs/api.md hook snippet: collections configured, no training, close()
    "collection_check_timing": """
def api_md_snippet():
    hook = smd.Hook(out_dir=OUT + "/api_md", include_collections=["metrics_like"])
    hook.add_collection(smd.Collection("mine"))
    hook.get_collection("mine"), hook.get_collection("weights"), hook.get_collection("other")
    hook.close()


def unmatched(include, name, regex=None):
    def run():
        hook = smd.Hook(out_dir=tempfile.mkdtemp(dir=OUT) + "/o", include_collections=include)
        coll = hook.get_collection(name)
        if regex:
            coll.include(regex)
        tiny_training(hook)
    return run


RESULTS["collection_check_timing"] = {
    "api_md": outcome(api_md_snippet),
    "api_md_files": files(OUT + "/api_md"),
    "saved_unmatched": outcome(unmatched(["weights", "mine"], "mine")),
    "unsaved_unmatched": outcome(unmatched(["weights"], "mine")),
    "saved_with_regex": outcome(unmatched(["weights", "mine"], "mine", "weight")),
    "included_but_absent": outcome(unmatched(["weights", "metrics_like"], "weights")),
}
""",
    # smdebug's tests/pytorch/test_modes.py pattern: train, then read in the same process, no close();
    # this package's writer thread is held back from the last saved step on (smdebug has none)
    "read_in_process": """
import threading


def read_in_process():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    hook = smd.Hook(out_dir=OUT + "/in_process", save_config=smd.SaveConfig(save_interval=20),
                    include_collections=["weights", "gradients"])
    hook.register_module(model)
    gate = threading.Event()
    for i in range(100):
        model(torch.randn(2, 4)).sum().backward()
        if i == 80 and getattr(getattr(hook, "_writer", None), "background", None) is not None:
            hook._writer.background.submit_call(lambda: gate.wait(60), counted=False)
    opener = threading.Timer(1.5, gate.set)
    opener.start()
    steps = create_trial(OUT + "/in_process").steps()
    opener.cancel()
    gate.set()
    hook.close()
    return steps


RESULTS["read_in_process"] = read_in_process()
""",
    # AWS's iterative model-pruning example: a Hook subclass whose forward_hook writes each call of
    # a module as <module>_<call>, on a ResNet-shaped model (a ReLU module used twice per block)
    "pruning_forward_hook": """
class PruningHook(smd.Hook):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = {}

    def forward_hook(self, module, inputs, outputs):
        name = module._module_name  # the example: self.module_maps[module] (smdebug 0.x; 1.0.34 lacks it)
        outputs.register_hook(self.backward_hook(name + "_" + module._get_name() + "_output"))
        if isinstance(module, nn.BatchNorm2d):
            self._write_outputs(name + ".running_mean", module.running_mean)
            self._write_outputs(name + ".running_var", module.running_var)
        seen = self.calls.setdefault(self.step, {})
        seen[name] = seen[name] + 1 if name in seen else 0
        self._write_inputs(name + "_" + str(seen[name]), inputs)
        self._write_outputs(name + "_" + str(seen[name]), outputs)
        self.last_saved_step = self.step


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


class TinyResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = nn.Sequential(BasicBlock(4), BasicBlock(4))
        self.layer2 = nn.Sequential(BasicBlock(4))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        x = self.layer2(self.layer1(self.relu(self.bn1(self.conv1(x)))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def pruning_run():
    # the example's train.py: hook from SageMaker's JSON (a custom collection saved every 4
    # steps), save_scalar at each epoch's end, an evaluation loop without backward
    cfg = {"LocalPath": OUT + "/pruning", "HookParameters": {}, "CollectionConfigurations": [
        {"CollectionName": "custom_collection", "CollectionParameters": {
            "include_regex": ".*relu|.*weight|.*bias|.*running_mean|.*running_var|.*CrossEntropyLoss",
            "save_interval": "4"}}]}
    json.dump(cfg, open(OUT + "/pruning.json", "w"))
    torch.manual_seed(0)
    model = TinyResNet()
    hook = PruningHook.create_from_json_file(OUT + "/pruning.json")
    criterion = nn.CrossEntropyLoss()
    hook.register_module(model)
    hook.register_loss(criterion)
    hook.save_scalar("parameters", sum(p.numel() for p in model.parameters()), sm_metric=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(2, 3, 8, 8), torch.tensor([0, 2])
    for epoch in range(2):
        model.train()
        hook.set_mode(smd.modes.TRAIN)
        for _ in range(5):
            model.zero_grad()
            criterion(model(x), y).backward()
            opt.step()
        hook.save_scalar("loss", 0.5, sm_metric=True)
        model.eval()
        hook.set_mode(smd.modes.EVAL)
        for _ in range(2):
            criterion(model(x), y)
        hook.save_scalar("accuracy", 0.25, sm_metric=True)
    hook.close()
    trial = create_trial(OUT + "/pruning")
    out = {"steps": trial.steps(), "tensors": {}, "ranks": []}
    for name in trial.tensor_names():
        t = trial.tensor(name)
        out["tensors"][name] = {m.name: t.steps(mode=m) for m in (smd.modes.TRAIN, smd.modes.EVAL) if t.steps(mode=m)}
    # the notebook's compute_filter_ranks: activation output x its gradient at every TRAIN step
    for step in trial.steps(mode=smd.modes.TRAIN):
        act = trial.tensor("layer1.0.relu_0_output_0").value(step, mode=smd.modes.TRAIN)
        grad = trial.tensor("gradient/layer1.0.relu_ReLU_output").value(step, mode=smd.modes.TRAIN)
        out["ranks"].append([step, list(act.shape), list(grad.shape)])
    return out


RESULTS["pruning_forward_hook"] = pruning_run()
""",
}


def _run(python: Path, which: str, out: Path) -> dict[str, Any]:
    """One process per library (torch imports once); returns its RESULTS."""
    script = out.parent / f"dropin_{which}.py"  # not smdebug.py: it would shadow the package
    script.write_text(
        IMPORTS[which]
        + COMMON
        + "".join(SCENARIOS.values())
        + "\njson.dump(RESULTS, open(OUT + '/results.json', 'w'))\n"
    )
    run_as(which, python, script, out)
    results: dict[str, Any] = json.loads((out / "results.json").read_text())
    return results


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory, smdebug_torch_python: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for which, python in (("smdebug", smdebug_torch_python), ("ours", Path(sys.executable))):
        root = tmp_path_factory.mktemp(which) / "out"
        root.mkdir()
        out[which] = _run(python, which, root)
    return out


def test_collection_check_when_saving_starts(results: dict[str, dict[str, Any]]) -> None:
    """A collection with nothing to match is refused at the first step, never at a bare close()."""
    ours, theirs = results["ours"]["collection_check_timing"], results["smdebug"]["collection_check_timing"]
    assert ours == theirs
    assert theirs["api_md"] == "ok"
    assert theirs["saved_unmatched"] == "InvalidCollectionConfiguration"


def test_reader_in_process_sees_every_finished_step(results: dict[str, dict[str, Any]]) -> None:
    """A trial opened in the training process, without close(), has the last finished step."""
    assert results["ours"]["read_in_process"] == results["smdebug"]["read_in_process"] == [0, 20, 40, 60, 80]


def test_pruning_example_forward_hook_subclass(results: dict[str, dict[str, Any]]) -> None:
    """The pruning example's forward_hook subclass and train.py: the same steps, tensor names
    and steps per mode; its compute_filter_ranks reads every TRAIN step (scalars saved at a
    step that saves nothing wait for the next saved step, as smdebug)."""
    ours, theirs = results["ours"]["pruning_forward_hook"], results["smdebug"]["pruning_forward_hook"]
    assert ours["steps"] == theirs["steps"]
    assert sorted(ours["tensors"]) == sorted(theirs["tensors"])
    assert {n: s for n, s in ours["tensors"].items() if s != theirs["tensors"][n]} == {}
    assert ours["ranks"] == theirs["ranks"] and len(theirs["ranks"]) == 3
    assert theirs["tensors"]["layer1.0.relu_1_output_0"] == {"TRAIN": [0, 4, 8], "EVAL": [0]}
    assert theirs["tensors"]["scalar/accuracy"] == {"TRAIN": [8], "EVAL": [3]}  # written at the next saved step
