"""A Keras model trained under MultiWorkerMirroredStrategy, as run by SageMaker's TensorFlow
estimator with ``distribution={"multi_worker_mirrored_strategy": {"enabled": True}}``: the
strategy reads ``TF_CONFIG``. A custom loop with ``hook.wrap_tape``: Keras 3.15's ``fit()``
itself fails under MultiWorkerMirroredStrategy (see docs/hook.md). --nan-at-step K makes a
weight NaN before train step K (the loss diverges).
"""

import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras
import numpy as np
import tensorflow as tf

import sagemaker_debugger_ext.tensorflow as smd

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--nan-at-step", type=int, default=-1)
parser.add_argument("--model_dir", default="")
parser.add_argument("--step-seconds", type=float, default=0.0)
args, _ = parser.parse_known_args()
task = json.loads(os.environ["TF_CONFIG"])["task"]
print(f"tf_config_task={task}", flush=True)

strategy = tf.distribute.MultiWorkerMirroredStrategy()
hook = smd.get_hook(hook_type="keras", create_if_not_exists=True)
print(f"hook={hook!r} worker={hook.worker if hook else None} replicas={strategy.num_replicas_in_sync}", flush=True)
rng = np.random.default_rng(0)
x = rng.normal(size=(64, 8)).astype("float32")
y = (x.sum(axis=1, keepdims=True) > 0).astype("float32")
keras.utils.set_random_seed(0)
with strategy.scope():
    model = keras.Sequential(
        [
            keras.Input(shape=(8,)),
            keras.layers.Dense(8, activation="relu", name="dense"),
            keras.layers.Dense(1, activation="sigmoid", name="out"),
        ],
        name="net",
    )
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="binary_crossentropy")


optimizer = model.optimizer
loss_fn = keras.losses.BinaryCrossentropy(reduction="sum")
data = strategy.experimental_distribute_dataset(
    tf.data.Dataset.from_tensor_slices((x, y)).batch(8 * strategy.num_replicas_in_sync)
)


def train_step(inputs):
    features, labels = inputs
    tape = tf.GradientTape()
    with hook.wrap_tape(tape) if hook is not None else tape as tape:
        loss = loss_fn(labels, model(features, training=True)) / 8.0
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    return loss


step = 0
for _ in range(args.epochs):
    for batch in data:
        if step == args.nan_at_step:
            kernel = model.get_layer("out").kernel  # past the ReLU: TF 2.21 maps relu(NaN) to 0
            kernel.assign(np.full(kernel.shape, np.nan, dtype="float32"))
        loss = strategy.run(train_step, args=(batch,))
        step += 1
        time.sleep(args.step_seconds)  # simulated compute per batch
print("done", flush=True)
