"""Keras hook overhead: ``model.fit`` step time with the KerasHook vs without, same process.

Workload: a 256-256-256-10 MLP (ReLU), batch 256, plain SGD, TensorFlow on one intra-op
thread, the same shape as ``bench_hooks``' PyTorch figure. The hook saves weights, biases,
gradients (wrapped optimizer), layer outputs and losses every 10 steps
(``keras_hook_overhead_interval10``). Method: interleaved blocks, ABBA order, as
``bench_hooks``, on one model: each repeat builds one model and alternates ``fit`` calls of
``BLOCK`` steps without callbacks, with the hook and with the floor's callback (below);
overhead = hooked time / baseline time - 1, median over ``REPEATS``. One model because two
identical models differ by themselves: three plain models, interleaved the same way, gave
per-repeat "overheads" from -0.048 to +0.030 with nothing attached (where the runtime put
their buffers), as much as the figure measured. Between the hook's blocks the model runs
the hook's plain step function, which is the model's own graph op for op (a test checks
this), so the baseline blocks run what an unhooked model runs. A block is timed from its
first batch to its end (a callback on both sides), so ``fit``'s own set-up (building the
dataset iterator, about as long as 20 steps) neither dilutes nor adds noise to the ratio.

``keras_floor_overhead_interval10``: the same ratio for the least any hook saving these
tensors does, measured in the same way (a third kind of block on the same model): every
10th step a callback reads the model's weights (``get_weights``, one copy each) and hands
them, with one constant array standing for the rest of what the hook saved (gradients,
layer inputs and outputs: as many bytes as the hook's event files hold per saved step; not
copied, as a hook can hand TensorFlow's own buffers over), to a second thread at the hook
writer's niceness, which writes them to a new file (uncached where the hook's event files
are, ``format/_files.py``). It leaves out what fetching gradients and layer outputs from
the graph costs, so it is a lower bound.

Reported beside them: ``keras_hook_minus_floor_interval10``, the median over repeats of the
hook's overhead minus the floor's in the same repeat (what the hook costs beyond the least
any hook saving these tensors costs; the machine's state moves both together).
"""

from __future__ import annotations

import functools
import os
import queue
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ._interleave import abba_totals
from ._threads import as_hook_writer, write_as_hook

WARMUP_BLOCKS = 2
CYCLES = 8
BLOCK = 60
REPEATS = 9
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


def _Floor(keras: Any, out_dir: Path, nbytes: int) -> Any:
    """The floor's callback (see the module docstring); ``close()`` stops its writer thread."""
    import numpy as np

    out_dir.mkdir(parents=True)
    jobs: queue.SimpleQueue[list[Any] | None] = queue.SimpleQueue()

    def write() -> None:
        as_hook_writer()
        count = 0
        while (arrays := jobs.get()) is not None:
            write_as_hook(out_dir / f"step{count}", arrays)
            count += 1

    writer = threading.Thread(target=write, daemon=True)
    writer.start()

    class Floor(keras.callbacks.Callback):  # type: ignore[misc]
        steps = 0
        rest = np.zeros(0, np.uint8)

        def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
            self.steps += 1

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            if self.steps % 10 == 1:
                weights = self.model.get_weights()  # fresh NumPy arrays
                if not self.rest.size:
                    self.rest = np.ones(max(nbytes - sum(w.nbytes for w in weights), 1), np.uint8)
                jobs.put([*weights, self.rest])

        def close(self) -> None:
            jobs.put(None)
            writer.join()

    return Floor()


def _event_bytes(out_dir: Path) -> tuple[int, int]:
    """(bytes, files) of the hook's event files so far."""
    files = [f for f in out_dir.rglob("*.tfevents") if f.is_file()]
    return sum(f.stat().st_size for f in files), len(files)


def _repeat(keras: Any, data: tuple[Any, Any], out_dir: Path) -> tuple[float, float]:
    """(hooked, floor) time / baseline time - 1 over interleaved blocks of one model."""
    import sagemaker_debugger_ext.tensorflow as smd

    model = _model(keras)
    hook = smd.KerasHook(out_dir=str(out_dir), save_config=smd.SaveConfig(save_interval=10),
                         include_collections=["weights", "biases", "gradients", "layers", "losses"])  # fmt: skip
    x, y = data

    clock = _Clock(keras)

    def block(callbacks: list[Any]) -> float:
        model.fit(x, y, batch_size=BATCH, epochs=1, callbacks=[*callbacks, clock], verbose=0, shuffle=False)
        return clock.elapsed

    for _ in range(WARMUP_BLOCKS):
        block([])
        block([hook])
    nbytes, files = _event_bytes(out_dir)
    floor = _Floor(keras, out_dir.with_name(out_dir.name + "-floor"), nbytes // max(files, 1))
    for _ in range(WARMUP_BLOCKS):
        block([floor])
    runs: dict[str, list[Any]] = {"base": [], "hook": [hook], "floor": [floor]}
    totals = abba_totals({key: functools.partial(block, callbacks) for key, callbacks in runs.items()}, CYCLES)
    hook.close()
    floor.close()
    return totals["hook"] / totals["base"] - 1.0, totals["floor"] / totals["base"] - 1.0


def run() -> dict[str, object]:
    """Return ``keras_hook_overhead_interval10`` (median over repeats) and its spread."""
    try:
        _, keras = _setup()
    except ImportError as exc:
        return {"keras_hook_overhead_interval10_skipped": f"tensorflow/keras not installed: {exc}"}
    import numpy as np

    rng = np.random.default_rng(0)
    data = (rng.normal(size=(BLOCK * BATCH, 256)).astype("float32"), rng.integers(0, 10, size=(BLOCK * BATCH,)))
    overheads, floors = [], []
    for i in range(REPEATS):
        with tempfile.TemporaryDirectory(prefix="bench-keras-") as tmp:
            hooked, floor = _repeat(keras, data, Path(tmp) / f"run{i}")
        overheads.append(hooked)
        floors.append(floor)
    q = statistics.quantiles(overheads, n=4) if len(overheads) > 1 else [overheads[0]] * 3
    return {
        "keras_hook_overhead_interval10": round(statistics.median(overheads), 4),
        "keras_hook_minus_floor_interval10": round(
            statistics.median([h - f for h, f in zip(overheads, floors, strict=True)]), 4
        ),
        "keras_hook_overhead_interval10_p25": round(q[0], 4),
        "keras_hook_overhead_interval10_p75": round(q[2], 4),
        "keras_floor_overhead_interval10": round(statistics.median(floors), 4),
    }
