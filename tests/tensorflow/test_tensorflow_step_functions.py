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


def _op_counts(function: Any) -> dict[str, int]:
    """Every op in the traced graphs reachable from a Keras step function (its closures'
    ``tf.function``s and their function libraries), counted by type."""
    from collections import Counter

    counts: Counter[str] = Counter()
    todo, seen = [function], set()
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        for concrete in getattr(fn, "_list_all_concrete_functions", list)():
            graph = concrete.graph.as_graph_def()
            counts.update(node.op for node in graph.node)
            counts.update(node.op for lib in graph.library.function for node in lib.node_def)
        todo += [getattr(fn, "_python_function", None)]
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                todo.append(cell.cell_contents)
            except ValueError:  # an empty cell
                continue
        todo = [f for f in todo if callable(f)]
    return dict(counts)


def test_plain_function_is_the_model_own_graph(tf, tmp_path: Path) -> None:
    """The steps that save nothing run exactly the graph an unhooked model runs (op for op);
    the tapped variant adds the one hand-over call and the variables' reads."""
    import keras

    import sagemaker_debugger_ext.tensorflow as smd

    x, y = _data(6)

    def model() -> Any:
        keras.utils.set_random_seed(6)
        made = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(4, activation="relu", name="hidden"),
                                 keras.layers.Dense(2, name="out")])  # fmt: skip
        made.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01), loss="mse")
        return made

    own = model()
    own.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
    hooked = model()
    hook = smd.KerasHook(out_dir=str(tmp_path / "out"), save_config=smd.SaveConfig(save_interval=3),
                         include_collections=["weights", "biases", "gradients", "layers", "losses"])  # fmt: skip
    hooked.fit(x, y, batch_size=4, epochs=1, callbacks=[hook], verbose=0, shuffle=False)
    hook.close()
    _, plain, tapped = hook._step_functions["train"]
    assert hooked.train_function is plain
    expected = _op_counts(own.train_function)
    assert expected and _op_counts(plain) == expected
    extra = {op: n - expected.get(op, 0) for op, n in _op_counts(tapped).items() if n != expected.get(op, 0)}
    assert extra.get("PyFunc", 0) >= 1, extra  # the hand-over
    assert set(extra) <= {"PyFunc", "ReadVariableOp", "Const", "Identity"}, extra


def _quiet_run(tf: Any, out: Path, quiet: bool, validation: bool) -> tuple[Any, list[tuple[int, int, int]]]:
    """A fit (with validation or without: then each epoch's end closes a step of the mode
    that goes on) over a schedule of every kind (interval, start/end, listed steps, one per
    mode) and ``save_scalar`` calls at steps due for nothing (the first one lists a new
    name); with ``quiet`` False every step opens the long way (the reference)."""
    import keras

    import sagemaker_debugger_ext.tensorflow as smd

    x, y = _data(7)

    class Hook(smd.KerasHook):
        def _quiet_step(self, mode: Any) -> bool:
            return super()._quiet_step(mode) if quiet else False

    keras.utils.set_random_seed(7)
    model = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(2, name="dense")])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01), loss="mse")
    train = smd.SaveConfigMode(save_interval=4, start_step=2, end_step=11, save_steps=[1])
    config = smd.SaveConfig({smd.modes.TRAIN: train, smd.modes.EVAL: smd.SaveConfigMode(save_interval=3)})
    hook = Hook(out_dir=str(out), save_config=config, include_collections=["weights", "gradients", "layers", "losses"])
    seen: list[tuple[int, int, int]] = []

    class Watch(keras.callbacks.Callback):  # after the hook: the step each batch ran as
        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            seen.append((hook.step, hook.mode_steps[smd.modes.TRAIN], hook.mode_steps[smd.modes.GLOBAL]))
            if hook.mode_steps[smd.modes.TRAIN] in (5, 6):  # due for nothing
                hook.save_scalar("probe", float(hook.mode_steps[smd.modes.TRAIN]))

        def on_test_batch_end(self, batch: int, logs: Any = None) -> None:
            seen.append((hook.step, hook.mode_steps[smd.modes.EVAL], hook.mode_steps[smd.modes.GLOBAL]))

    validation_data = (x[:12], y[:12]) if validation else None
    model.fit(x, y, batch_size=4, epochs=2, validation_data=validation_data, callbacks=[hook, Watch()],
              verbose=0, shuffle=False)  # fmt: skip
    hook.close()
    return create_trial(str(out)), seen


@pytest.mark.parametrize("validation", [True, False], ids=["validation", "train-only"])
def test_quiet_steps_count_and_save_as_the_long_way(tf, tmp_path: Path, validation: bool) -> None:
    """Steps opened on the quiet path (nothing due, nothing pending) are numbered, and the
    run saved, exactly as when every step opens the long way: same steps per mode, same
    tensors at the same steps, same values."""
    from sagemaker_debugger_ext.modes import ModeKeys

    quick, quick_seen = _quiet_run(tf, tmp_path / "quiet", True, validation)
    slow, slow_seen = _quiet_run(tf, tmp_path / "slow", False, validation)
    assert quick_seen == slow_seen
    assert len(quick_seen) == 2 * 6 + (2 * 3 if validation else 0)  # 6 train, 3 validation batches an epoch
    assert all(global_step == step for step, _, global_step in quick_seen)
    assert [mode_step for _, mode_step, _ in quick_seen[:6]] == list(range(6))
    assert quick.steps() == slow.steps()
    assert quick.steps(mode=ModeKeys.TRAIN) == ([1, 4, 5, 6, 8] if validation else [1, 4, 5, 6, 8, 11])
    assert quick.steps(mode=ModeKeys.EVAL) == ([0, 2, 3, 5] if validation else [])  # each epoch's logs: last step
    assert sorted(quick.tensor_names()) == sorted(slow.tensor_names())
    probe = quick.tensor("scalar/probe")
    assert probe.steps(mode=ModeKeys.TRAIN) == [5, 6]
    assert [float(probe.value(s, mode=ModeKeys.TRAIN)[0]) for s in (5, 6)] == [5.0, 6.0]
    for name in quick.tensor_names():
        a, b = quick.tensor(name), slow.tensor(name)
        assert a.steps() == b.steps(), name
        for step in a.steps():
            np.testing.assert_array_equal(a.value(step), b.value(step))
