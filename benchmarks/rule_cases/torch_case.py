"""Seeded fault-injection training runs for the rules benchmark (PyTorch, CPU, numpy data).

Run as a SageMaker-style entry point (hyperparameters as ``--key value``); the hook is
configured from ``SMDEBUG_CONFIG_FILE_PATH`` as in a real job. ``--fault none`` is the
clean control of the scenario. The fault is injected before the forward pass of global
step ``--onset`` (0 = from the start).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn

import sagemaker_debugger_ext.pytorch as smd


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", default="mlp", choices=["mlp", "cls", "image", "nlp", "overfit"])
    p.add_argument("--fault", default="none")
    p.add_argument("--onset", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=24)
    p.add_argument("--stall-s", type=float, default=0.0)
    args, _ = p.parse_known_args()
    return args


class Net(nn.Module):
    """Two ReLU layers, then optionally a tanh layer (``tanh=True``)."""

    def __init__(self, n_in: int, hidden: int, n_out: int, tanh: bool = False) -> None:
        super().__init__()
        self.fc1 = nn.Linear(n_in, hidden)
        self.act1 = nn.ReLU()
        self.fc2 = nn.Linear(hidden, hidden)
        self.act2 = nn.ReLU()
        self.head = (
            nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, n_out))
            if tanh
            else nn.Linear(hidden, n_out)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.reshape(x.shape[0], -1)
        return self.head(self.act2(self.fc2(self.act1(self.fc1(x)))))


class SeqNet(nn.Module):
    def __init__(self, vocab: int = 50, dim: int = 8) -> None:
        super().__init__()
        self.embedding0 = nn.Embedding(vocab, dim, padding_idx=0)
        self.fc = nn.Linear(dim, 2)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.fc(self.embedding0(tokens).mean(dim=1))


def _he_init(model: nn.Module) -> None:
    for m in model.modules():
        if isinstance(m, nn.Linear):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            nn.init.zeros_(m.bias)


def _blobs(rng: np.random.Generator, n: int, frac1: float = 0.5, sep: float = 3.0) -> tuple[np.ndarray, np.ndarray]:
    y = (rng.random(n) < frac1).astype(np.int64)
    x = rng.standard_normal((n, 10)).astype(np.float32)
    x[:, 0] += np.where(y == 1, sep, -sep)
    return x, y


def main() -> None:
    args = _args()
    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    hook = smd.Hook.create_from_json_file()
    loss_fn = nn.CrossEntropyLoss()
    hook.register_loss(loss_fn)
    fault, onset = args.fault, args.onset

    if args.scenario == "mlp":
        model = Net(10, 32, 2, tanh=True)
        _he_init(model)
        if fault == "badinit":
            nn.init.normal_(model.fc2.weight, std=1e-3)
        w_true = rng.standard_normal(10)
        x_all = rng.standard_normal((512, 10)).astype(np.float32)
        y_all = (x_all @ w_true + 0.5 * rng.standard_normal(512) > 0).astype(np.int64)
        x_t, y_t = torch.from_numpy(x_all), torch.from_numpy(y_all)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        hook.register_module(model)
        hook.set_mode(smd.modes.TRAIN)
        for step in range(args.steps):
            x = x_t.clone()
            if step == onset:
                with torch.no_grad():
                    if fault == "dead":
                        model.fc1.bias.fill_(-1e3)
                    elif fault == "scale":
                        model.fc1.weight.mul_(1000.0)
                if fault == "nan":
                    x[0, 0] = float("nan")
                if fault == "stall":
                    time.sleep(args.stall_s)
            if fault == "perturb" and step >= onset:
                x = x + 0.5
            opt.zero_grad()
            loss = loss_fn(model(x), y_t)
            loss.backward()
            if not (fault == "freeze" and step >= onset):
                opt.step()
    elif args.scenario == "cls":
        model = Net(10, 16, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        xw, yw = _blobs(rng, 512)
        for _ in range(30):  # warm start before the hook watches: an accurate classifier
            opt.zero_grad()
            loss_fn(model(torch.from_numpy(xw)), torch.from_numpy(yw)).backward()
            opt.step()
        hook.register_module(model)
        hook.set_mode(smd.modes.TRAIN)
        frac1 = 0.05 if fault == "imbalance" else 0.5
        onset = (onset + 1) // 2  # a TRAIN and an EVAL step per loop step: loop step onset/2 is global step onset
        for step in range(args.steps):
            x, y = _blobs(rng, 256, frac1=frac1)
            labels = y.copy()
            if fault == "flip" and step >= onset:
                labels[y == 1] = 0
            xt, yt = torch.from_numpy(x), torch.from_numpy(labels)
            opt.zero_grad()
            out = model(xt)
            loss = loss_fn(out, yt)
            hook.save_tensor("labels", labels, "labels")
            hook.save_tensor("predictions", out.argmax(dim=1).detach().numpy(), "predictions")
            loss.backward()
            opt.step()
            hook.set_mode(smd.modes.EVAL)  # one evaluation batch after every training step
            xe, ye = _blobs(rng, 256, frac1=frac1)
            if fault == "flip" and step >= onset:
                ye[ye == 1] = 0
            with torch.no_grad():
                pe = model(torch.from_numpy(xe)).argmax(dim=1).numpy()
            hook.save_tensor("labels", ye, "labels")
            hook.save_tensor("predictions", pe, "predictions")
            hook.set_mode(smd.modes.TRAIN)
    elif args.scenario == "image":
        model = Net(3 * 8 * 8, 16, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        hook.register_module(model)
        hook.set_mode(smd.modes.TRAIN)
        for step in range(args.steps):
            raw = rng.uniform(0, 1, (256, 3, 8, 8)).astype(np.float32)
            img = raw if (fault == "unnormalized" and step >= onset) else (raw - 0.5) / 0.29
            y = torch.from_numpy((raw.mean(axis=(1, 2, 3)) > 0.5).astype(np.int64))
            opt.zero_grad()
            loss_fn(model(torch.from_numpy(img.astype(np.float32))), y).backward()
            opt.step()
    elif args.scenario == "nlp":
        model = SeqNet()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        hook.register_module(model)
        hook.set_mode(smd.modes.TRAIN)
        for step in range(args.steps):
            tokens = rng.integers(1, 50, (64, 20))
            pad = 0.8 if (fault == "padding" and step >= onset) else 0.2
            tokens[:, int(20 * (1 - pad)) :] = 0
            y = torch.from_numpy((tokens[:, 0] > 25).astype(np.int64))
            opt.zero_grad()
            loss_fn(model(torch.from_numpy(tokens)), y).backward()
            opt.step()
    elif args.scenario == "overfit":
        model = Net(10, 64, 2)
        opt = torch.optim.Adam(model.parameters(), lr=0.02)
        w_true = rng.standard_normal(10)

        def draw(n: int) -> tuple[torch.Tensor, torch.Tensor]:
            x = rng.standard_normal((n, 10)).astype(np.float32)
            y = (x @ w_true + rng.standard_normal(n) > 0).astype(np.int64)  # noisy labels
            return torch.from_numpy(x), torch.from_numpy(y)

        x_val, y_val = draw(1024)
        x_tiny = torch.from_numpy(rng.standard_normal((16, 10)).astype(np.float32))
        y_tiny = torch.from_numpy(
            (x_tiny.numpy() @ w_true > 0).astype(np.int64)
        )  # the fault: one small batch, repeated
        hook.register_module(model)
        step = 0
        while step < args.steps:  # one TRAIN step, then one EVAL step
            hook.set_mode(smd.modes.TRAIN)
            x, y = (x_tiny, y_tiny) if (fault == "memorize" and step >= onset) else draw(512)
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
            hook.set_mode(smd.modes.EVAL)
            with torch.no_grad():
                loss_fn(model(x_val), y_val)
            step += 2
    hook.close()


if __name__ == "__main__":
    main()
