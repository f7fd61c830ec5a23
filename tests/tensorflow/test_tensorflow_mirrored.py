"""KerasHook under tf.distribute.MirroredStrategy on two logical CPU devices (own process:
the devices must be configured before TensorFlow starts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from sagemaker_debugger_ext.trials import create_trial

SCRIPT = r"""
import json, sys
import numpy as np
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
import keras
import sagemaker_debugger_ext.tensorflow as smd

out = sys.argv[1]
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
keras.utils.set_random_seed(4)
with strategy.scope():
    model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(3, activation="relu", name="a"),
                              keras.layers.Dense(1, name="b")], name="m")
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
hook = smd.KerasHook(out_dir=out, save_config=smd.SaveConfig(save_interval=1),
                     include_collections=["weights", "biases", "gradients", "losses"])
rng = np.random.default_rng(4)
x = rng.normal(size=(32, 4)).astype("float32"); y = rng.normal(size=(32, 1)).astype("float32")
final = {}
class Final(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        final[batch] = {v.path: v.numpy().tolist() for v in model.weights}
model.fit(x, y, batch_size=16, epochs=1, callbacks=[hook, Final()], verbose=0, shuffle=False)
hook.close()
print(json.dumps({"replicas": strategy.num_replicas_in_sync, "weights": final}))
"""


def test_mirrored_strategy_on_two_cpu_devices(tf, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "run")], capture_output=True, text=True,
                          timeout=400, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["replicas"] == 2
    trial = create_trial(str(tmp_path / "run"))
    assert trial.workers() == ["worker_0"]  # one worker file set for the whole strategy
    assert trial.steps() == [0, 1]
    assert trial.tensor_names(collection="weights") == ["a/weights/a/kernel:0", "b/weights/b/kernel:0"]
    assert trial.tensor_names(collection="gradients") == ["gradients/a/biasGrad", "gradients/a/kernelGrad",
                                                          "gradients/b/biasGrad", "gradients/b/kernelGrad"]  # fmt: skip
    for step in (0, 1):
        np.testing.assert_allclose(trial.tensor("a/weights/a/kernel:0").value(step),
                                   result["weights"][str(step)]["m/a/kernel"], rtol=1e-6)  # fmt: skip
        assert trial.tensor("gradients/a/kernelGrad").value(step).shape == (4, 3)
        assert np.isfinite(trial.tensor("loss").value(step)).all()
