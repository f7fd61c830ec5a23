"""FSDP in one process (a one-rank gloo group): unsharded names, replaced-parameter warning, shard reductions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper

import sagemaker_debugger_ext.pytorch as smd
from sagemaker_debugger_ext.hooks.pytorch._naming import clean_name
from sagemaker_debugger_ext.trials import create_trial


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.fc2 = nn.Linear(6, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def _train(model: nn.Module, out: Path, steps: int = 2) -> dict[int, dict[str, np.ndarray]]:
    """Train with a hook saving everything; return the parameters at each step's start."""
    hook = smd.Hook(out_dir=str(out), save_config=smd.SaveConfig(save_interval=1), save_all=True)
    hook.register_module(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    seen = {}
    for step in range(steps):
        seen[step] = {n: (p.full_tensor() if hasattr(p, "full_tensor") else p).detach().clone().cpu().numpy()
                      for n, p in model.named_parameters()}  # fmt: skip
        opt.zero_grad()
        device = next(model.parameters()).device  # fully_shard moves the model to a GPU where there is one
        model(torch.ones(3, 4, device=device)).sum().backward()
        opt.step()
    hook.close()
    return seen


@pytest.mark.parametrize(
    ("name", "clean"),
    [("fc1._checkpoint_wrapped_module.weight", "fc1.weight"), ("_fsdp_wrapped_module.fc1._fsdp_wrapped_module", "fc1"),
     ("fc1.weight", "fc1.weight"), ("my_wrapped_module.w", "my_wrapped_module.w")],
    ids=["checkpoint", "fsdp1-nested", "plain", "look-alike"],
)  # fmt: skip
def test_clean_name(name: str, clean: str) -> None:
    """Only whole wrapper path components are dropped."""
    assert clean_name(name) == clean


def test_checkpoint_wrapper_names_are_the_unwrapped_models(tmp_path: Path) -> None:
    """An activation-checkpointed layer keeps its plain name; its output is saved once, by the wrapper."""
    model = Net()
    model.fc1 = checkpoint_wrapper(model.fc1)
    _train(model, tmp_path / "out")
    names = create_trial(str(tmp_path / "out")).tensor_names()
    assert "Net_fc1.weight" in names and "gradient/Net_fc1.weight" in names and "fc1_output_0" in names
    assert not [n for n in names if "wrapped" in n]


@pytest.fixture
def one_rank_group(tmp_path: Path) -> Iterator[None]:
    dist.init_process_group("gloo", init_method=(tmp_path / "store").as_uri(), rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


def test_fully_shard_class_named_as_the_model(tmp_path: Path, one_rank_group: None) -> None:
    """fully_shard's FSDPNet is named Net; DTensor parameters are saved whole, gradients too."""
    from torch.distributed.fsdp import fully_shard

    model = Net()
    fully_shard(model.fc1)
    fully_shard(model)
    assert type(model).__name__ == "FSDPNet"
    seen = _train(model, tmp_path / "out")
    trial = create_trial(str(tmp_path / "out"))
    assert trial.workers() == ["worker_0"]
    params = ["Net_fc1.bias", "Net_fc1.weight", "Net_fc2.bias", "Net_fc2.weight"]
    names = trial.tensor_names()
    assert [n for n in names if n.startswith(("Net_fc", "gradient/"))] == params + [f"gradient/{n}" for n in params]
    assert "Net_output_0" in names and "fc1_output_0" in names and not [n for n in names if "FSDP" in n]
    for step, values in seen.items():
        for name, value in values.items():
            np.testing.assert_array_equal(trial.tensor(f"Net_{name}").value(step), value)
    assert trial.tensor("gradient/Net_fc1.weight").value(1).shape == (6, 4)


def test_registered_before_fully_shard_warns(
    tmp_path: Path, one_rank_group: None, caplog: pytest.LogCaptureFixture
) -> None:
    """Parameters replaced after register_module (here by fully_shard) are named in a warning."""
    from torch.distributed.fsdp import fully_shard

    model = Net()
    hook = smd.Hook(out_dir=str(tmp_path / "out"), save_config=smd.SaveConfig(save_interval=1))
    hook.register_module(model)
    fully_shard(model)
    with caplog.at_level("WARNING", logger="sagemaker_debugger_ext.hooks"):
        model(torch.ones(2, 4))
    hook.close()
    assert (
        "Net_fc1.weight, Net_fc1.bias, Net_fc2.weight, Net_fc2.bias were replaced after register_module()"
        in caplog.text
    )


def test_registered_after_fully_shard_does_not_warn(
    tmp_path: Path, one_rank_group: None, caplog: pytest.LogCaptureFixture
) -> None:
    """The right order is silent."""
    from torch.distributed.fsdp import fully_shard

    model = Net()
    fully_shard(model)
    hook = smd.Hook(out_dir=str(tmp_path / "out"), save_config=smd.SaveConfig(save_interval=1))
    hook.register_module(model)
    with caplog.at_level("WARNING", logger="sagemaker_debugger_ext.hooks"):
        model(torch.ones(2, 4))
    hook.close()
    assert "replaced" not in caplog.text


ALL_OPS = [(op, False) for op in ("min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2")] + [
    ("max", True),
    ("l1", True),
]


@pytest.mark.parametrize(
    "tensor",
    [torch.tensor([[1.5, -2.0, 0.25], [3.0, -0.5, 1.0]]), torch.zeros(0, 3), torch.tensor([-1.0, 2.0], dtype=torch.bfloat16),
     torch.tensor([0.5, -4.0], dtype=torch.float64)],
    ids=["float32", "empty", "bfloat16", "float64"],
)  # fmt: skip
def test_shard_reductions_equal_whole_tensor_reductions(one_rank_group: None, tensor: torch.Tensor) -> None:
    """One shard: the combined statistics give what compute_reduction gives on the whole tensor
    (NaN where an empty tensor has no value; bf16 reduced in float32)."""
    from sagemaker_debugger_ext._reductions import compute_reduction
    from sagemaker_debugger_ext.hooks.pytorch._shard_reductions import reduce_shards

    [got] = reduce_shards([tensor], [ALL_OPS])
    whole = tensor.float().numpy() if tensor.dtype == torch.bfloat16 else tensor.numpy()
    for op, is_abs in ALL_OPS:
        want = compute_reduction(op, whole, is_abs=is_abs)
        assert got[(op, is_abs)].dtype == (np.float64 if tensor.dtype == torch.float64 else np.float32), op
        np.testing.assert_allclose(got[(op, is_abs)], want, rtol=1e-6, err_msg=op)


def test_shard_reductions_reject_unknown_ops(one_rank_group: None) -> None:
    """An op without a shard formula is refused, named."""
    from sagemaker_debugger_ext.hooks.pytorch._shard_reductions import reduce_shards

    with pytest.raises(ValueError, match="'median'"):
        reduce_shards([torch.ones(2)], [[("median", False)]])
