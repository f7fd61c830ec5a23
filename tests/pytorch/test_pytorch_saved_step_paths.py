"""A saved step's per-tensor paths: plain CPU tensors saved raw only take a fast path
(``Hook._write_for`` -> ``StepOutput.write_raw``); everything else (reductions, shapes,
bfloat16, TensorBoard) the general one. Both must write the same files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import sagemaker_debugger_ext.pytorch as smd
from sagemaker_debugger_ext.hooks import TrainingContext
from sagemaker_debugger_ext.hooks._collections import Collection
from sagemaker_debugger_ext.hooks._step import raw_only
from sagemaker_debugger_ext.trials import create_trial

RAW = smd.ReductionConfig(save_raw_tensor=True)


def _coll(name: str, cfg: smd.ReductionConfig | None) -> Collection:
    coll = Collection(name)
    coll.reduction_config = cfg
    return coll


@pytest.mark.parametrize(
    ("configs", "expected"),
    [
        ([("weights", RAW)], True),
        ([("weights", None)], True),  # no config of its own: the raw tensor
        ([("losses", smd.ReductionConfig(reductions=["max"], save_raw_tensor=True))], True),  # scalar collection
        ([("weights", RAW), ("custom", RAW)], True),
        ([("weights", smd.ReductionConfig(reductions=["max"], save_raw_tensor=True))], False),
        ([("weights", smd.ReductionConfig(abs_reductions=["max"], save_raw_tensor=True))], False),
        ([("weights", smd.ReductionConfig(norms=["l2"], save_raw_tensor=True))], False),
        ([("weights", smd.ReductionConfig(abs_norms=["l1"], save_raw_tensor=True))], False),
        ([("weights", smd.ReductionConfig(save_raw_tensor=True, save_shape=True))], False),
        ([("weights", smd.ReductionConfig())], False),  # saves nothing raw
        ([("weights", RAW), ("custom", smd.ReductionConfig(reductions=["min"]))], False),
        ([], False),
    ],
)
def test_raw_only_is_true_exactly_when_the_raw_tensor_is_all_that_is_written(
    configs: list[tuple[str, smd.ReductionConfig | None]], expected: bool
) -> None:
    assert raw_only([_coll(name, cfg) for name, cfg in configs]) is expected


class _Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 5)
        self.relu = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(5, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.relu(self.fc1(x)))


def _run(out: Path, tensorboard: Path | None) -> None:
    torch.manual_seed(0)
    model, loss_fn = _Net(), torch.nn.CrossEntropyLoss()
    hook = smd.Hook(out_dir=out, save_config=smd.SaveConfig(save_interval=2), context=TrainingContext(),
                    include_collections=["weights", "biases", "gradients", "losses", "relu_output", "extra"],
                    export_tensorboard=tensorboard is not None, tensorboard_dir=tensorboard)  # fmt: skip
    hook.get_collection("biases").reduction_config = smd.ReductionConfig(save_raw_tensor=True, save_shape=True)
    hook.get_collection("gradients").reduction_config = smd.ReductionConfig(
        reductions=["max", "min"], save_raw_tensor=True
    )
    hook.get_collection("relu_output").reduction_config = smd.ReductionConfig(reductions=["max"])  # on the device
    hook.get_collection("extra").include("counts_output_0")
    hook.register_module(model)
    hook.register_loss(loss_fn)
    opt = torch.optim.SGD(model.parameters(), lr=0.3)
    gen = torch.Generator().manual_seed(1)
    x, y = torch.randn(8, 6, generator=gen), torch.randint(0, 3, (8,), generator=gen)
    for step in range(5):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        hook.record_tensor_value("counts", torch.bincount(y, minlength=3))  # int64: the fast path
        hook.save_tensor("half", torch.full((2,), step, dtype=torch.bfloat16), "extra")  # the general path
        loss.backward()
        opt.step()
    hook.close()


def test_fast_and_general_paths_write_the_same_trial(tmp_path: Path) -> None:
    """The same training saved once with the fast path (no TensorBoard) and once with every
    tensor on the general path (TensorBoard export on): the same index files byte for byte
    (names, offsets, lengths, shapes) and the same values, raw and reduced."""
    _run(tmp_path / "fast", None)
    _run(tmp_path / "general", tmp_path / "tb")
    indexes = sorted(p.relative_to(tmp_path / "fast") for p in (tmp_path / "fast" / "index").rglob("*.json"))
    assert len(indexes) == 3  # steps 0, 2, 4
    for rel in indexes:
        assert (tmp_path / "fast" / rel).read_bytes() == (tmp_path / "general" / rel).read_bytes(), rel
    fast, general = create_trial(str(tmp_path / "fast")), create_trial(str(tmp_path / "general"))
    names = fast.tensor_names()
    assert names == general.tensor_names()
    assert set(names) >= {"_Net_fc1.weight", "gradient/_Net_fc1.weight", "CrossEntropyLoss_output_0",
                          "counts_output_0", "half", "_Net_fc1.bias", "relu_output_0"}  # fmt: skip
    for name in names:
        mine, theirs = fast.tensor(name), general.tensor(name)
        assert mine.steps() == theirs.steps(), name
        ops = ("max", "min") if name.startswith("gradient/") else ("max",) if name.startswith("relu_output") else ()
        for step in mine.steps():
            if not name.startswith("relu_output"):  # reductions only (on the device): no value
                np.testing.assert_array_equal(mine.value(step), theirs.value(step), err_msg=name)
            for op in ops:  # min and max: exact on either path
                assert mine.reduction_value(step, op) == theirs.reduction_value(step, op), (name, op)


def _grad_hook(out: Path, interval: int) -> smd.Hook:
    return smd.Hook(out_dir=out, save_config=smd.SaveConfig(save_interval=interval), context=TrainingContext(),
                    include_collections=["gradients"])  # fmt: skip


def test_gradient_hooks_set_directly_are_one_per_parameter_and_gone_after_the_step(tmp_path: Path) -> None:
    """A parameter without hooks of its own gets the hook's gradient hook set in one call
    (no module hook attached at all here): exactly one per saved step, kept across saved
    steps that save the same, removed (None, not an empty dict) by the next step that saves
    nothing; every saved step has its gradient, equal to the parameter's."""
    torch.manual_seed(0)
    model = _Net()
    hook = _grad_hook(tmp_path, 2)
    hook.register_module(model)
    x = torch.randn(4, 6)
    grads = {}
    for step in range(5):
        model.zero_grad()
        model(x).pow(2).sum().backward()
        hooks = model.fc1.weight._backward_hooks
        if step % 2 == 0:
            assert hooks is not None and len(hooks) == 1, step
            grads[step] = model.fc1.weight.grad.numpy().copy()
        else:
            assert hooks is None, step
    hook.close()
    tensor = create_trial(str(tmp_path)).tensor("gradient/_Net_fc1.weight")
    assert tensor.steps() == [0, 2, 4]
    for step, grad in grads.items():
        np.testing.assert_array_equal(tensor.value(step), grad)

    hook = _grad_hook(tmp_path / "every", 1)  # consecutive saved steps keep the same one
    hook.register_module(model)
    seen = []
    for _ in range(3):
        model(x).sum().backward()
        seen.append(list(model.fc1.weight._backward_hooks.values()))
    assert seen[0] == seen[1] == seen[2] and len(seen[0]) == 1
    hook.close()
    assert model.fc1.weight._backward_hooks is None


def test_gradient_hooks_of_others_run_and_stay(tmp_path: Path) -> None:
    """Hooks registered on a parameter by others, before the hook's (it then registers its
    own beside them) or while the hook's is set, run at every backward and stay after the
    hook's is removed; the hook saves each saved step's gradient once."""
    torch.manual_seed(0)
    model = _Net()
    calls = {"before": 0, "during": 0}

    def count(key: str) -> Any:
        def hook_fn(grad: torch.Tensor) -> None:
            calls[key] += 1

        return hook_fn

    model.fc2.weight.register_hook(count("before"))
    hook = _grad_hook(tmp_path, 2)
    hook.register_module(model)
    x = torch.randn(4, 6)
    model(x).sum().backward()  # step 0: saved; fc1.weight holds only the hook's, set directly
    model.fc1.weight.register_hook(count("during"))
    model(x).sum().backward()  # step 1: nothing saved; the hook's own removed, the other kept
    assert len(model.fc1.weight._backward_hooks) == 1 and len(model.fc2.weight._backward_hooks) == 1
    model(x).sum().backward()  # step 2: saved, the hook's registered beside the others
    assert len(model.fc1.weight._backward_hooks) == 2 and len(model.fc2.weight._backward_hooks) == 2
    model(x).sum().backward()  # step 3
    hook.close()
    assert calls == {"before": 4, "during": 3}
    assert len(model.fc1.weight._backward_hooks) == 1 and len(model.fc2.weight._backward_hooks) == 1
    trial = create_trial(str(tmp_path))
    for name in ("gradient/_Net_fc1.weight", "gradient/_Net_fc2.weight"):
        assert trial.tensor(name).steps() == [0, 2], name
    for index in (tmp_path / "index").rglob("*.json"):  # one record per gradient and step
        names = [entry["tensorname"] for entry in json.loads(index.read_text())["tensor_payload"]]
        assert len(names) == len(set(names)) == 4, index
