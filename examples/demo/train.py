"""`make demo` training script: a small PyTorch regressor with a deliberately bad learning rate.

Run as a local SageMaker job (``sagemaker-debugger-ext demo``); the Debugger hook is
configured from the job's ``debughookconfig.json`` and the built-in rules watch it live.
The learning rate makes the weights blow up to inf/NaN after a few steps, so
ExplodingTensor fires and its StopTraining action stops the job.
"""

from __future__ import annotations

import argparse
import os
import time

import torch
from torch import nn

import sagemaker_debugger_ext.pytorch as smd


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=2.0)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--step-seconds", type=float, default=0.05)
    args, _ = parser.parse_known_args()

    torch.manual_seed(0)
    features = torch.randn(1024, 16)
    target = features @ torch.randn(16, 1) + 0.1 * torch.randn(1024, 1)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
    loss_fn = nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)

    hook = smd.Hook.create_from_json_file()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    hook.set_mode(smd.modes.TRAIN)

    for step in range(args.steps):
        idx = torch.randint(0, features.shape[0], (64,))
        optimizer.zero_grad()
        loss = loss_fn(model(features[idx]), target[idx])
        loss.backward()
        optimizer.step()
        print(f"step {step:4d}  loss {loss.item():.4g}", flush=True)
        time.sleep(args.step_seconds)  # stands in for real work, so rules keep up live

    torch.save(model.state_dict(), os.path.join(os.environ.get("SM_MODEL_DIR", "."), "model.pt"))


if __name__ == "__main__":
    main()
