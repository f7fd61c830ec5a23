"""A tiny PyTorch regressor whose input turns NaN at ``--nan-step`` (default 30); hook from the job's config.

``--fail-at-step N`` raises at step N (a job that fails after saving steps).
"""

from __future__ import annotations

import argparse
import os
import time

import torch
from torch import nn

import sagemaker_debugger_ext.pytorch as smd

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=3000)
parser.add_argument("--nan-step", type=int, default=30)
parser.add_argument("--step-seconds", type=float, default=0.05)
parser.add_argument("--fail-at-step", type=int, default=-1)
args, _ = parser.parse_known_args()

torch.manual_seed(0)
features = torch.randn(256, 4)
target = features @ torch.randn(4, 1)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
loss_fn = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
hook = smd.Hook.create_from_json_file()
hook.register_module(model)
hook.register_loss(loss_fn)
hook.set_mode(smd.modes.TRAIN)
for step in range(args.steps):
    if step == args.fail_at_step:
        raise RuntimeError(f"the script failed on purpose at step {step}")
    batch = features[(step * 16) % 256 : (step * 16) % 256 + 16]
    if step >= args.nan_step:
        batch = batch * float("nan")
    optimizer.zero_grad()
    loss = loss_fn(model(batch), target[: len(batch)])
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4g}", flush=True)
    time.sleep(args.step_seconds)
torch.save(model.state_dict(), os.path.join(os.environ.get("SM_MODEL_DIR", "."), "model.pt"))
