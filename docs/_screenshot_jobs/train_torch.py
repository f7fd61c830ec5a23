"""Screenshot job 1 (PyTorch): a regression that converges, plateaus, then diverges.

The loss falls over orders of magnitude (log axis), stops improving (LossNotDecreasing),
and a learning-rate jump at step 40 blows the weights up to inf/NaN (ExplodingTensor,
WeightUpdateRatio). Every 10th step is an EVAL step.
"""

from __future__ import annotations

import torch
from torch import nn

import sagemaker_debugger_ext.pytorch as smd


def main() -> None:
    torch.manual_seed(0)
    features = torch.randn(512, 8)
    target = features @ torch.randn(8, 1) + 1e-3 * torch.randn(512, 1)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    loss_fn = nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    hook = smd.Hook.create_from_json_file()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    for step in range(50):
        idx = torch.randint(0, features.shape[0], (64,))
        if step % 10 == 9:
            hook.set_mode(smd.modes.EVAL)
            with torch.no_grad():
                loss_fn(model(features[idx]), target[idx])
            continue
        hook.set_mode(smd.modes.TRAIN)
        if step == 40:
            for group in optimizer.param_groups:
                group["lr"] = 1e4
        optimizer.zero_grad()
        loss = loss_fn(model(features[idx]), target[idx])
        loss.backward()
        optimizer.step()
        print(f"step {step:3d} loss {loss.item():.4g}", flush=True)


if __name__ == "__main__":
    main()
