"""A two-host PyTorch job (no process group: each host trains on its own) whose second host goes on
for 5 more steps after a few seconds of extra work, so its last files come well after the first host's."""

import os
import time

import torch

import sagemaker_debugger_ext.pytorch as smd

torch.manual_seed(0)
x = torch.randn(64, 10)
y = (x[:, 0] > 0).long()
model = torch.nn.Sequential(torch.nn.Linear(10, 2))
loss_fn = torch.nn.CrossEntropyLoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
hook = smd.Hook.create_from_json_file()
hook.register_module(model)
hook.register_loss(loss_fn)
hook.set_mode(smd.modes.TRAIN)
last = os.environ["SM_CURRENT_HOST"] != "algo-1"
for step in range(15 if last else 10):
    if step == 10:
        end = time.monotonic() + 4.0  # workload: the second host trains on after the first has ended
        while time.monotonic() < end:
            torch.randn(64, 64) @ torch.randn(64, 64)
    opt.zero_grad()
    loss_fn(model(x), y).backward()
    opt.step()
print(f"{os.environ['SM_CURRENT_HOST']} trained", flush=True)
