"""Seeded fault-injection training runs for the rules benchmark: Keras 3 (TensorFlow, CPU).

The Keras twin of ``torch_case.py``: the same scenarios, data (numpy, same seed), layer
sizes, optimizers, faults and onsets, step for step. Each loop step is one ``model.fit``
of one batch (a TRAIN step) or one ``model.evaluate`` of one batch (an EVAL step), so
Keras' logged ``loss`` is that batch's loss, as in the PyTorch loop. The hook is the
``KerasHook`` from ``SMDEBUG_CONFIG_FILE_PATH``, passed in ``callbacks``.

Where the frameworks differ the fault is the closest equivalent: ``freeze`` sets the
learning rate to 0 (PyTorch skips ``opt.step()``); images are channels-last.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", default="mlp", choices=["mlp", "cls", "image", "nlp", "overfit"])
    p.add_argument("--fault", default="none")
    p.add_argument("--onset", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=24)
    p.add_argument("--stall-s", type=float, default=0.0)
    args, _ = p.parse_known_args(argv)
    return args


def _net(keras: Any, n_in: tuple[int, ...], hidden: int, n_out: int, tanh: bool = False, he: bool = False) -> Any:
    """torch_case's ``Net``: fc1-ReLU-fc2-ReLU, then (fc3-tanh-)head; names as the PyTorch modules."""
    init = {"kernel_initializer": "he_normal"} if he else {}
    layers = [keras.Input(n_in)]
    if len(n_in) > 1:
        layers.append(keras.layers.Flatten(name="flatten"))
    layers += [keras.layers.Dense(hidden, name="fc1", **init), keras.layers.ReLU(name="act1"),
               keras.layers.Dense(hidden, name="fc2", **init), keras.layers.ReLU(name="act2")]  # fmt: skip
    if tanh:
        layers += [keras.layers.Dense(hidden, name="fc3", **init), keras.layers.Activation("tanh", name="tanh")]
    layers.append(keras.layers.Dense(n_out, name="head", **init))
    return keras.Sequential(layers, name="Net")


def _blobs(rng: np.random.Generator, n: int, frac1: float = 0.5, sep: float = 3.0) -> tuple[np.ndarray, np.ndarray]:
    y = (rng.random(n) < frac1).astype(np.int64)
    x = rng.standard_normal((n, 10)).astype(np.float32)
    x[:, 0] += np.where(y == 1, sep, -sep)
    return x, y


def train(args: argparse.Namespace, hook: Any) -> None:
    """Run ``args.scenario`` with ``args.fault``, saving through ``hook`` (a KerasHook)."""
    import keras

    rng = np.random.default_rng(args.seed)
    keras.utils.set_random_seed(args.seed)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    fault, onset = args.fault, args.onset

    def fit(model: Any, x: np.ndarray, y: np.ndarray) -> None:
        model.fit(x, y, batch_size=len(x), epochs=1, shuffle=False, verbose=0, callbacks=[hook])

    def evaluate(model: Any, x: np.ndarray, y: np.ndarray) -> None:
        model.evaluate(x, y, batch_size=len(x), verbose=0, callbacks=[hook])

    if args.scenario == "mlp":
        model = _net(keras, (10,), 32, 2, tanh=True, he=True)
        opt = keras.optimizers.SGD(learning_rate=0.05)
        model.compile(optimizer=opt, loss=loss)
        if fault == "badinit":
            fc2 = model.get_layer("fc2")
            fc2.kernel.assign(rng.normal(0, 1e-3, fc2.kernel.shape).astype(np.float32))
        w_true = rng.standard_normal(10)
        x_all = rng.standard_normal((512, 10)).astype(np.float32)
        y_all = (x_all @ w_true + 0.5 * rng.standard_normal(512) > 0).astype(np.int64)
        for step in range(args.steps):
            x = x_all.copy()
            if step == onset:
                fc1 = model.get_layer("fc1")
                if fault == "dead":
                    fc1.bias.assign(np.full(fc1.bias.shape, -1e3, np.float32))
                elif fault == "scale":
                    fc1.kernel.assign(fc1.kernel.numpy() * 1000.0)
                if fault == "nan":
                    x[0, 0] = np.nan
                if fault == "stall":
                    time.sleep(args.stall_s)
                if fault == "freeze":
                    opt.learning_rate.assign(0.0)
            if fault == "perturb" and step >= onset:
                x = x + 0.5
            fit(model, x, y_all)
    elif args.scenario == "cls":
        model = _net(keras, (10,), 16, 2)
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss=loss)
        xw, yw = _blobs(rng, 512)
        model.fit(xw, yw, batch_size=512, epochs=30, shuffle=False, verbose=0)  # warm start, not watched
        frac1 = 0.05 if fault == "imbalance" else 0.5
        onset = (onset + 1) // 2  # a TRAIN and an EVAL step per loop step
        for step in range(args.steps):
            x, y = _blobs(rng, 256, frac1=frac1)
            if fault == "flip" and step >= onset:
                y[y == 1] = 0
            fit(model, x, y)
            xe, ye = _blobs(rng, 256, frac1=frac1)
            if fault == "flip" and step >= onset:
                ye[ye == 1] = 0
            evaluate(model, xe, ye)
    elif args.scenario == "image":
        model = _net(keras, (8, 8, 3), 16, 2)
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01), loss=loss)
        for step in range(args.steps):
            raw = rng.uniform(0, 1, (256, 8, 8, 3)).astype(np.float32)
            img = raw if (fault == "unnormalized" and step >= onset) else (raw - 0.5) / 0.29
            fit(model, img.astype(np.float32), (raw.mean(axis=(1, 2, 3)) > 0.5).astype(np.int64))
    elif args.scenario == "nlp":
        model = keras.Sequential([keras.Input((20,), dtype="int64"), keras.layers.Embedding(50, 8, name="embedding0"),
                                  keras.layers.GlobalAveragePooling1D(name="mean"), keras.layers.Dense(2, name="fc")],
                                 name="SeqNet")  # fmt: skip
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss=loss)
        for step in range(args.steps):
            tokens = rng.integers(1, 50, (64, 20))
            pad = 0.8 if (fault == "padding" and step >= onset) else 0.2
            tokens[:, int(20 * (1 - pad)) :] = 0
            fit(model, tokens, (tokens[:, 0] > 25).astype(np.int64))
    elif args.scenario == "overfit":
        model = _net(keras, (10,), 64, 2)
        model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.02), loss=loss)
        w_true = rng.standard_normal(10)

        def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
            x = rng.standard_normal((n, 10)).astype(np.float32)
            return x, (x @ w_true + rng.standard_normal(n) > 0).astype(np.int64)  # noisy labels

        x_val, y_val = draw(1024)
        x_tiny = rng.standard_normal((16, 10)).astype(np.float32)
        y_tiny = (x_tiny @ w_true > 0).astype(np.int64)  # the fault: one small batch, repeated
        step = 0
        while step < args.steps:  # one TRAIN step, then one EVAL step
            x, y = (x_tiny, y_tiny) if (fault == "memorize" and step >= onset) else draw(512)
            fit(model, x, y)
            evaluate(model, x_val, y_val)
            step += 2


def main(argv: list[str] | None = None) -> None:
    import sagemaker_debugger_ext.tensorflow as smd

    hook = smd.KerasHook.create_from_json_file()
    train(_args(argv), hook)
    hook.close()


if __name__ == "__main__":
    main()
