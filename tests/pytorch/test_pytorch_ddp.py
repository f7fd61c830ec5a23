"""DDP: ranks as workers, names and values as smdebug 1.0.34 writes them (real torchrun, gloo)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from launch_distributed import torchrun

from sagemaker_debugger_ext.trials import create_trial

pytestmark = pytest.mark.slow  # torchrun with two training processes

IMPORTS = {
    "smdebug": "import smdebug.pytorch as smd\n",
    "ours": "import sagemaker_debugger_ext.pytorch as smd\n",
}

DDP_SCRIPT = """
import sys
import torch, torch.distributed as dist, torch.nn as nn

dist.init_process_group("gloo")
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.fc2 = nn.Linear(3, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


model = nn.parallel.DistributedDataParallel(Net())
hook = smd.Hook(out_dir=sys.argv[1], include_workers="all", save_config=smd.SaveConfig(save_interval=1),
                include_collections=["weights", "biases", "gradients", "losses"])
hook.register_module(model)
loss_fn = nn.MSELoss()
hook.register_loss(loss_fn)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
g = torch.Generator().manual_seed(dist.get_rank())  # each rank its own batches: local gradients differ
for step in range(3):
    x, y = torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)
    opt.zero_grad()
    loss_fn(model(x), y).backward()
    opt.step()
hook._cleanup()
dist.destroy_process_group()
"""


def _values(run: Path) -> dict[tuple[str, str, int], np.ndarray]:
    trial = create_trial(str(run))
    return {(name, worker, step): trial.tensor(name).value(step, worker=worker)
            for name in trial.tensor_names() for step in trial.tensor(name).steps()
            for worker in trial.tensor(name).workers(step)}  # fmt: skip


def test_torchrun_ddp_same_workers_names_values_as_smdebug(tmp_path: Path, smdebug_torch_python: Path) -> None:
    """torchrun --nproc_per_node=2 with DDP on gloo: the same workers, names, steps and values as smdebug."""
    runs = {}
    for which, python in (("smdebug", smdebug_torch_python), ("ours", None)):
        script = tmp_path / f"ddp_{which}.py"
        script.write_text(IMPORTS[which] + DDP_SCRIPT)
        torchrun(script, str(tmp_path / which), python=python)
        runs[which] = _values(tmp_path / which)
    ours, theirs = runs["ours"], runs["smdebug"]
    assert sorted(ours) == sorted(theirs)
    for key, value in theirs.items():
        np.testing.assert_allclose(ours[key], value, rtol=1e-6, atol=1e-7, err_msg=str(key))
    trial = create_trial(str(tmp_path / "ours"))
    assert trial.workers() == ["worker_0", "worker_1"]
    # smdebug's names: the registered wrapper's class, then DDP's "module." path
    assert "gradient/DistributedDataParallel_module.fc1.weight" in trial.tensor_names()
    weight, grad = (
        trial.tensor("DistributedDataParallel_module.fc1.weight"),
        trial.tensor("gradient/DistributedDataParallel_module.fc1.weight"),
    )
    # DDP keeps the replicas equal; the saved gradients are each rank's own, before the all-reduce
    np.testing.assert_array_equal(weight.value(2, worker="worker_0"), weight.value(2, worker="worker_1"))
    assert not np.allclose(grad.value(0, worker="worker_0"), grad.value(0, worker="worker_1"))
    meta = json.loads(next((tmp_path / "ours" / "collections").rglob("worker_1_collections.json")).read_text())
    assert meta["_meta"]["num_workers"] == 2


LATE_GROUP_SCRIPT = """
import os, sys
import torch, torch.distributed as dist, torch.nn as nn
import sagemaker_debugger_ext.pytorch as smd

rank = int(os.environ.pop("RANK"))  # as mp.spawn scripts: the rank is an argument, not the environment
world = int(os.environ.pop("WORLD_SIZE"))
hook = smd.Hook(out_dir=sys.argv[1], include_workers="all", save_config=smd.SaveConfig(save_interval=1))
dist.init_process_group("gloo", rank=rank, world_size=world)
model = nn.parallel.DistributedDataParallel(nn.Linear(3, 1))
hook.register_module(model)
loss_fn = nn.MSELoss()
hook.register_loss(loss_fn)
for step in range(2):
    loss_fn(model(torch.ones(2, 3)), torch.full((2, 1), float(rank))).backward()
hook.close()
dist.destroy_process_group()
"""


def test_process_group_made_after_the_hook_names_each_rank(tmp_path: Path) -> None:
    """A hook built before init_process_group(rank=...) (no $RANK) still names worker_0 and worker_1."""
    script = tmp_path / "late_group.py"
    script.write_text(LATE_GROUP_SCRIPT)
    torchrun(script, str(tmp_path / "out"))
    trial = create_trial(str(tmp_path / "out"))
    assert trial.workers() == ["worker_0", "worker_1"]
    loss = trial.tensor("MSELoss_output_0")
    assert float(loss.value(1, worker="worker_0")) != float(loss.value(1, worker="worker_1"))


LOCAL_JOB_SCRIPT = """
import torch, torch.distributed as dist, torch.nn as nn
import sagemaker_debugger_ext.pytorch as smd

dist.init_process_group("gloo")  # env://: RANK, WORLD_SIZE, MASTER_ADDR/PORT from the platform
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1)))
hook = smd.Hook.create_from_json_file()
hook.register_module(model)
loss_fn = nn.MSELoss()
hook.register_loss(loss_fn)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
g = torch.Generator().manual_seed(dist.get_rank())
for step in range(3):
    opt.zero_grad()
    loss_fn(model(torch.randn(8, 4, generator=g)), torch.randn(8, 1, generator=g)).backward()
    opt.step()
hook.close()
dist.destroy_process_group()
"""


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_local_mode_instance_count_2_ddp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """sagemaker.pytorch.PyTorch, instance_count=2, local: a DDP job on gloo; one trial with both workers."""
    from sagemaker.debugger import CollectionConfig, DebuggerHookConfig
    from sagemaker.pytorch import PyTorch

    from sagemaker_debugger_ext.local import LocalSession

    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train_ddp.py").write_text(LOCAL_JOB_SCRIPT)
    out = (tmp_path / "out").as_uri()
    est = PyTorch(
        entry_point="train_ddp.py", source_dir=str(tmp_path / "src"), role="arn:aws:iam::123456789012:role/local",
        framework_version="2.1", py_version="py310", instance_count=2, instance_type="local", output_path=out,
        sagemaker_session=LocalSession(settings={"StartMonitor": False}),
        debugger_hook_config=DebuggerHookConfig(
            s3_output_path=out, hook_parameters={"include_workers": "all", "save_interval": "1"},
            collection_configs=[CollectionConfig("weights"), CollectionConfig("gradients"), CollectionConfig("losses")],
        ),
    )  # fmt: skip
    est.fit(job_name="ddp-two-hosts", logs="None", wait=True)
    assert est.latest_training_job.describe()["TrainingJobStatus"] == "Completed"
    trial = create_trial(est.latest_job_debugger_artifacts_path())
    assert trial.workers() == ["worker_0", "worker_1"]
    weight = trial.tensor("DistributedDataParallel_module.0.weight")
    assert weight.steps() == [0, 1, 2]
    np.testing.assert_array_equal(weight.value(2, worker="worker_0"), weight.value(2, worker="worker_1"))
    grad = trial.tensor("gradient/DistributedDataParallel_module.0.weight")
    assert not np.allclose(grad.value(1, worker="worker_0"), grad.value(1, worker="worker_1"))
