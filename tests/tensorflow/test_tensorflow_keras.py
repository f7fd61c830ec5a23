"""KerasHook on a real Keras 3 MLP (TensorFlow backend, CPU): names, steps, shapes and values."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from smdebug_reference import smdebug_json

from sagemaker_debugger_ext.trials import create_trial

HERE = Path(__file__).resolve().parent
REFERENCE = HERE.parent / "fixtures" / "keras_tf212_smdebug.json"
LR = 0.1


class Recorder:
    """A callback placed after the hook: the model's variables and logs at each batch end."""

    def __init__(self, keras: Any, model: Any) -> None:
        outer = self

        class _CB(keras.callbacks.Callback):
            def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
                outer.before.append({v.path: np.array(v.numpy()) for v in model.weights})

            def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
                outer.after.append({v.path: np.array(v.numpy()) for v in model.weights})
                outer.losses.append(float(logs["loss"]))

        self.before: list[dict[str, np.ndarray]] = []
        self.after: list[dict[str, np.ndarray]] = []
        self.losses: list[float] = []
        self.callback = _CB()


@pytest.fixture(scope="module")
def mlp_run(tf, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    import keras

    import sagemaker_debugger_ext.tensorflow as smd

    out = tmp_path_factory.mktemp("keras-mlp")
    rng = np.random.default_rng(1)
    x = rng.normal(size=(32, 6)).astype("float32")
    y = (x[:, :3] > 0).astype("float32")
    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(5, activation="relu", name="hidden"),
                              keras.layers.Dense(3, name="logits")])  # fmt: skip
    hook = smd.KerasHook(out_dir=str(out), save_config=smd.SaveConfig(save_interval=1),
                         include_collections=["weights", "biases", "gradients", "optimizer_variables", "layers",
                                              "inputs", "outputs"])  # fmt: skip
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=LR), loss="mse", metrics=["mae"])
    rec = Recorder(keras, model)
    model.fit(
        x,
        y,
        batch_size=8,
        epochs=1,
        validation_data=(x[:16], y[:16]),
        callbacks=[hook, rec.callback],
        verbose=0,
        shuffle=False,
    )
    predicted = model.predict(x[:8], batch_size=8, callbacks=[hook], verbose=0)
    hidden = keras.Model(model.inputs[0], model.get_layer("hidden").output)(x[:8]).numpy()
    hook.close()
    return {"out": out, "model": model, "rec": rec, "x": x, "y": y, "predicted": predicted, "hidden": hidden}


def test_mlp_names_and_shapes(mlp_run: dict[str, Any]) -> None:
    trial = create_trial(str(mlp_run["out"]))
    model = mlp_run["model"]
    assert trial.tensor_names(collection="weights") == [
        "hidden/weights/hidden/kernel:0",
        "logits/weights/logits/kernel:0",
    ]
    assert trial.tensor_names(collection="biases") == ["hidden/weights/hidden/bias:0", "logits/weights/logits/bias:0"]
    assert trial.tensor_names(collection="gradients") == sorted(
        f"gradients/{v.path.split('/', 1)[1]}Grad" for v in model.trainable_weights
    )
    # smdebug keeps the validation logs out of losses/metrics (tests/fixtures/keras_tf212_smdebug.json)
    assert trial.tensor_names(collection="losses") == ["loss"]
    assert trial.tensor_names(collection="metrics") == ["batch", "mae"]
    assert {"val_loss", "val_mae"} <= set(trial.tensor_names())
    assert set(trial.tensor_names(collection="optimizer_variables")) == {"SGD/iteration:0", "SGD/learning_rate:0"}
    assert set(trial.tensor_names(collection="layers")) == {
        "hidden/inputs",
        "hidden/outputs",
        "logits/inputs",
        "logits/outputs",
    }
    assert trial.tensor_names(collection="inputs") == ["inputs"]
    assert set(trial.tensor_names(collection="outputs")) == {"labels", "predictions"}
    assert trial.tensor("hidden/weights/hidden/kernel:0").value(0).shape == (6, 5)
    assert trial.tensor("gradients/hidden/kernelGrad").value(0).shape == (6, 5)
    assert trial.tensor("hidden/outputs").value(0).shape == (8, 5)
    assert trial.tensor("loss").value(0).shape == (1,)


def test_mlp_steps_per_mode(mlp_run: dict[str, Any]) -> None:
    from sagemaker_debugger_ext import modes

    trial = create_trial(str(mlp_run["out"]))
    assert trial.steps(mode=modes.TRAIN) == [0, 1, 2, 3]
    assert trial.steps(mode=modes.EVAL) == [0, 1]
    assert trial.steps(mode=modes.PREDICT) == [0]
    assert trial.steps() == list(range(7))
    assert trial.tensor("gradients/hidden/kernelGrad").steps() == [0, 1, 2, 3]  # never in EVAL/PREDICT
    assert trial.tensor("val_loss").steps() == [5]  # the epoch's logs go into its last step


def test_mlp_values_equal_the_model(mlp_run: dict[str, Any]) -> None:
    """Weights after each batch, gradients = (before - after) / lr (plain SGD), losses, layer
    outputs and predictions equal what Keras computed."""
    from sagemaker_debugger_ext import modes

    trial = create_trial(str(mlp_run["out"]))
    rec = mlp_run["rec"]
    model = mlp_run["model"]
    variables = {"hidden": model.get_layer("hidden").kernel, "logits": model.get_layer("logits").bias}
    for step in range(4):
        for layer, variable in variables.items():  # the model's name varies: sequential_<n> after others
            path, var = variable.path, variable.path.rsplit("/", 1)[1]
            saved = trial.tensor(f"{layer}/weights/{layer}/{var}:0").value(step, mode=modes.TRAIN)
            np.testing.assert_allclose(saved, rec.after[step][path], rtol=1e-6)
            grad = trial.tensor(f"gradients/{layer}/{var}Grad").value(step, mode=modes.TRAIN)
            np.testing.assert_allclose(
                grad, (rec.before[step][path] - rec.after[step][path]) / LR, rtol=1e-4, atol=1e-6
            )
        np.testing.assert_allclose(trial.tensor("loss").value(step, mode=modes.TRAIN), [rec.losses[step]], rtol=1e-6)
        np.testing.assert_allclose(trial.tensor("inputs").value(step, mode=modes.TRAIN),
                                   mlp_run["x"][8 * step: 8 * step + 8])  # fmt: skip
        np.testing.assert_allclose(trial.tensor("labels").value(step, mode=modes.TRAIN),
                                   mlp_run["y"][8 * step: 8 * step + 8])  # fmt: skip
    np.testing.assert_allclose(
        trial.tensor("predictions").value(0, mode=modes.PREDICT), mlp_run["predicted"], rtol=1e-5
    )
    np.testing.assert_allclose(
        trial.tensor("hidden/outputs").value(0, mode=modes.PREDICT), mlp_run["hidden"], rtol=1e-5
    )
    np.testing.assert_allclose(trial.tensor("hidden/inputs").value(0, mode=modes.PREDICT), mlp_run["x"][:8])


@pytest.fixture(scope="module")
def reference_run(tf, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The reference script (the model recorded with TF 2.12 + smdebug 1.0.34) run with this package."""
    out = tmp_path_factory.mktemp("keras-ref")
    result = out / "result.json"
    argv = sys.argv
    sys.argv = ["keras_reference_script.py", "ours", str(out / "run"), str(result)]
    try:
        runpy.run_path(str(HERE / "keras_reference_script.py"), run_name="__main__")
    finally:
        sys.argv = argv
    return {"run": out / "run", "result": json.loads(result.read_text())}


def test_names_steps_shapes_match_tf212_smdebug_reference(reference_run: dict[str, Any]) -> None:
    """Every tensor smdebug 1.0.34 wrote on TF 2.12 for the same model is written with the same
    name, steps per mode, shape and dtype. Differences on purpose: ``val_batch`` (an artifact
    of smdebug adding ``batch`` to Keras' own logs dict) is not written; gradients and
    optimizer variables are (smdebug's ``wrap_optimizer`` captured none on TF 2.12)."""
    ref = json.loads(REFERENCE.read_text())
    ours = reference_run["result"]
    expected = {k: v for k, v in ref["tensors"].items() if k != "val_batch"}
    for name, facts in expected.items():
        assert ours["tensors"].get(name) == facts, name
    extra = set(ours["tensors"]) - set(ref["tensors"])
    assert extra == {"gradients/dense/kernelGrad", "gradients/dense/biasGrad", "gradients/dense_1/kernelGrad",
                     "gradients/dense_1/biasGrad", "SGD/iteration:0", "SGD/learning_rate:0"}  # fmt: skip
    for coll in ("weights", "biases", "losses", "metrics"):  # val_loss/val_mae saved, in neither collection
        assert ours["collections"][coll] == ref["collections"][coll], coll


SMDEBUG_READER = """
import json, sys
from smdebug.trials import create_trial
from smdebug.core.modes import ModeKeys
trial = create_trial(sys.argv[1])
out = {"steps": trial.steps(), "modes": {}, "collections": {}, "values": {}}
for m in ("TRAIN", "EVAL", "PREDICT"):
    out["modes"][m] = trial.steps(mode=getattr(ModeKeys, m))
for c in ("weights", "biases", "gradients", "losses", "metrics", "optimizer_variables"):
    out["collections"][c] = sorted(trial.tensor_names(collection=c))
for name in trial.tensor_names():
    t = trial.tensor(name)
    for step in t.steps():
        v = t.value(step)
        out["values"][f"{step}|{name}"] = [str(v.dtype), list(v.shape), v.astype("float64").reshape(-1).tolist()]
print(json.dumps(out))
"""


def test_smdebug_reader_reads_our_keras_run_identically(reference_run: dict[str, Any], smdebug_python: Path) -> None:
    from sagemaker_debugger_ext import modes

    got = smdebug_json(smdebug_python, SMDEBUG_READER, str(reference_run["run"]), timeout=180)
    trial = create_trial(str(reference_run["run"]))
    assert got["steps"] == trial.steps() == list(range(16))
    for m in ("TRAIN", "EVAL", "PREDICT"):
        assert got["modes"][m] == trial.steps(mode=getattr(modes, m))
    for coll, names in got["collections"].items():
        assert names == sorted(trial.tensor_names(collection=coll)), coll
    expected = {f"{s}|{n}" for n in trial.tensor_names() for s in trial.tensor(n).steps()}
    assert set(got["values"]) == expected
    for key, (dtype, shape, values) in got["values"].items():
        step, name = key.split("|", 1)
        ours = np.asarray(trial.tensor(name).value(int(step)))
        assert (str(ours.dtype), list(ours.shape)) == (dtype, shape), key
        np.testing.assert_array_equal(ours.astype(np.float64).reshape(-1), values)


def test_interval_saves_graph_values_only_at_due_steps(tf, tmp_path: Path) -> None:
    """save_interval=3: the in-graph taps (layer inputs, gradients) are switched on for steps
    0, 3, 6 only, and what they save is that step's batch, not a neighbour's."""
    import keras

    import sagemaker_debugger_ext.tensorflow as smd

    rng = np.random.default_rng(2)
    x = rng.normal(size=(32, 6)).astype("float32")
    y = rng.normal(size=(32, 3)).astype("float32")
    keras.utils.set_random_seed(2)
    model = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(3, name="dense")])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01), loss="mse")
    hook = smd.KerasHook(out_dir=str(tmp_path / "out"), save_config=smd.SaveConfig(save_interval=3),
                         include_collections=["gradients", "layers", "losses"])  # fmt: skip
    model.fit(x, y, batch_size=4, epochs=1, callbacks=[hook], verbose=0, shuffle=False)
    hook.close()
    trial = create_trial(str(tmp_path / "out"))
    assert trial.tensor("dense/inputs").steps() == [0, 3, 6]
    assert trial.tensor("gradients/dense/kernelGrad").steps() == [0, 3, 6]
    for step in (0, 3, 6):
        np.testing.assert_array_equal(trial.tensor("dense/inputs").value(step), x[4 * step : 4 * step + 4])


def test_reduction_names_keep_the_colon_index(tf, tmp_path: Path, smdebug_python: Path) -> None:
    """With a reduction_config the variables keep smdebug's TensorFlow names (``...kernel:0``),
    read by this reader and by smdebug's; a collection the trial lacks lists nothing in both."""
    import keras

    import sagemaker_debugger_ext.tensorflow as smd

    x = np.random.default_rng(3).normal(size=(16, 8)).astype("float32")
    model = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(4, name="dense"),
                              keras.layers.Dense(2, name="dense_1")])  # fmt: skip
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss="mse")
    hook = smd.KerasHook(out_dir=str(tmp_path / "out"), save_config=smd.SaveConfig(save_interval=1),
                         reduction_config=smd.ReductionConfig(reductions=["mean"], norms=["l2"]),
                         include_collections=["weights", "biases"])  # fmt: skip
    model.fit(x, x[:, :2], batch_size=8, epochs=1, callbacks=[hook], verbose=0, shuffle=False)
    hook.close()
    ref = json.loads(REFERENCE.read_text())["collections"]
    trial = create_trial(str(tmp_path / "out"))
    for coll in ("weights", "biases"):
        assert trial.tensor_names(collection=coll) == ref[coll], coll
    kernel = trial.tensor("dense/weights/dense/kernel:0")
    assert np.isfinite(kernel.reduction_value(0, "mean")) and kernel.reduction_value(0, "l2") > 0
    assert trial.tensor_names(collection="not_in_this_trial") == []
    script = (
        "import json, sys\nfrom smdebug.trials import create_trial\nt = create_trial(sys.argv[1])\n"
        "print(json.dumps([t.tensor_names(), t.tensor_names(collection='not_in_this_trial')]))\n"
    )
    names, absent = smdebug_json(smdebug_python, script, str(tmp_path / "out"), timeout=180)
    assert names == trial.tensor_names() and absent == []


def _adam_fit(
    out: Path, include: list[str], run_eagerly: bool, regex: str | None = None, wrap: bool = False, every: int = 9
) -> Any:
    import keras

    import sagemaker_debugger_ext.tensorflow as smd

    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(40, 4, 4)).astype("float32"), rng.integers(0, 10, size=(40,))
    keras.utils.set_random_seed(4)
    model = keras.Sequential([keras.Input(shape=(4, 4)), keras.layers.Flatten(), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dropout(0.2), keras.layers.Dense(10, activation="softmax")])  # fmt: skip
    hook = smd.KerasHook(out_dir=str(out), save_config=smd.SaveConfig(save_interval=9), include_collections=include)
    if regex is not None:
        hook.get_collection(include[0]).include(regex)
        hook.get_collection(include[0]).save_config = smd.SaveConfig(save_interval=every)
    # wrap: the optimizer passed through hook.wrap_optimizer, as smdebug's helper_keras_fit does
    optimizer = hook.wrap_optimizer(keras.optimizers.Adam()) if wrap else "adam"
    model.compile(
        optimizer=optimizer, loss="sparse_categorical_crossentropy", metrics=["accuracy"], run_eagerly=run_eagerly
    )
    model.fit(x, y, batch_size=4, epochs=1, callbacks=[hook], verbose=0)
    hook.close()
    return create_trial(str(out))


@pytest.mark.parametrize(
    ("run_eagerly", "wrap"), [(True, False), (False, False), (True, True), (False, True)],
    ids=["eager", "graph", "eager-wrapped_optimizer", "graph-wrapped_optimizer"],
)  # fmt: skip
def test_include_regex_collection_as_smdebug(tf, tmp_path: Path, run_eagerly: bool, wrap: bool) -> None:
    """smdebug's tests/tensorflow2/test_keras.py::test_include_regex on TF >= 2.6: a collection
    defined by include_regex "dense" holds the dense layers' 4 variables; no gradients, layer
    inputs/outputs or Adam slot variables (docs/migration.md: optimizer_variables). Also with
    the optimizer passed through ``hook.wrap_optimizer`` (smdebug's test does; its wrapped
    optimizer caught no gradients in fit on TF 2.x: tests/fixtures/keras_tf212_smdebug.json)."""
    trial = _adam_fit(tmp_path / "out", ["custom_coll"], run_eagerly, regex="dense", wrap=wrap)
    names = trial.tensor_names(collection="custom_coll")
    assert len(names) == 4 and all("/weights/" in n for n in names), names
    for name in names:
        assert trial.tensor(name).value(0) is not None
    assert not [n for n in trial.tensor_names() if "momentum" in n or "velocity" in n or n.startswith("gradients/")]


def test_optimizer_slot_variables_only_when_asked_by_name(tf, tmp_path: Path) -> None:
    """optimizer_variables named in include_collections saves Adam's slots too; save_all does not."""
    asked = _adam_fit(tmp_path / "asked", ["optimizer_variables"], run_eagerly=False)
    slots = [
        n for n in asked.tensor_names(collection="optimizer_variables") if n.endswith(("momentum:0", "velocity:0"))
    ]
    assert len(slots) == 8  # momentum and velocity of 2 kernels and 2 biases
    everything = _adam_fit(tmp_path / "all", ["all"], run_eagerly=False)
    assert set(everything.tensor_names(collection="optimizer_variables")) == {
        "Adam/iteration:0",
        "Adam/learning_rate:0",
    }


def test_a_regex_collection_does_not_save_caught_values(tf, tmp_path: Path) -> None:
    """Gradients caught in fit (``gradients`` asked for, every 9 steps) are saved at the
    gradients collection's steps only, not at those of a user's collection matching "dense"
    (every 2 steps), which saves the dense layers' variables (smdebug's wrapped optimizer caught
    no gradients in fit on TF 2.x, so a regex of the user's never saved one)."""
    trial = _adam_fit(tmp_path / "out", ["custom_coll", "gradients"], False, regex="dense", wrap=True, every=2)
    kernel = next(n for n in trial.tensor_names(collection="custom_coll") if n.endswith("kernel:0"))
    grad = next(n for n in trial.tensor_names(collection="gradients") if n.endswith("kernelGrad"))
    assert trial.tensor(kernel).steps() == [0, 2, 4, 6, 8]
    assert trial.tensor(grad).steps() == [0, 9]
