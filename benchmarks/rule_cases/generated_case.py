"""One healthy training run drawn by ``benchmarks/bench_rules_healthy.py`` (CPU, seconds).

Run as ``python generated_case.py --spec '<json>'``; the hook is configured from
``SMDEBUG_CONFIG_FILE_PATH``. The spec (see ``draw_spec`` in the benchmark) fixes the family
(``mlp``, ``cnn``, ``gru``, ``mlp_reg`` in PyTorch, ``keras_mlp``, ``xgb``), width, depth,
optimizer, learning rate (within the healthy range of the optimizer), batch size, dataset
shape, noise level and minimum epochs. Every run is healthy by construction: a learnable task,
fresh training samples every epoch (no memorisation), normalised inputs, standard
initialisation, an evaluation pass over a fixed held-out set after every epoch.

Training budget: a run trains its spec's ``epochs`` and then goes on until it has converged
(:func:`converged`: the last ``CONVERGED_WINDOW`` evaluations improved the best evaluation
loss by less than ``CONVERGED_BOUND``, 5 %), up to ``MAX_EPOCHS`` (XGBoost: rounds in tens, the
same window and bound over rounds of ten, up to ``MAX_ROUNDS``). The report says whether it
converged, how long it trained, and each ReLU layer's fraction of units never active on any
held-out sample after training (the benchmark's health check reads them; the rules never do).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from typing import Any

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

Draw = Callable[[int], tuple[np.ndarray, np.ndarray]]
CONVERGED_WINDOW = 2  # evaluations (XGBoost: rounds of ten)
CONVERGED_BOUND = 0.05  # relative improvement of the best evaluation loss over the window
MAX_EPOCHS = 30
MAX_ROUNDS = 400


def converged(losses: list[float], window: int = CONVERGED_WINDOW, bound: float = CONVERGED_BOUND) -> bool:
    """Whether the last ``window`` evaluation losses improved the best before them by less than ``bound``.

    Best-so-far, not the last value: a noisy evaluation above the best is no improvement, and a
    single lucky one below it is (so noise delays the verdict, never hastens it).
    """
    if len(losses) <= window:
        return False
    before = min(losses[:-window])
    return min(losses[-window:]) >= (1.0 - bound) * before


def task(spec: dict[str, Any], rng: np.random.Generator) -> Draw:
    """A sampler ``draw(n) -> (x, y)`` of the spec's learnable task, fresh samples per call."""
    fam, d, k, noise = spec["family"], spec["features"], spec["classes"], spec["noise"]
    if fam in ("mlp", "keras_mlp"):
        centers = rng.standard_normal((k, d)) * spec["separation"]

        def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
            y = rng.integers(0, k, n)
            return (centers[y] + noise * rng.standard_normal((n, d))).astype(np.float32), y

    elif fam == "cnn":
        side = spec["side"]
        patterns = rng.standard_normal((k, 1, side, side))

        def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
            y = rng.integers(0, k, n)
            x = spec["separation"] * patterns[y] + noise * rng.standard_normal((n, 1, side, side))
            return (x / np.sqrt(spec["separation"] ** 2 + noise**2)).astype(np.float32), y

    elif fam == "gru":
        length = spec["side"]

        def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
            tokens = rng.integers(1, 29, (n, length))
            lengths = rng.integers(length * 3 // 4, length + 1, n)
            tokens[np.arange(length)[None, :] >= lengths[:, None]] = 0
            score = ((tokens > 0) & (tokens < 15)).sum(1) - (tokens >= 15).sum(1) + rng.uniform(-0.5, 0.5, n)
            flip = rng.random(n) < noise / 10  # label noise
            return tokens.astype(np.int64), ((score > 0) ^ flip).astype(np.int64)

    else:  # mlp_reg
        w = rng.standard_normal(d)

        def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
            x = rng.standard_normal((n, d)).astype(np.float32)
            y = np.tanh(x @ w / np.sqrt(d)) * 2 + 0.3 * noise * rng.standard_normal(n)
            return x, y.astype(np.float32)[:, None]

    return draw


def torch_model(spec: dict[str, Any]) -> Any:
    from torch import nn

    fam, width, depth, d, k = spec["family"], spec["width"], spec["depth"], spec["features"], spec["classes"]

    class GeneratedMLP(nn.Module):
        def __init__(self, n_out: int, batchnorm: bool) -> None:
            super().__init__()
            self.blocks = nn.ModuleList()
            n_in = d
            for _ in range(depth):
                layers = [nn.Linear(n_in, width)] + ([nn.BatchNorm1d(width)] if batchnorm else []) + [nn.ReLU()]
                self.blocks.append(nn.Sequential(*layers))
                n_in = width
            self.out = nn.Linear(n_in, n_out)

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return self.out(x)

    class GeneratedCNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            c = max(4, width // 8)
            self.conv1, self.relu1, self.pool = nn.Conv2d(1, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)
            self.conv2, self.relu2 = nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU()
            self.out = nn.Linear(2 * c * (spec["side"] // 2) ** 2, k)

        def forward(self, x):
            return self.out(self.relu2(self.conv2(self.pool(self.relu1(self.conv1(x))))).flatten(1))

    class GeneratedGRU(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embedding0 = nn.Embedding(30, 16, padding_idx=0)
            self.gru = nn.GRU(16, width, num_layers=min(depth, 2), batch_first=True)
            self.out = nn.Linear(width, 2)

        def forward(self, tokens):
            _, h = self.gru(self.embedding0(tokens))
            return self.out(h[-1])

    if fam == "mlp":
        model: nn.Module = GeneratedMLP(k, False)
    elif fam == "mlp_reg":
        model = GeneratedMLP(1, spec["batchnorm"])
    else:
        model = GeneratedCNN() if fam == "cnn" else GeneratedGRU()
    for m in model.modules():  # He initialisation for the ReLU layers (PyTorch's default shrinks each layer's variance)
        if isinstance(m, (nn.Linear, nn.Conv2d)) and m is not getattr(model, "out", None):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            nn.init.zeros_(m.bias)
    return model


def train_torch(spec: dict[str, Any]) -> None:
    import torch
    from torch import nn

    import sagemaker_debugger_ext.pytorch as smd

    rng = np.random.default_rng(spec["seed"])
    torch.manual_seed(spec["seed"])
    torch.set_num_threads(1)
    draw = task(spec, rng)
    x_ev, y_ev = draw(spec["eval_batches"] * spec["batch"])
    model = torch_model(spec)
    eval_losses: list[float] = []
    classifier = spec["family"] != "mlp_reg"
    loss_fn = nn.CrossEntropyLoss() if classifier else nn.MSELoss()
    if spec["optimizer"] == "sgd":
        opt: Any = torch.optim.SGD(model.parameters(), lr=spec["lr"], momentum=0.9)
    else:
        cls = torch.optim.Adam if spec["optimizer"] == "adam" else torch.optim.AdamW
        opt = cls(model.parameters(), lr=spec["lr"])
    hook = smd.Hook.create_from_json_file()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    for epoch in range(MAX_EPOCHS):
        hook.set_mode(smd.modes.TRAIN)
        model.train()
        for _ in range(spec["train_batches"]):
            xb, yb = draw(spec["batch"])
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
            total = 0.0
            for b in range(spec["eval_batches"]):
                sl = slice(b * spec["batch"], (b + 1) * spec["batch"])
                x, y = torch.from_numpy(x_ev[sl]), torch.from_numpy(y_ev[sl])
                out = model(x)
                total += float(loss_fn(out, y)) / spec["eval_batches"]
                if classifier:
                    hook.save_tensor("labels", y.numpy(), "labels")
                    hook.save_tensor("predictions", out.argmax(dim=1).numpy(), "predictions")
            eval_losses.append(total)
        if epoch + 1 >= spec["epochs"] and converged(eval_losses):
            break
    hook.close()
    report(spec, eval_losses, y_ev, classifier, _torch_dead(model, x_ev))


def _torch_dead(model: Any, x_ev: np.ndarray) -> dict[str, float]:
    """Per ReLU module: the fraction of its units (elements per sample) never > 0 on the held-out set."""
    import torch
    from torch import nn

    seen: dict[str, list[np.ndarray]] = {}
    handles = [
        m.register_forward_hook(lambda _m, _i, out, name=name: seen.setdefault(name, []).append(out.numpy()))
        for name, m in model.named_modules()
        if isinstance(m, nn.ReLU)
    ]
    with torch.no_grad():
        model.eval()
        model(torch.from_numpy(x_ev))
    for h in handles:
        h.remove()
    return {name: dead_fraction(np.concatenate(outs)) for name, outs in seen.items()}


def dead_fraction(out: np.ndarray) -> float:
    """Fraction of the units of a ReLU output (samples on axis 0) that are 0 for every sample."""
    active = out.reshape(out.shape[0], -1) > 0
    return float(np.mean(~active.any(axis=0)))


def report(
    spec: dict[str, Any],
    eval_losses: list[float],
    y_ev: np.ndarray,
    classifier: bool,
    dead: dict[str, float] | None = None,
    window: int = CONVERGED_WINDOW,
) -> None:
    """Write the run's evaluation losses, the loss of a model that learned nothing, whether it
    converged and its dead ReLU layers (``--report``)."""
    if classifier:
        p = np.bincount(y_ev.astype(np.int64).ravel()) / y_ev.size
        baseline = float(-(p[p > 0] * np.log(p[p > 0])).sum())  # predicting the label frequencies
    else:
        baseline = float(np.var(y_ev))  # predicting the mean
    with open(spec["report"], "w") as f:
        json.dump(
            {"eval_losses": eval_losses, "baseline": baseline, "converged": converged(eval_losses, window),
             "evaluations": len(eval_losses), "dead": dead or {}},
            f,
        )  # fmt: skip


def train_keras(spec: dict[str, Any]) -> None:
    import keras

    import sagemaker_debugger_ext.tensorflow as smd

    keras.utils.set_random_seed(spec["seed"])
    rng = np.random.default_rng(spec["seed"])
    draw = task(spec, rng)
    x_ev, y_ev = draw(spec["eval_batches"] * spec["batch"])
    layers: list[Any] = [keras.Input((spec["features"],))]
    for i in range(spec["depth"]):
        layers.append(keras.layers.Dense(spec["width"], activation="relu", name=f"fc{i + 1}"))
    layers.append(keras.layers.Dense(spec["classes"], name="out"))
    model = keras.Sequential(layers, name="GeneratedKeras")
    opt = {"sgd": keras.optimizers.SGD(spec["lr"], momentum=0.9), "adam": keras.optimizers.Adam(spec["lr"])}.get(
        spec["optimizer"], keras.optimizers.AdamW(spec["lr"])
    )
    model.compile(optimizer=opt, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    hook = smd.KerasHook.create_from_json_file()
    eval_losses = []
    for epoch in range(MAX_EPOCHS):  # fresh training samples every epoch, validated after each
        x, y = draw(spec["train_batches"] * spec["batch"])
        hist = model.fit(x, y, batch_size=spec["batch"], epochs=1, verbose=0, validation_data=(x_ev, y_ev),
                         callbacks=[hook])  # fmt: skip
        eval_losses.append(float(hist.history["val_loss"][-1]))
        if epoch + 1 >= spec["epochs"] and converged(eval_losses):
            break
    hook.close()
    relus = [layer for layer in model.layers if layer.name.startswith("fc")]
    outs = keras.Model(model.inputs, [layer.output for layer in relus]).predict(x_ev, verbose=0)
    outs = outs if isinstance(outs, list) else [outs]
    report(
        spec,
        eval_losses,
        y_ev,
        True,
        {layer.name: dead_fraction(np.asarray(o)) for layer, o in zip(relus, outs, strict=True)},
    )


def train_xgb(spec: dict[str, Any]) -> None:
    import xgboost as xgb

    import sagemaker_debugger_ext.xgboost as smd

    rng = np.random.default_rng(spec["seed"])
    n, d = 4000, spec["features"]
    x = rng.standard_normal((n + 1000, d))
    weights = rng.uniform(0.5, 1.5, d)  # every feature carries signal
    signal = 2 * (np.sin(x) * weights).sum(axis=1) / np.sqrt(d) + 0.3 * x[:, 0] * x[:, 1]
    y = (signal + 0.5 * spec["noise"] * rng.standard_normal(n + 1000) > 0).astype(np.float64)
    dtrain, dval = xgb.DMatrix(x[:n], label=y[:n]), xgb.DMatrix(x[n:], label=y[n:])
    params = {"objective": "binary:logistic", "max_depth": spec["depth"] + 3, "eta": spec["lr"],
              "subsample": 0.8, "min_child_weight": 5, "seed": spec["seed"], "nthread": 1}  # fmt: skip
    hook = smd.Hook.create_from_json_file()
    hook.validation_data = dval
    hook.hyperparameters = params
    evals: dict[str, Any] = {}

    class UntilConverged(xgb.callback.TrainingCallback):  # the same criterion over rounds of ten
        def after_iteration(self, model: Any, epoch: int, evals_log: Any) -> bool:
            done = epoch + 1 >= spec["epochs"] * 10 and (epoch + 1) % 10 == 0
            return done and converged(evals_log["validation"]["logloss"], 10 * CONVERGED_WINDOW)

    xgb.train(params, dtrain, num_boost_round=MAX_ROUNDS, evals=[(dtrain, "train"), (dval, "validation")],
              callbacks=[hook, UntilConverged()], verbose_eval=False, evals_result=evals)  # fmt: skip
    hook.close()
    report(spec, [float(v) for v in evals["validation"]["logloss"]], y[n:], True, window=10 * CONVERGED_WINDOW)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--spec", required=True, help="the run's spec, JSON")
    spec = json.loads(p.parse_known_args()[0].spec)
    {"xgb": train_xgb, "keras_mlp": train_keras}.get(spec["family"], train_torch)(spec)


if __name__ == "__main__":
    main()
