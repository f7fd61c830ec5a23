"""KerasHook in custom training loops (GradientTape, eager and tf.function), save_tensor /
save_scalar inside tf.function, a small CNN with layer outputs, TensorBoard export."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sagemaker_debugger_ext.trials import create_trial


def _tape_loop(tf: Any, out: Path, compiled: bool) -> dict[str, Any]:
    import keras

    import sagemaker_debugger_ext.tensorflow as smd

    keras.utils.set_random_seed(2)
    model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(3, name="fc")], name="net")
    opt = keras.optimizers.SGD(learning_rate=0.05)
    hook = smd.KerasHook(out_dir=str(out), save_config=smd.SaveConfig(save_interval=2),
                         include_collections=["weights", "biases", "gradients", "losses", "custom"])  # fmt: skip
    rng = np.random.default_rng(2)
    xs = rng.normal(size=(5, 8, 4)).astype("float32")
    ys = rng.normal(size=(5, 8, 3)).astype("float32")

    def step(x: Any, y: Any) -> tuple[Any, Any]:
        with hook.wrap_tape(tf.GradientTape()) as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        hook.save_tensor("pred_mean", tf.reduce_mean(model(x)), "custom")
        hook.save_scalar("loss_scalar", loss, sm_metric=True)
        opt.apply_gradients(zip(grads, model.trainable_variables, strict=False))
        return loss, grads

    run = tf.function(step) if compiled else step
    record = []
    for x, y in zip(xs, ys, strict=True):
        before = {v.path: v.numpy().copy() for v in model.trainable_variables}
        loss, grads = run(tf.constant(x), tf.constant(y))
        record.append({"before": before, "loss": float(loss), "grads": [g.numpy() for g in grads]})
    hook.close()
    return {"model": model, "record": record}


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf_function"])
def test_gradient_tape_loop(tf, tmp_path: Path, compiled: bool) -> None:
    run = _tape_loop(tf, tmp_path, compiled)
    trial = create_trial(str(tmp_path))
    assert trial.steps() == [0, 1, 2, 3, 4]  # save_scalar values are written every step
    for name in ("weights/fc/kernel:0", "gradients/fc/kernelGrad", "loss", "pred_mean"):
        assert trial.tensor(name).steps() == [0, 2, 4], name
    assert trial.tensor_names(collection="gradients") == ["gradients/fc/biasGrad", "gradients/fc/kernelGrad"]
    assert trial.tensor_names(collection="weights") == ["weights/fc/kernel:0"]
    assert trial.tensor_names(collection="biases") == ["weights/fc/bias:0"]
    assert "loss" in trial.tensor_names(collection="losses")
    assert trial.tensor_names(collection="custom") == ["pred_mean"]
    assert "scalar/loss_scalar" in trial.tensor_names(collection="sm_metrics")
    for step in (0, 2, 4):
        rec = run["record"][step]
        np.testing.assert_allclose(trial.tensor("weights/fc/kernel:0").value(step), rec["before"]["net/fc/kernel"])
        np.testing.assert_allclose(trial.tensor("gradients/fc/kernelGrad").value(step), rec["grads"][0], rtol=1e-6)
        np.testing.assert_allclose(trial.tensor("gradients/fc/biasGrad").value(step), rec["grads"][1], rtol=1e-6)
        np.testing.assert_allclose(np.asarray(trial.tensor("loss").value(step)).reshape(-1), [rec["loss"]], rtol=1e-6)
        assert trial.tensor("pred_mean").value(step).shape == ()
    # save_scalar writes every step (scalars are always saved)
    assert trial.tensor("scalar/loss_scalar").steps() == [0, 1, 2, 3, 4]
    np.testing.assert_allclose(trial.tensor("scalar/loss_scalar").value(3), [run["record"][3]["loss"]], rtol=1e-6)


def test_wrap_tape_rejects_other_objects(tf, tmp_path: Path) -> None:
    import sagemaker_debugger_ext.tensorflow as smd
    from sagemaker_debugger_ext._exceptions import HookError

    hook = smd.KerasHook(out_dir=str(tmp_path))
    with pytest.raises(HookError, match="tf.GradientTape"):
        hook.wrap_tape(object())
    hook.close()


def test_cnn_layers_and_tensorboard(tf, tmp_path: Path) -> None:
    """A small CNN: layer outputs per step with their shapes; TensorBoard scalars and
    histograms readable by TensorBoard's own reader."""
    import keras
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    import sagemaker_debugger_ext.tensorflow as smd

    keras.utils.set_random_seed(3)
    model = keras.Sequential([
        keras.Input(shape=(8, 8, 1)),
        keras.layers.Conv2D(2, 3, activation="relu", name="conv"),
        keras.layers.MaxPooling2D(name="pool"),
        keras.layers.Flatten(name="flat"),
        keras.layers.Dense(3, activation="softmax", name="out"),
    ])  # fmt: skip
    hook = smd.KerasHook(out_dir=str(tmp_path / "run"), export_tensorboard=True, tensorboard_dir=str(tmp_path / "tb"),
                         save_config=smd.SaveConfig(save_interval=3), include_collections=["weights", "layers"])  # fmt: skip
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    rng = np.random.default_rng(3)
    x = rng.normal(size=(24, 8, 8, 1)).astype("float32")
    y = rng.integers(0, 3, size=(24,))
    model.fit(x, y, batch_size=4, epochs=1, callbacks=[hook], verbose=0, shuffle=False)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps() == [0, 3, 5]  # 5: the epoch's logs go into its last step (smdebug's force save)
    assert trial.tensor("conv/outputs").value(0).shape == (4, 6, 6, 2)
    assert trial.tensor("pool/outputs").value(3).shape == (4, 3, 3, 2)
    assert trial.tensor("flat/outputs").value(3).shape == (4, 18)
    assert trial.tensor("out/outputs").value(0).shape == (4, 3)
    np.testing.assert_allclose(trial.tensor("out/outputs").value(0).sum(axis=1), 1.0, rtol=1e-5)  # softmax
    np.testing.assert_allclose(trial.tensor("conv/inputs").value(3), x[12:16])
    assert trial.tensor("conv/weights/conv/kernel:0").value(0).shape == (3, 3, 1, 2)
    acc = EventAccumulator(str(tmp_path / "tb" / "TRAIN"), size_guidance={"histograms": 0, "scalars": 0})
    acc.Reload()
    assert [e.step for e in acc.Scalars("loss")] == [0, 3, 5]
    assert "weights/conv/weights/conv/kernel:0" in acc.Tags()["histograms"]
    assert [e.step for e in acc.Histograms("layers/conv/outputs")] == [0, 3]


def _registered_loop(tf: Any, out: Path, compiled: bool, register: bool) -> list[tuple[Any, Any]]:
    """A custom loop (wrap_tape, wrapped Adam) over a 2-layer model; returns each step's (input, logits)."""
    import keras

    import sagemaker_debugger_ext.tensorflow as smd

    keras.utils.set_random_seed(5)
    model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(3, activation="relu", name="hid"),
                              keras.layers.Dense(2, name="logit")])  # fmt: skip
    hook = smd.KerasHook(out_dir=str(out), save_config=smd.SaveConfig(save_interval=2),
                         include_collections=["layers", "optimizer_variables", "losses"])  # fmt: skip
    if register:
        hook.register_model(model)
    opt = hook.wrap_optimizer(keras.optimizers.Adam(learning_rate=0.01))
    xs = np.random.default_rng(5).normal(size=(4, 6, 4)).astype("float32")

    def step(x: Any) -> Any:
        with hook.wrap_tape(tf.GradientTape()) as tape:
            logits = model(x)
            loss = tf.reduce_mean(tf.square(logits))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables, strict=False))
        return logits

    run = tf.function(step) if compiled else step
    seen = [(x, run(tf.constant(x)).numpy()) for x in xs]
    hook.close()
    return seen


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf_function"])
def test_register_model_saves_layers_in_a_custom_loop(tf, tmp_path: Path, compiled: bool) -> None:
    """smdebug's KerasHook.register_model(model) (its tests/tensorflow2/test_embedding_grad.py
    calls it): the model's layer inputs/outputs are saved from a GradientTape loop, as fit saves
    them; without it a custom loop saves none. The wrapped optimizer's variables are saved by the
    tape as in fit (read before the step's update: iteration 0 and 2 at steps 0 and 2)."""
    seen = _registered_loop(tf, tmp_path / "reg", compiled, register=True)
    trial = create_trial(str(tmp_path / "reg"))
    assert set(trial.tensor_names(collection="layers")) == {"hid/inputs", "hid/outputs", "logit/inputs",
                                                             "logit/outputs"}  # fmt: skip
    for step in (0, 2):
        np.testing.assert_allclose(trial.tensor("hid/inputs").value(step), seen[step][0])
        np.testing.assert_allclose(trial.tensor("logit/outputs").value(step), seen[step][1], rtol=1e-5)
    assert trial.tensor_names(collection="optimizer_variables")[:2] == ["Adam/iteration:0", "Adam/learning_rate:0"]
    assert [int(trial.tensor("Adam/iteration:0").value(s)) for s in (0, 2)] == [0, 2]
    _registered_loop(tf, tmp_path / "plain", compiled, register=False)
    plain = create_trial(str(tmp_path / "plain"))
    assert plain.tensor_names(collection="layers") == []
    assert "Adam/iteration:0" in plain.tensor_names(collection="optimizer_variables")


def test_wrap_tape_in_train_step_with_a_registered_model(tf, tmp_path: Path) -> None:
    """smdebug's tests/tensorflow2/test_embedding_grad.py (Keras 3 train_step): a subclassed model
    registered with register_model, wrap_tape inside train_step, fit with run_eagerly: the 5
    gradients (embedding, 2 dense layers) as smdebug's test expects; the optimizer's variables,
    saved by the tape (before the update) and due again at the batch's end, are the tape's."""
    import keras

    import sagemaker_debugger_ext.tensorflow as smd

    class Net(keras.Model):
        def __init__(self, hook: Any) -> None:
            super().__init__()
            self.emb, self.hid = keras.layers.Embedding(20, 4), keras.layers.Dense(4, activation="relu")
            self.out, self.hook = keras.layers.Dense(1, activation="sigmoid"), hook

        def call(self, x: Any, training: bool = False) -> Any:
            return self.out(self.hid(self.emb(x)))

        def train_step(self, data: Any) -> Any:
            x, y, sw = keras.utils.unpack_x_y_sample_weight(data)
            with self.hook.wrap_tape(tf.GradientTape()) as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sw)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables, strict=False))
            return self.compute_metrics(x, y, y_pred, sw)

    keras.utils.set_random_seed(6)
    hook = smd.KerasHook(out_dir=str(tmp_path), save_config=smd.SaveConfig(save_interval=5),
                         include_collections=["weights", "biases", "gradients", "optimizer_variables"])  # fmt: skip
    model = Net(hook)
    hook.register_model(model)
    model.compile(optimizer=hook.wrap_optimizer(keras.optimizers.Adam()), loss="binary_crossentropy", run_eagerly=True)
    rng = np.random.default_rng(6)
    x, y = rng.integers(1, 20, size=(128, 5)), rng.integers(0, 2, size=(128, 5, 1)).astype("float32")
    model.fit(x, y, batch_size=16, epochs=1, callbacks=[hook], verbose=0)
    hook.close()
    trial = create_trial(str(tmp_path))
    grads = trial.tensor_names(collection="gradients")
    assert len(grads) == 5, grads
    # as smdebug: a batch's begin and the tape's block are a step each (the tape's: odd steps)
    assert trial.tensor(grads[0]).steps() == [5, 15]
    assert [int(trial.tensor("Adam/iteration:0").value(s)) for s in (5, 15)] == [2, 7]
