"""The same KerasHook on Keras 3's other backends (own process: the backend is chosen at import)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext.trials import create_trial

SCRIPT = r"""
import json, os, sys
import numpy as np, keras
import sagemaker_debugger_ext.tensorflow as smd
assert keras.backend.backend() == os.environ["KERAS_BACKEND"]
keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(3, activation="relu", name="h"),
                          keras.layers.Dense(1, name="o")], name="m")
hook = smd.KerasHook(out_dir=sys.argv[1], save_config=smd.SaveConfig(save_interval=1),
                     include_collections=["weights", "biases", "gradients", "layers", "inputs", "outputs"])
model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
rng = np.random.default_rng(0)
x = rng.normal(size=(16, 4)).astype("float32"); y = rng.normal(size=(16, 1)).astype("float32")
seen = {}
class Rec(keras.callbacks.Callback):
    def on_train_batch_begin(self, b, logs=None):
        seen.setdefault("before", []).append(np.array(keras.ops.convert_to_numpy(model.get_layer("h").kernel)).tolist())
    def on_train_batch_end(self, b, logs=None):
        seen.setdefault("after", []).append(np.array(keras.ops.convert_to_numpy(model.get_layer("h").kernel)).tolist())
model.fit(x, y, batch_size=8, epochs=1, callbacks=[hook, Rec()], verbose=0, shuffle=False)
hook.close()
print(json.dumps(seen))
"""


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_keras_hook_on_other_backend(tf, tmp_path: Path, backend: str) -> None:
    pytest.importorskip(backend)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "run")], capture_output=True, text=True,
                          timeout=400, env={**os.environ, "KERAS_BACKEND": backend}, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps() == [0, 1]
    assert trial.tensor_names(collection="gradients") == ["gradients/h/biasGrad", "gradients/h/kernelGrad",
                                                          "gradients/o/biasGrad", "gradients/o/kernelGrad"]  # fmt: skip
    assert {"h/inputs", "h/outputs", "o/outputs"} <= set(trial.tensor_names(collection="layers"))
    for step in (0, 1):
        np.testing.assert_allclose(trial.tensor("h/weights/h/kernel:0").value(step), seen["after"][step], rtol=1e-6)
        grad = (np.array(seen["before"][step]) - np.array(seen["after"][step])) / 0.1
        np.testing.assert_allclose(trial.tensor("gradients/h/kernelGrad").value(step), grad, rtol=1e-4, atol=1e-6)
        assert trial.tensor("h/outputs").value(step).shape == (8, 3)
        assert trial.tensor("inputs").value(step).shape == (8, 4)
