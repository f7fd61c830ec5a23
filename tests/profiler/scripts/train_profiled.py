"""A small PyTorch job for the profiler end-to-end test: hook-recorded steps plus slow steps."""

import time

import torch

import sagemaker_debugger_ext.pytorch as smd

hook = smd.Hook.create_from_json_file()
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2))
hook.register_module(model)
loss_fn = torch.nn.CrossEntropyLoss()
hook.register_loss(loss_fn)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
hook.set_mode(smd.modes.TRAIN)
x = torch.randn(64, 32)
y = torch.randint(0, 2, (64,))
for step in range(60):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    if step % 20 == 19:  # rare slow steps: outliers
        time.sleep(0.5)
    time.sleep(0.02)
print("done", flush=True)
