"""A Keras training script as users write them for SageMaker's TensorFlow estimator.

Hyperparameters (TF style): --epochs, --batch-size, --learning-rate, --model_dir (the SDK
passes it), --nan-at-step K (the output layer's kernel becomes NaN before train step K: the loss
diverges; a NaN kernel before the ReLU would not reach the loss on TF 2.21, whose relu maps
NaN to 0),
--step-seconds S (simulated compute per batch). The hook comes from SageMaker's
debughookconfig.json when the job has one.
"""

import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras
import numpy as np

import sagemaker_debugger_ext.tensorflow as smd

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--batch-size", type=int, default=8)
parser.add_argument("--learning-rate", type=float, default=0.05)
parser.add_argument("--model_dir", default="")
parser.add_argument("--nan-at-step", type=int, default=-1)
parser.add_argument("--step-seconds", type=float, default=0.0)
args, unknown = parser.parse_known_args()
tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
print(
    f"model_dir={args.model_dir} hosts={os.environ.get('SM_HOSTS')} current={os.environ.get('SM_CURRENT_HOST')} "
    f"tf_config_task={tf_config.get('task')}",
    flush=True,
)

hook = smd.get_hook(hook_type="keras", create_if_not_exists=True)
print(f"hook={hook!r}", flush=True)
rng = np.random.default_rng(0)
x = rng.normal(size=(64, 8)).astype("float32")
y = (x.sum(axis=1, keepdims=True) > 0).astype("float32")
keras.utils.set_random_seed(0)
model = keras.Sequential(
    [
        keras.Input(shape=(8,)),
        keras.layers.Dense(8, activation="relu", name="dense"),
        keras.layers.Dense(1, activation="sigmoid", name="out"),
    ],
    name="net",
)
model.compile(optimizer=keras.optimizers.SGD(args.learning_rate), loss="binary_crossentropy", metrics=["accuracy"])


class Diverge(keras.callbacks.Callback):
    def __init__(self) -> None:
        super().__init__()
        self.step = -1

    def on_train_batch_begin(self, batch, logs=None):
        self.step += 1
        if self.step == args.nan_at_step:
            kernel = model.get_layer("out").kernel  # past the ReLU: TF 2.21 maps relu(NaN) to 0
            kernel.assign(np.full(kernel.shape, np.nan, dtype="float32"))
        if args.step_seconds:
            time.sleep(args.step_seconds)


callbacks = [Diverge()] + ([hook] if hook is not None else [])
model.fit(x, y, batch_size=args.batch_size, epochs=args.epochs, validation_split=0.25, callbacks=callbacks, verbose=2)
model.save(os.path.join(os.environ.get("SM_MODEL_DIR", "/tmp"), "model.keras"))
print("done", flush=True)
