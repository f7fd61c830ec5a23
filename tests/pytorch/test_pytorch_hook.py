"""The PyTorch hook on real CPU training: names, shapes and values as the model saw them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import sagemaker_debugger_ext.pytorch as smd
from sagemaker_debugger_ext._exceptions import HookError
from sagemaker_debugger_ext.hooks import TrainingContext
from sagemaker_debugger_ext.trials import create_trial


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 5)
        self.relu = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(5, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.relu(self.fc1(x)))


class CNN(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2))
        self.head = torch.nn.Linear(2 * 3 * 3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.flatten(self.features(x), 1))


def _data(model: torch.nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    x = (
        torch.randn(8, 6, generator=g)
        if isinstance(getattr(model, "module", model), MLP)
        else torch.randn(8, 1, 8, 8, generator=g)
    )
    return x, torch.randint(0, 3, (8,), generator=g)


def _train(model: torch.nn.Module, hook: smd.Hook, steps: int) -> dict[int, dict[str, np.ndarray]]:
    """Train and return, per step, the parameters at step start and the gradients after backward."""
    hook.register_module(model)
    loss_fn = torch.nn.CrossEntropyLoss()
    hook.register_loss(loss_fn)
    hook.set_mode(smd.modes.TRAIN)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    x, y = _data(model)
    seen: dict[int, dict[str, np.ndarray]] = {}
    cls = model._get_name()  # smdebug: the registered module's class, wrappers included
    for step in range(steps):
        snap = {f"{cls}_{n}": p.detach().float().cpu().numpy().copy() for n, p in model.named_parameters()}
        opt.zero_grad()
        out = model(x)  # on the GPU when DataParallel has one
        loss = loss_fn(out, y.to(out.device))
        loss.backward()
        snap.update(
            {
                f"gradient/{cls}_{n}": p.grad.float().cpu().numpy().copy()
                for n, p in model.named_parameters()
                if p.grad is not None
            }
        )
        snap["CrossEntropyLoss_output_0"] = loss.detach().float().cpu().numpy().copy()
        seen[step] = snap
        opt.step()
    hook.close()
    return seen


def _hook(out: Path, interval: int, **kw: object) -> smd.Hook:
    kw.setdefault("include_collections", ["weights", "biases", "gradients", "losses", "relu_output"])
    return smd.Hook(out_dir=out, save_config=smd.SaveConfig(save_interval=interval), context=TrainingContext(), **kw)


@pytest.mark.parametrize("interval", [1, 10], ids=["interval1", "interval10"])
@pytest.mark.parametrize("model_cls", [MLP, CNN], ids=["mlp", "cnn"])
def test_trained_model_tensors_match(tmp_path: Path, model_cls: type, interval: int) -> None:
    """Every parameter, gradient and loss is saved at each due step with the model's own values."""
    torch.manual_seed(0)
    model = model_cls()
    steps = 12
    seen = _train(model, _hook(tmp_path, interval), steps)
    trial = create_trial(str(tmp_path))
    saved = [s for s in range(steps) if s % interval == 0]
    assert trial.steps() == saved
    assert trial.steps(mode=smd.modes.TRAIN) == saved
    for step in saved:
        assert set(seen[step]) <= set(trial.tensor_names(step=step))
        for name, expected in seen[step].items():
            got = trial.tensor(name).value(step)
            assert got.shape == expected.shape or (expected.shape == () and got.size == 1), name
            np.testing.assert_allclose(got.reshape(expected.shape), expected, rtol=1e-6, atol=1e-7, err_msg=name)
        relu = [n for n in trial.tensor_names(step=step) if n in trial.tensor_names(collection="relu_output")]
        assert relu == (["relu_output_0"] if model_cls is MLP else ["features.1_output_0"])
    weights = set(trial.tensor_names(collection="weights"))
    assert weights == {n for n in seen[0] if n.endswith("weight") and "gradient" not in n}
    assert trial.tensor_names(collection="losses") == ["CrossEntropyLoss_output_0"]


def test_activation_tensors_keep_smdebug_names_and_join_class_collections(tmp_path: Path) -> None:
    """Activation modules keep smdebug's names (``1_output_0``); the hook records them in the
    activation collections by module class, so including ``relu_output`` saves them."""
    model = torch.nn.Sequential(
        torch.nn.Linear(4, 4),
        torch.nn.ReLU(),
        torch.nn.Linear(4, 4),
        torch.nn.LeakyReLU(),
        torch.nn.Linear(4, 4),
        torch.nn.Tanh(),
        torch.nn.Sigmoid(),
    )
    hook = _hook(tmp_path, 1, include_collections=["relu_output", "relu_input", "tanh_input", "sigmoid_input"])
    hook.register_module(model)
    model(torch.randn(2, 4))
    hook.close()
    trial = create_trial(str(tmp_path))
    assert set(trial.tensor_names(step=0)) == {"1_input_0", "1_output_0", "5_input_0", "6_input_0"}
    assert trial.tensor_names(collection="relu_output") == ["1_output_0"]
    assert trial.tensor_names(collection="relu_input") == ["1_input_0"]
    assert trial.tensor_names(collection="tanh_input") == ["5_input_0"]
    assert trial.tensor_names(collection="sigmoid_input") == ["6_input_0"]


def test_named_activation_keeps_smdebug_name(tmp_path: Path) -> None:
    """A module named ``relu`` gives smdebug's ``relu_output_0``, in collection relu_output."""
    hook = _hook(tmp_path, 1, include_collections=["relu_output"])
    model = MLP()
    hook.register_module(model)
    model(torch.randn(2, 6))
    hook.close()
    assert create_trial(str(tmp_path)).tensor_names(collection="relu_output") == ["relu_output_0"]


def test_bfloat16_model(tmp_path: Path) -> None:
    """A bf16 model trains with the hook; values read back equal the bf16 parameters."""
    torch.manual_seed(0)
    model = MLP().to(torch.bfloat16)
    hook = _hook(tmp_path, 1)
    hook.register_module(model)
    before = model.fc1.weight.detach().float().numpy().copy()
    loss = model(torch.randn(4, 6, dtype=torch.bfloat16)).float().pow(2).mean()
    loss.backward()
    grad = model.fc1.weight.grad.float().numpy().copy()
    hook.close()
    trial = create_trial(str(tmp_path))
    np.testing.assert_array_equal(trial.tensor("MLP_fc1.weight").value(0), before)
    np.testing.assert_array_equal(trial.tensor("gradient/MLP_fc1.weight").value(0), grad)
    assert trial.tensor("MLP_fc1.weight").value(0).dtype == np.float32
    raw = (tmp_path / "events/000000000000/000000000000_worker_0.tfevents").read_bytes()
    assert b"\x08\x0e" in raw  # TensorProto.dtype = DT_BFLOAT16 (14)


def test_dataparallel_wrapper_names_as_smdebug(tmp_path: Path) -> None:
    """nn.DataParallel is not looked through, as in smdebug: its model is ``module``, its
    parameters ``DataParallel_module.<path>``; values equal the bare model's."""
    torch.manual_seed(0)
    _train(torch.nn.DataParallel(MLP()), _hook(tmp_path / "dp", 1), 2)
    torch.manual_seed(0)
    _train(MLP(), _hook(tmp_path / "plain", 1), 2)
    dp, plain = create_trial(str(tmp_path / "dp")), create_trial(str(tmp_path / "plain"))
    assert "DataParallel_module.fc2.weight" in dp.tensor_names()
    assert "gradient/DataParallel_module.fc1.bias" in dp.tensor_names()
    assert "module.relu_output_0" in dp.tensor_names(collection="relu_output")
    # with one GPU, DataParallel trains its module there (the bare model trains on CPU): rounding differs
    np.testing.assert_allclose(
        dp.tensor("DataParallel_module.fc2.weight").value(1),
        plain.tensor("MLP_fc2.weight").value(1),
        rtol=0 if not torch.cuda.is_available() else 1e-5,
        atol=0 if not torch.cuda.is_available() else 1e-6,
    )


def test_frozen_parameters_have_no_gradient(tmp_path: Path) -> None:
    """Parameters with requires_grad=False are saved as weights but get no gradient hook."""
    model = MLP()
    model.fc1.requires_grad_(False)
    _train(model, _hook(tmp_path, 1), 1)
    trial = create_trial(str(tmp_path))
    names = trial.tensor_names(step=0)
    assert "MLP_fc1.weight" in names
    assert "gradient/MLP_fc1.weight" not in names
    assert "gradient/MLP_fc2.weight" in names
    # nor is the gradient that never exists listed in the collections JSON
    assert "gradient/MLP_fc1.weight" not in trial.collection("gradients").tensor_names
    assert "gradient/MLP_fc2.weight" in trial.collection("gradients").tensor_names


def test_eval_mode_has_no_gradients_and_own_steps(tmp_path: Path) -> None:
    """EVAL steps count separately and never save gradients."""
    model = MLP()
    hook = _hook(tmp_path, 1)
    hook.register_module(model)
    hook.set_mode(smd.modes.TRAIN)
    model(torch.randn(2, 6)).sum().backward()
    hook.set_mode(smd.modes.EVAL)
    with torch.no_grad():
        model(torch.randn(2, 6))
    hook.close()
    trial = create_trial(str(tmp_path))
    assert (trial.mode(1), trial.mode_step(1)) == (smd.modes.EVAL, 0)
    assert trial.steps(mode=smd.modes.EVAL) == [0]
    assert not any(n.startswith("gradient/") for n in trial.tensor_names(step=1))
    assert any(n.startswith("gradient/") for n in trial.tensor_names(step=0))


def test_registration_errors_and_get_hook(tmp_path: Path) -> None:
    """Non-modules are refused with a clear error; get_hook returns the latest hook."""
    hook = _hook(tmp_path, 1)
    assert smd.get_hook() is hook
    with pytest.raises(HookError, match="torch.nn.Module"):
        hook.register_module("not a module")  # type: ignore[arg-type]
    model = MLP()
    hook.register_module(model)
    with pytest.raises(HookError, match="registered before"):
        hook.register_module(model)
    with pytest.raises(HookError, match="torch.Tensor"):
        hook.record_tensor_value("x", 3.0)  # type: ignore[arg-type]
    hook.close()


def test_framework_metrics_handed_to_profiler(tmp_path: Path) -> None:
    """With a profiler config, each step and forward pass becomes a timeline event."""
    import json

    cfg = tmp_path / "profilerconfig.json"
    cfg.write_text(
        json.dumps(
            {"ProfilingIntervalInMilliseconds": 500, "ProfilingParameters": {"LocalPath": str(tmp_path / "prof")}}
        )
    )
    hook = smd.Hook(
        out_dir=tmp_path / "run",
        save_config=smd.SaveConfig(save_interval=100),
        context=TrainingContext(profiler_config_path=str(cfg)),
    )
    _train(MLP(), hook, 3)
    files = list((tmp_path / "prof" / "framework" / "pevents").glob("*/*_pythontimeline.json"))
    assert len(files) == 1
    events = [e for e in json.loads(files[0].read_text()) if e.get("ph") == "X"]
    steps = [e for e in events if e["name"] == "Step:ModeKeys.TRAIN"]
    assert [e["args"]["step_num"] for e in steps] == ["0", "1", "2"]
    assert sum(e["name"] == "forward" for e in events) == 3


_DDP_SCRIPT = """
import os, sys
import torch, torch.distributed as dist
sys.path.insert(0, {tests!r})
import sagemaker_debugger_ext.pytorch as smd
from test_pytorch_hook import MLP, _train

dist.init_process_group("gloo", init_method="file://" + {rendezvous!r}, rank=0, world_size=1)
model = torch.nn.parallel.DistributedDataParallel(MLP())
hook = smd.Hook(out_dir={out!r}, save_config=smd.SaveConfig(save_interval=1),
                include_collections=["weights", "gradients"], include_workers="all")
assert hook.worker == "worker_0", hook.worker
_train(model, hook, 2)  # closes the hook: every file is written
dist.destroy_process_group()
sys.stdout.flush()
# Skip interpreter teardown: gloo's ProcessGroup destructor can deadlock with the GIL when
# the DDP reducer is collected (seen once in the parallel suite); the files are complete.
os._exit(0)
"""


def test_distributed_data_parallel_wrapper(tmp_path: Path) -> None:
    """Under DDP (gloo, one process) the worker comes from torch.distributed and names are
    smdebug's (``DistributedDataParallel_module.<path>``). Runs in its own process: torch.distributed state stays out of the suite."""
    import subprocess
    import sys

    script = tmp_path / "ddp.py"
    out = tmp_path / "run"
    script.write_text(_DDP_SCRIPT.format(tests=str(Path(__file__).parent), rendezvous=str(tmp_path / "rendezvous"),
                                         out=str(out)))  # fmt: skip
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    trial = create_trial(str(out))
    assert trial.workers() == ["worker_0"]
    names = trial.tensor_names(step=1)
    assert "gradient/DistributedDataParallel_module.fc1.weight" in names
    assert (
        "DistributedDataParallel_module.fc2.weight" in names and "DistributedDataParallel_module.fc2.bias" not in names
    )


def test_steps_that_save_nothing_attach_no_hooks(tmp_path: Path) -> None:
    """Forward and gradient hooks exist only during saved steps (the hot path stays bare)."""
    model = MLP()
    hook = _hook(tmp_path, 10)
    hook.register_module(model)
    x = torch.randn(2, 6)
    model(x).sum().backward()  # step 0: saved
    assert len(model.relu._forward_hooks) == 1
    assert len(model.fc1.weight._backward_hooks) == 1
    model(x).sum().backward()  # step 1: nothing due
    assert not model.fc1._forward_hooks and not model.relu._forward_hooks
    # None, not an empty dict: an empty one still costs a Python call per parameter per backward
    assert model.fc1.weight._backward_hooks is None
    hook.close()
    assert sorted(create_trial(str(tmp_path)).steps()) == [0]


def test_hooks_stay_attached_across_steps_that_save_the_same(tmp_path: Path) -> None:
    """Consecutive saved steps keep one set of hooks (no detach and re-attach each step),
    and every step still saves its gradients; an EVAL step, which saves no gradients,
    detaches them."""
    model = MLP()
    hook = _hook(tmp_path, 1)
    hook.register_module(model)
    x = torch.randn(2, 6)
    callbacks = []
    for _ in range(3):
        model(x).sum().backward()
        callbacks.append(list(model.fc1.weight._backward_hooks.values()))
        assert len(model.relu._forward_hooks) == 1
    assert callbacks[0] == callbacks[1] == callbacks[2] and len(callbacks[0]) == 1
    hook.set_mode(smd.modes.EVAL)
    with torch.no_grad():
        model(x)
    assert model.fc1.weight._backward_hooks is None
    hook.close()
    trial = create_trial(str(tmp_path))
    assert trial.tensor("gradient/MLP_fc1.weight").steps() == [0, 1, 2]


def test_get_hook_creates_from_json_or_returns_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """get_hook(create_if_not_exists=True) builds the hook from the JSON config, or gives None without one."""
    import json

    from sagemaker_debugger_ext.hooks._current import HookSlot
    from sagemaker_debugger_ext.hooks.pytorch import _singleton

    monkeypatch.setattr(_singleton, "_SLOT", HookSlot())
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(tmp_path / "missing.json"))
    assert smd.get_hook(create_if_not_exists=True) is None
    cfg = tmp_path / "hook.json"
    cfg.write_text(json.dumps({"LocalPath": str(tmp_path / "run"), "HookParameters": {"save_interval": "3"}}))
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(cfg))
    hook = smd.get_hook(create_if_not_exists=True)
    assert hook is not None and hook.out_dir == str(tmp_path / "run")
    assert hook.save_config.get_save_config(smd.modes.TRAIN).save_interval == 3
    assert smd.get_hook() is hook
    hook.close()


def test_freezing_and_unfreezing_between_saved_steps(tmp_path: Path) -> None:
    """The per-step save plan is cached, but a layer frozen (or unfrozen) mid-training is
    followed: no gradient while frozen, gradients again afterwards, no error."""
    model = MLP()
    hook = _hook(tmp_path, 2)
    hook.register_module(model)
    x = torch.randn(2, 6)
    for step in range(8):
        model.fc1.requires_grad_(step in (2, 3, 6, 7))  # frozen when the plan is first made
        model(x).sum().backward()
    hook.close()
    trial = create_trial(str(tmp_path))
    assert trial.steps() == [0, 2, 4, 6]
    with_fc1 = [s for s in trial.steps() if "gradient/MLP_fc1.weight" in trial.tensor_names(step=s)]
    assert with_fc1 == [2, 6]
    assert all("gradient/MLP_fc2.weight" in trial.tensor_names(step=s) for s in trial.steps())


def test_parameter_assigned_to_a_collection_mid_run_is_saved_from_then_on(tmp_path: Path) -> None:
    """save_tensor(<a bias's name>, ..., "weights") makes that parameter a member of
    "weights": the cached save plan is dropped, so later saved steps save it too."""
    model = MLP()
    hook = _hook(tmp_path, 1, include_collections=["weights"])
    hook.register_module(model)
    x = torch.randn(2, 6)
    model(x)  # step 0: weights (the plan is made and cached here)
    hook.save_tensor("MLP_fc1.bias", model.fc1.bias, "weights")  # written into step 0
    model(x)  # step 1
    with torch.no_grad():
        model.fc1.bias.add_(1.0)
    model(x)  # step 2: saved as a parameter of "weights"
    hook.close()
    trial = create_trial(str(tmp_path))
    assert all("MLP_fc1.bias" in trial.tensor_names(step=s) for s in (0, 1, 2))
    assert "MLP_fc2.bias" not in trial.tensor_names(step=2)
    np.testing.assert_array_equal(trial.tensor("MLP_fc1.bias").value(2), model.fc1.bias.detach().numpy())
