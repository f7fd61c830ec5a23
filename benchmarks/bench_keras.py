"""Keras hook overhead: ``model.fit`` step time with the KerasHook vs without, same process.

Workload: a 256-256-256-10 MLP (ReLU), batch 256, plain SGD, TensorFlow on one intra-op
thread, the same shape as ``bench_hooks``' PyTorch figure. The hook saves weights, biases,
gradients (wrapped optimizer), layer outputs and losses every 10 steps
(``keras_hook_overhead_interval10``). Method: interleaved blocks, ABBA order, as
``bench_hooks``: each repeat builds two identical models (one fitted with the hook), warms
both up, then alternates ``fit`` calls of ``BLOCK`` steps; overhead = hooked time / baseline
time - 1, median over ``REPEATS``. A block is timed from its first batch to its end (a
callback on both sides), so ``fit``'s own set-up (building the dataset iterator, about as
long as 20 steps) neither dilutes nor adds noise to the ratio.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

WARMUP_BLOCKS = 2
CYCLES = 8
BLOCK = 60
REPEATS = 5
BATCH = 256


def _setup() -> tuple[Any, Any]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError:  # already initialised in this process
        pass
    import keras

    return tf, keras


def _model(keras: Any) -> Any:
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input(shape=(256,)), keras.layers.Dense(256, activation="relu"),
                              keras.layers.Dense(256, activation="relu"), keras.layers.Dense(10)])  # fmt: skip
    model.compile(
        optimizer=keras.optimizers.SGD(0.01), loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    )
    return model


def _Clock(keras: Any) -> Any:
    """A callback timing a ``fit`` from its first batch's start to the training's end."""

    class Clock(keras.callbacks.Callback):  # type: ignore[misc]
        started = elapsed = 0.0

        def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
            if batch == 0:
                self.started = time.perf_counter()

        def on_train_end(self, logs: Any = None) -> None:
            self.elapsed = time.perf_counter() - self.started

    return Clock()


def _repeat(keras: Any, data: tuple[Any, Any], out_dir: Path) -> float:
    import sagemaker_debugger_ext.tensorflow as smd

    base, hooked = _model(keras), _model(keras)
    hook = smd.KerasHook(out_dir=str(out_dir), save_config=smd.SaveConfig(save_interval=10),
                         include_collections=["weights", "biases", "gradients", "layers", "losses"])  # fmt: skip
    x, y = data

    clock = _Clock(keras)

    def block(model: Any, callbacks: list[Any]) -> float:
        model.fit(x, y, batch_size=BATCH, epochs=1, callbacks=[*callbacks, clock], verbose=0, shuffle=False)
        return clock.elapsed

    for _ in range(WARMUP_BLOCKS):
        block(base, [])
        block(hooked, [hook])
    totals = {"base": 0.0, "hook": 0.0}
    for cycle in range(CYCLES):
        order = (
            (("hook", hooked, [hook]), ("base", base, []))
            if cycle % 2 == 0
            else (("base", base, []), ("hook", hooked, [hook]))
        )
        for key, model, cbs in order:
            totals[key] += block(model, cbs)
    hook.close()
    return totals["hook"] / totals["base"] - 1.0


def run() -> dict[str, object]:
    """Return ``keras_hook_overhead_interval10`` (median over repeats) and its spread."""
    try:
        _, keras = _setup()
    except ImportError as exc:
        return {"keras_hook_overhead_interval10_skipped": f"tensorflow/keras not installed: {exc}"}
    import numpy as np

    rng = np.random.default_rng(0)
    data = (rng.normal(size=(BLOCK * BATCH, 256)).astype("float32"), rng.integers(0, 10, size=(BLOCK * BATCH,)))
    overheads = []
    for i in range(REPEATS):
        with tempfile.TemporaryDirectory(prefix="bench-keras-") as tmp:
            overheads.append(_repeat(keras, data, Path(tmp) / f"run{i}"))
    q = statistics.quantiles(overheads, n=4) if len(overheads) > 1 else [overheads[0]] * 3
    return {
        "keras_hook_overhead_interval10": round(statistics.median(overheads), 4),
        "keras_hook_overhead_interval10_p25": round(q[0], 4),
        "keras_hook_overhead_interval10_p75": round(q[2], 4),
    }
