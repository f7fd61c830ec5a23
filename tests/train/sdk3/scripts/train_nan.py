"""A PyTorch script for a ModelTrainer local job: its loss turns NaN at step ``--nan-step`` (default 30).

Written as for smdebug on SageMaker (only the import changed); ModelTrainer's basic script driver
passes the hyperparameters as ``--name value``.
"""

import argparse
import os
import time

import torch

import sagemaker_debugger_ext.pytorch as smd


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--nan-step", type=int, default=30)
    parser.add_argument("--step-seconds", type=float, default=0.02)
    args = parser.parse_args()
    print(f"entry script {os.environ.get('SM_ENTRY_SCRIPT')} in {os.getcwd()}", flush=True)

    torch.manual_seed(0)
    x = torch.randn(64, 8)
    y = (x[:, 0] > 0).long()
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    hook = smd.Hook.create_from_json_file()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    hook.set_mode(smd.modes.TRAIN)
    for step in range(args.steps):
        inputs = x * float("nan") if step >= args.nan_step else x
        opt.zero_grad()
        loss = loss_fn(model(inputs), y)
        loss.backward()
        opt.step()
        time.sleep(args.step_seconds)  # simulated compute: the rule has time to stop the job
    print("trained all steps", flush=True)


if __name__ == "__main__":
    main()
