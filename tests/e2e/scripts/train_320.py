"""A healthy 320-step PyTorch run that never calls set_mode(EVAL) (issue 15's scenario)."""

import torch

import sagemaker_debugger_ext.pytorch as smd

torch.manual_seed(0)
x = torch.randn(640, 10)
y = (x[:, 0] > 0).long()
model = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
loss_fn = torch.nn.CrossEntropyLoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
hook = smd.Hook.create_from_json_file()
hook.register_module(model)
hook.register_loss(loss_fn)
hook.set_mode(smd.modes.TRAIN)
for step in range(320):
    i = (step * 2) % 640
    opt.zero_grad()
    loss = loss_fn(model(x[i : i + 2]), y[i : i + 2])
    loss.backward()
    opt.step()
print(f"final loss {loss.item():.4f}")
