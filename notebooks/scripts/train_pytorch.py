"""A tiny PyTorch training script with the Debugger hook (a few seconds on CPU).

It is written exactly like a script for smdebug on SageMaker, with only the import changed:
the hook reads the configuration that the platform writes (``SMDEBUG_CONFIG_FILE_PATH``).
Hyperparameters arrive as command-line arguments, as SageMaker passes them.
"""

import argparse

import torch

import sagemaker_debugger_ext.pytorch as smd


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--steps_per_epoch", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()

    torch.manual_seed(0)
    x = torch.randn(256, 10)
    y = (x[:, 0] + x[:, 1] > 0).long()
    model = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)

    hook = smd.Hook.create_from_json_file()
    hook.register_module(model)
    hook.register_loss(loss_fn)

    batch = len(x) // args.steps_per_epoch
    for epoch in range(args.epochs):
        hook.set_mode(smd.modes.TRAIN)
        model.train()
        for i in range(args.steps_per_epoch):
            xb, yb = x[i * batch : (i + 1) * batch], y[i * batch : (i + 1) * batch]
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
        hook.set_mode(smd.modes.EVAL)
        model.eval()
        with torch.no_grad():
            for i in range(2):
                xb, yb = x[i * batch : (i + 1) * batch], y[i * batch : (i + 1) * batch]
                loss_fn(model(xb), yb)
        print(f"epoch {epoch}: train loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
