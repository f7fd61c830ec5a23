"""FSDP on CPU with gloo (real torchrun, 2 ranks): one trial with both workers, the unsharded
names, values equal to the parameters the script gathers itself at each step."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from launch_distributed import torchrun

from sagemaker_debugger_ext.trials import create_trial

pytestmark = pytest.mark.slow  # torchrun with two training processes

SCRIPT = """
import sys
import numpy as np
import torch, torch.distributed as dist, torch.nn as nn
from torch.distributed.fsdp import FullyShardedDataParallel, fully_shard
import sagemaker_debugger_ext.pytorch as smd

out, kind, workers = sys.argv[1:4]
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.fc2 = nn.Linear(6, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


from torch.distributed.tensor import DTensor
gathers = [0]
full_tensor = DTensor.full_tensor


def counted_full_tensor(self, *args, **kwargs):
    gathers[0] += 1
    return full_tensor(self, *args, **kwargs)


DTensor.full_tensor = counted_full_tensor
model = Net()
if kind.startswith("fsdp2"):
    fully_shard(model.fc1)  # nested: fc1 its own group, fc2 in the root's
    fully_shard(model)
else:
    model = FullyShardedDataParallel(model, device_id=torch.device("cpu"))


def gathered_params():
    if kind.startswith("fsdp2"):
        return {n: p.full_tensor().detach().numpy().copy() for n, p in model.named_parameters()}
    with FullyShardedDataParallel.summon_full_params(model, writeback=False):
        return {n: p.detach().clone().numpy() for n, p in model.named_parameters()}


reductions = None
if kind == "fsdp2-reduced":  # only reductions: each rank reduces its shard, no parameter is gathered
    reductions = smd.ReductionConfig(reductions=["min", "max", "mean", "std", "variance", "sum", "prod"],
                                     norms=["l1", "l2"], abs_reductions=["min", "mean"], save_shape=True)
hook = smd.Hook(out_dir=out, include_workers=workers, save_config=smd.SaveConfig(save_interval=1),
                include_collections=["weights", "biases", "gradients", "losses"], reduction_config=reductions)
hook.register_module(model)
loss_fn = nn.MSELoss()
hook.register_loss(loss_fn)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
g = torch.Generator().manual_seed(rank)
expected = {}
for step in range(3):
    for name, value in gathered_params().items():  # what the hook saves at the step's start
        expected[f"param/{step}/{name}"] = value
    opt.zero_grad()
    loss_fn(model(torch.randn(8, 4, generator=g)), torch.randn(8, 1, generator=g)).backward()
    if kind.startswith("fsdp2"):  # the reduced (averaged) gradient, gathered
        for name, p in model.named_parameters():
            expected[f"grad/{step}/{name}"] = p.grad.full_tensor().numpy().copy()
    opt.step()
hook.close()
if rank == 0:
    np.savez(out + "/expected.npz", gathers=np.array(gathers[0]), **expected)
dist.destroy_process_group()
"""

NAMES = ["Net_fc1.bias", "Net_fc1.weight", "Net_fc2.bias", "Net_fc2.weight"]


def _run(tmp_path: Path, kind: str, workers: str) -> tuple[object, dict[str, np.ndarray]]:
    script = tmp_path / "train_fsdp.py"
    script.write_text(SCRIPT)
    out = tmp_path / "out"
    torchrun(script, str(out), kind, workers)
    with np.load(out / "expected.npz") as data:
        expected = {k: data[k] for k in data.files}
    return create_trial(str(out)), expected


def test_fsdp2_one_trial_both_workers_unsharded_names_gathered_values(tmp_path: Path) -> None:
    """fully_shard, include_workers=all: both workers, unsharded names, each the full gathered parameter."""
    trial, expected = _run(tmp_path, "fsdp2", "all")
    assert trial.workers() == ["worker_0", "worker_1"]
    assert int(expected["gathers"]) == 3 * 8 + 3 * 4  # the script's own, and the hook's 4 parameters a step
    assert trial.tensor_names() == ["MSELoss_output_0", *NAMES, *(f"gradient/{n}" for n in NAMES)]
    for step in range(3):
        for name in NAMES:
            full = expected[f"param/{step}/{name[4:]}"]
            for worker in ("worker_0", "worker_1"):
                np.testing.assert_array_equal(trial.tensor(name).value(step, worker=worker), full)
            # each worker's saved gradient is its own, unsharded; FSDP averages them
            grads = [trial.tensor(f"gradient/{name}").value(step, worker=w) for w in ("worker_0", "worker_1")]
            assert grads[0].shape == full.shape and not np.allclose(grads[0], grads[1])
            np.testing.assert_allclose(
                (grads[0] + grads[1]) / 2, expected[f"grad/{step}/{name[4:]}"], rtol=1e-5, atol=1e-7
            )


def test_fsdp2_chief_only_gathers_without_a_hang(tmp_path: Path) -> None:
    """include_workers=one: rank 1 takes part in every gather but writes nothing."""
    trial, expected = _run(tmp_path, "fsdp2", "one")
    assert trial.workers() == ["worker_0"]
    np.testing.assert_array_equal(trial.tensor("Net_fc1.weight").value(2), expected["param/2/fc1.weight"])


def test_fsdp1_parameters_gathered_under_unwrapped_names(tmp_path: Path) -> None:
    """FullyShardedDataParallel: names without the wrapper, values from summon_full_params (no gradients: documented)."""
    trial, expected = _run(tmp_path, "fsdp1", "all")
    assert trial.workers() == ["worker_0", "worker_1"]
    assert trial.tensor_names() == ["MSELoss_output_0", *NAMES]
    for step in range(3):
        for name in NAMES:
            for worker in ("worker_0", "worker_1"):
                np.testing.assert_array_equal(
                    trial.tensor(name).value(step, worker=worker), expected[f"param/{step}/{name[4:]}"]
                )


def test_fsdp2_reductions_only_from_shards_equal_the_gathered_tensors(tmp_path: Path) -> None:
    """Reductions-only saving: the shards' reductions combine into those of the whole parameter
    (rank 1 holds an empty shard of fc2); no raw parameter is written."""
    trial, expected = _run(tmp_path, "fsdp2-reduced", "all")
    assert trial.workers() == ["worker_0", "worker_1"]
    assert int(expected["gathers"]) == 3 * 8  # the script's own 4 parameters + 4 gradients a step: none by the hook
    funcs = {"min": np.min, "max": np.max, "mean": np.mean, "std": np.std, "variance": np.var, "sum": np.sum,
             "prod": np.prod, "l1": lambda a: np.abs(a).sum(), "l2": lambda a: np.sqrt((a * a).sum())}  # fmt: skip
    for step in range(3):
        for name in NAMES:
            full = expected[f"param/{step}/{name[4:]}"].astype(np.float64)
            tensor = trial.tensor(name)
            for worker in ("worker_0", "worker_1"):
                assert tensor.shape(step, worker=worker) == full.shape
                for op, func in funcs.items():
                    got = tensor.reduction_value(step, op, worker=worker)
                    np.testing.assert_allclose(got, func(full), rtol=1e-5, atol=1e-6, err_msg=f"{name} {op} @{step}")
                for op in ("min", "mean"):
                    got = tensor.reduction_value(step, op, worker=worker, abs=True)
                    np.testing.assert_allclose(got, funcs[op](np.abs(full)), rtol=1e-5, atol=1e-6)
            with pytest.raises(Exception, match="(?i)reduction|raw|not"):
                tensor.value(step, worker="worker_0")


LOCAL_JOB_SCRIPT = """
import argparse
import numpy as np
import torch, torch.distributed as dist, torch.nn as nn
from torch.distributed.fsdp import fully_shard
import sagemaker_debugger_ext.pytorch as smd

parser = argparse.ArgumentParser()
parser.add_argument("--expected", required=True)
args = parser.parse_args()
dist.init_process_group("gloo")  # env://: RANK, WORLD_SIZE, MASTER_ADDR/PORT from the platform
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 1))
fully_shard(model)
hook = smd.Hook.create_from_json_file()
hook.register_module(model)
loss_fn = nn.MSELoss()
hook.register_loss(loss_fn)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
g = torch.Generator().manual_seed(dist.get_rank())
expected = {}
for step in range(4):
    for name, p in model.named_parameters():
        expected[f"{step}/{name}"] = p.full_tensor().detach().numpy().copy()
    opt.zero_grad()
    loss_fn(model(torch.randn(8, 4, generator=g)), torch.randn(8, 1, generator=g)).backward()
    opt.step()
hook.close()
if dist.get_rank() == 0:
    np.savez(args.expected, **expected)
dist.destroy_process_group()
"""


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_local_mode_instance_count_2_fsdp_with_a_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """instance_count=2 local job with fully_shard: both workers, unsharded names, gathered values;
    a built-in rule evaluates the logical tensors."""
    from sagemaker.debugger import CollectionConfig, DebuggerHookConfig, Rule, rule_configs
    from sagemaker.pytorch import PyTorch

    from sagemaker_debugger_ext.local import LocalSession

    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train_fsdp.py").write_text(LOCAL_JOB_SCRIPT)
    out = (tmp_path / "out").as_uri()
    est = PyTorch(
        entry_point="train_fsdp.py", source_dir=str(tmp_path / "src"), role="arn:aws:iam::123456789012:role/local",
        framework_version="2.1", py_version="py310", instance_count=2, instance_type="local", output_path=out,
        sagemaker_session=LocalSession(settings={"StartMonitor": False}),
        hyperparameters={"expected": str(tmp_path / "expected.npz")},
        debugger_hook_config=DebuggerHookConfig(
            s3_output_path=out, hook_parameters={"include_workers": "all", "save_interval": "1"},
            collection_configs=[CollectionConfig("weights"), CollectionConfig("gradients"), CollectionConfig("losses")],
        ),
        rules=[Rule.sagemaker(rule_configs.exploding_tensor())],
    )  # fmt: skip
    est.fit(job_name="fsdp-two-hosts", logs="None", wait=True)
    assert est.latest_training_job.describe()["TrainingJobStatus"] == "Completed"
    trial = create_trial(est.latest_job_debugger_artifacts_path())
    assert trial.workers() == ["worker_0", "worker_1"]
    assert [n for n in trial.tensor_names() if "weight" in n] == ["Sequential_0.weight", "Sequential_2.weight",
                                                                  "gradient/Sequential_0.weight", "gradient/Sequential_2.weight"]  # fmt: skip
    with np.load(tmp_path / "expected.npz") as expected:
        for step in range(4):
            for worker in ("worker_0", "worker_1"):
                np.testing.assert_array_equal(
                    trial.tensor("Sequential_0.weight").value(step, worker=worker), expected[f"{step}/0.weight"]
                )
    summary = est.latest_training_job.rule_job_summary()
    assert [(s["RuleConfigurationName"], s["RuleEvaluationStatus"]) for s in summary] == [
        ("ExplodingTensor", "NoIssuesFound")
    ]
    assert "evaluated 4 steps" in summary[0]["StatusDetails"], summary
