"""The Keras hook's step functions (TensorFlow backend): steps that save run the tapped
function, which hands over the layers, gradients and the variables at the step's end
without copying TensorFlow's buffers; the others run the model's own graph."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sagemaker_debugger_ext.trials import create_trial


def _data(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(24, 5)).astype("float32"), rng.normal(size=(24, 2)).astype("float32")


def test_variables_equal_the_model_at_each_saved_step_with_adam(tf, tmp_path: Path) -> None:
    """Adam updates its slots and the weights in place between saved steps: each saved step
    still holds that step's values (kept buffers are never written over), every step."""
    import keras

    import sagemaker_debugger_ext.tensorflow as smd

    x, y = _data(3)
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(4, activation="tanh", name="hidden"),
                              keras.layers.Dense(2, name="out")])  # fmt: skip
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.05), loss="mse")
    after: list[dict[str, np.ndarray]] = []

    class Record(keras.callbacks.Callback):  # after the hook: the values at each batch's end
        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            values = {v.path: np.array(v.numpy()) for v in model.weights}
            # the saved names: "Adam/<path below the optimizer>:0", whatever Keras numbered it
            values.update({f"Adam/{v.path.split('/', 1)[1]}:0": np.array(v.numpy()) for v in model.optimizer.variables})
            after.append(values)

    hook = smd.KerasHook(out_dir=str(tmp_path / "out"), save_config=smd.SaveConfig(save_interval=1),
                         include_collections=["weights", "biases", "optimizer_variables", "gradients", "layers"])  # fmt: skip
    model.fit(x, y, batch_size=4, epochs=2, callbacks=[hook, Record()], verbose=0, shuffle=False)
    hook.close()
    trial = create_trial(str(tmp_path / "out"))
    assert trial.steps() == list(range(12))
    names = trial.tensor_names(collection="optimizer_variables")
    slots = [n for n in names if "hidden_kernel" in n]
    assert len(slots) == 2, names  # Adam's momentum and velocity of hidden/kernel
    kernel, bias = model.get_layer("hidden").kernel.path, model.get_layer("out").bias.path
    for step in range(12):
        np.testing.assert_array_equal(trial.tensor("hidden/weights/hidden/kernel:0").value(step), after[step][kernel])
        np.testing.assert_array_equal(trial.tensor("out/weights/out/bias:0").value(step), after[step][bias])
        for name in ("Adam/iteration:0", *slots):
            np.testing.assert_array_equal(trial.tensor(name).value(step), after[step][name])
        batch = x[4 * (step % 6) : 4 * (step % 6) + 4]
        np.testing.assert_array_equal(trial.tensor("hidden/inputs").value(step), batch)


def test_taps_survive_a_recompile_between_fits(tf, tmp_path: Path) -> None:
    """compile() again makes Keras build new step functions and here gives the model a new
    optimizer: the next fit gets the tapped and plain functions made again and the new
    optimizer wrapped, so its due steps still save layers, gradients and the new optimizer's
    variables."""
    import keras

    import sagemaker_debugger_ext.tensorflow as smd

    x, y = _data(4)
    keras.utils.set_random_seed(4)
    model = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(2, name="dense")])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01), loss="mse")
    hook = smd.KerasHook(out_dir=str(tmp_path / "out"), save_config=smd.SaveConfig(save_interval=2),
                         include_collections=["gradients", "layers", "losses", "optimizer_variables"])  # fmt: skip
    model.fit(x, y, batch_size=4, epochs=1, callbacks=[hook], verbose=0, shuffle=False)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.02), loss="mae")
    lr_var = [v for v in model.optimizer.variables if "learning_rate" in v.path]
    model.fit(x, y, batch_size=4, epochs=1, callbacks=[hook], verbose=0, shuffle=False)
    hook.close()
    trial = create_trial(str(tmp_path / "out"))
    assert trial.tensor("dense/inputs").steps() == [0, 2, 4, 6, 8, 10]
    assert trial.tensor("gradients/dense/kernelGrad").steps() == [0, 2, 4, 6, 8, 10]
    for step in (0, 2, 4, 6, 8, 10):
        batch = x[4 * (step % 6) : 4 * (step % 6) + 4]
        np.testing.assert_array_equal(trial.tensor("dense/inputs").value(step), batch)
    assert lr_var, "SGD keeps its learning rate as a variable"
    rates = [float(trial.tensor("SGD/learning_rate:0").value(step)) for step in (0, 4, 6, 10)]
    np.testing.assert_allclose(rates, [0.01, 0.01, 0.02, 0.02], rtol=1e-6)


def test_a_hook_that_stops_saving_leaves_the_model_own_function(
    tf, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """never_crash: a write failure (``events`` is a file) stops the hook inside a saved
    step, with the tapped function in place; the next step puts the plain one back, so the
    rest of the training runs the model's own graph."""
    import keras

    import sagemaker_debugger_ext.tensorflow as smd

    x, y = _data(5)
    keras.utils.set_random_seed(5)
    model = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(2, name="dense")])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01), loss="mse")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "events").write_text("not a folder")
    hook = smd.KerasHook(out_dir=str(tmp_path / "out"), save_config=smd.SaveConfig(save_interval=2),
                         include_collections=["layers"], never_crash=True)  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="sagemaker_debugger_ext.hooks"):
        model.fit(x, y, batch_size=4, epochs=1, callbacks=[hook], verbose=0, shuffle=False)
    assert "stops saving" in caplog.text
    assert hook._disabled
    _, plain, tapped = hook._step_functions["train"]
    assert plain is not tapped
    assert model.train_function is plain
    hook.close()
