"""Healthy training runs for the rules' false-alarm benchmark (CPU, numpy data, seeded).

Run as a SageMaker-style entry point (``--arch NAME --seed N``); the hook is configured from
``SMDEBUG_CONFIG_FILE_PATH``. Every run is healthy by construction: learnable data
(fresh training samples every epoch, so no memorisation), normalised inputs, standard
initialisation and optimiser, losses falling every epoch, an evaluation pass (EVAL mode,
a fixed held-out set) after every training epoch.

Architectures: ``mlp`` (3-class classifier), ``cnn`` (3-class 12x12 images), ``gru`` and
``transformer`` (2-class token sequences with padding), ``mlp_bn`` (regressor with
BatchNorm after biased Linear layers), ``xgb`` (binary XGBoost classifier).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

ARCHS = ("mlp", "cnn", "gru", "transformer", "mlp_bn", "xgb")


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--arch", choices=ARCHS, required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--train-batches", type=int, default=20)
    p.add_argument("--eval-batches", type=int, default=10)
    p.add_argument("--batch", type=int, default=64)
    args, _ = p.parse_known_args()
    return args


def _task(arch: str, rng: np.random.Generator) -> Callable[[int], tuple[np.ndarray, np.ndarray]]:
    """A sampler of the learnable task of ``arch``: ``draw(n) -> (x, y)``, fresh samples per call."""
    if arch == "mlp":
        centers = rng.standard_normal((3, 20)) * 0.5

        def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
            y = rng.integers(0, 3, n)
            return (centers[y] + rng.standard_normal((n, 20))).astype(np.float32), y

    elif arch == "cnn":
        patterns = rng.standard_normal((3, 1, 12, 12))

        def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
            y = rng.integers(0, 3, n)
            x = 0.25 * patterns[y] + rng.standard_normal((n, 1, 12, 12))
            return (x / np.sqrt(1 + 0.0625)).astype(np.float32), y

    elif arch in ("gru", "transformer"):

        def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
            tokens = rng.integers(1, 30, (n, 16))
            lengths = rng.integers(12, 17, n)  # up to 25 % padding at the tail
            tokens[np.arange(16)[None, :] >= lengths[:, None]] = 0
            small, large = ((tokens > 0) & (tokens < 10)).sum(1), (tokens >= 20).sum(1)
            return tokens.astype(np.int64), (small > large).astype(np.int64)

    else:  # mlp_bn: regression
        w = rng.standard_normal(10)

        def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
            x = rng.standard_normal((n, 10)).astype(np.float32)
            y = (np.tanh(x @ w / 3) * 2 + 0.1 * rng.standard_normal(n)).astype(np.float32)
            return x, y[:, None]

    return draw


def _torch_model(arch: str):
    from torch import nn

    class MLPClassifier(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1, self.relu1 = nn.Linear(20, 64), nn.ReLU()
            self.fc2, self.relu2 = nn.Linear(64, 64), nn.ReLU()
            self.out = nn.Linear(64, 3)

        def forward(self, x):
            return self.out(self.relu2(self.fc2(self.relu1(self.fc1(x)))))

    class SmallCNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1, self.relu1 = nn.Conv2d(1, 8, 3, padding=1), nn.ReLU()
            self.pool = nn.MaxPool2d(2)
            self.conv2, self.relu2 = nn.Conv2d(8, 16, 3, padding=1), nn.ReLU()
            self.out = nn.Linear(16 * 6 * 6, 3)

        def forward(self, x):
            h = self.relu2(self.conv2(self.pool(self.relu1(self.conv1(x)))))
            return self.out(h.flatten(1))

    class GRUClassifier(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embedding0 = nn.Embedding(30, 16, padding_idx=0)
            self.gru = nn.GRU(16, 32, batch_first=True)
            self.out = nn.Linear(32, 2)

        def forward(self, tokens):
            _, h = self.gru(self.embedding0(tokens))
            return self.out(h[-1])

    class TinyTransformer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embedding0 = nn.Embedding(30, 32, padding_idx=0)
            self.encoder = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0, batch_first=True)
            self.out = nn.Linear(32, 2)

        def forward(self, tokens):
            return self.out(self.encoder(self.embedding0(tokens)).mean(dim=1))

    class BNRegressor(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1, self.bn1, self.relu1 = nn.Linear(10, 64), nn.BatchNorm1d(64), nn.ReLU()  # bias=True before BN
            self.fc2, self.bn2, self.relu2 = nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU()
            self.out = nn.Linear(64, 1)

        def forward(self, x):
            return self.out(self.relu2(self.bn2(self.fc2(self.relu1(self.bn1(self.fc1(x)))))))

    return {
        "mlp": MLPClassifier,
        "cnn": SmallCNN,
        "gru": GRUClassifier,
        "transformer": TinyTransformer,
        "mlp_bn": BNRegressor,
    }[arch]()


def _train_torch(args: argparse.Namespace) -> None:
    import torch
    from torch import nn

    import sagemaker_debugger_ext.pytorch as smd

    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    draw = _task(args.arch, rng)
    x_ev, y_ev = draw(args.eval_batches * args.batch)  # fixed held-out set; training data is fresh every epoch
    model = _torch_model(args.arch)
    classifier = args.arch != "mlp_bn"
    loss_fn = nn.CrossEntropyLoss() if classifier else nn.MSELoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2 if args.arch in ("gru", "transformer") else 3e-3)
    hook = smd.Hook.create_from_json_file()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    for _ in range(args.epochs):
        hook.set_mode(smd.modes.TRAIN)
        model.train()
        for _ in range(args.train_batches):
            xb, yb = draw(args.batch)
            x, y = torch.from_numpy(xb), torch.from_numpy(yb)
            opt.zero_grad()
            out = model(x)
            loss = loss_fn(out, y)
            if classifier:
                hook.save_tensor("labels", y.numpy(), "labels")
                hook.save_tensor("predictions", out.argmax(dim=1).detach().numpy(), "predictions")
            loss.backward()
            opt.step()
        hook.set_mode(smd.modes.EVAL)
        model.eval()
        with torch.no_grad():
            for b in range(args.eval_batches):
                sl = slice(b * args.batch, (b + 1) * args.batch)
                x, y = torch.from_numpy(x_ev[sl]), torch.from_numpy(y_ev[sl])
                out = model(x)
                loss_fn(out, y)
                if classifier:
                    hook.save_tensor("labels", y.numpy(), "labels")
                    hook.save_tensor("predictions", out.argmax(dim=1).numpy(), "predictions")
    hook.close()


def _train_xgb(args: argparse.Namespace) -> None:
    import xgboost as xgb

    import sagemaker_debugger_ext.xgboost as smd

    rng = np.random.default_rng(args.seed)
    x = rng.standard_normal((5000, 10))
    y = (np.sin(x[:, :5]).sum(axis=1) + 0.5 * x[:, 5] * x[:, 6] + 0.5 * rng.standard_normal(5000) > 0).astype(
        np.float64
    )
    dtrain, dval = xgb.DMatrix(x[:4000], label=y[:4000]), xgb.DMatrix(x[4000:], label=y[4000:])
    params = {
        "objective": "binary:logistic",
        "max_depth": 4,
        "eta": 0.1,
        "subsample": 0.8,
        "min_child_weight": 5,
        "seed": args.seed,
        "nthread": 1,
    }
    hook = smd.Hook.create_from_json_file()
    hook.validation_data = dval
    hook.hyperparameters = params
    xgb.train(
        params,
        dtrain,
        num_boost_round=10 * args.epochs,
        evals=[(dtrain, "train"), (dval, "validation")],
        callbacks=[hook],
        verbose_eval=False,
    )
    hook.close()


def main() -> None:
    args = _args()
    if args.arch == "xgb":
        _train_xgb(args)
    else:
        _train_torch(args)


if __name__ == "__main__":
    main()
