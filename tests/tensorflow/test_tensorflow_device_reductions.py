"""Reductions-only Keras values reduced with TensorFlow inside the traced step (issue 32 item 2):
only scalars cross to the host, and the values equal the NumPy path's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sagemaker_debugger_ext._reductions import ALLOWED_NORMS, ALLOWED_REDUCTIONS, compute_reductions
from sagemaker_debugger_ext.exceptions import TensorUnavailableForStep
from sagemaker_debugger_ext.trials import create_trial

ALL_OPS = tuple((op, is_abs) for op in (*ALLOWED_REDUCTIONS, *ALLOWED_NORMS) for is_abs in (False, True))


def _values(dtype: str) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    big = 6e4 if dtype == "float16" else 1e30  # squares overflow float32 (float16): float64 sums
    return [
        rng.normal(size=(300, 257)),
        rng.normal(size=8193) * 1e-3 + 0.5,
        np.array([2.5]),
        np.array([big, -big, big / 2]),
        np.array([1.0, np.inf, -2.0]),
        np.array([np.inf, -np.inf, 3.0]),
        np.array([1.0, np.nan, -3.0]),
    ]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_graph_reductions_equal_the_numpy_path(tf: Any, dtype: str) -> None:
    """Every op (plain and abs) of float32, float64, float16 and bfloat16 tensors with inf, NaN
    and values whose squares overflow the dtype, reduced in a traced function, batched."""
    from sagemaker_debugger_ext.hooks.tensorflow._device_reductions import reduce_tensors, stored_dtype

    tensors = [tf.cast(tf.constant(v), getattr(tf, dtype)) for v in _values(dtype)]
    table = tf.function(lambda *ts: reduce_tensors(ts, ALL_OPS))(*tensors).numpy()
    for tensor, row in zip(tensors, table, strict=True):
        stored = stored_dtype(tensor)
        assert stored == (np.float32 if dtype == "bfloat16" else np.dtype(dtype))
        host = tensor.numpy().astype(np.float32) if dtype == "bfloat16" else tensor.numpy()  # the hook's host copy
        with np.errstate(invalid="ignore", over="ignore"):
            want = compute_reductions(ALL_OPS, host)
            got = [np.asarray(v).astype(stored) for v in row]
        for (op, is_abs), g, w in zip(ALL_OPS, got, want, strict=True):
            assert g.dtype == w.dtype, (op, is_abs)
            if dtype == "float64" and op not in ("min", "max"):  # float64 sums in another order
                np.testing.assert_allclose(g, w, rtol=1e-12, equal_nan=True, err_msg=f"{op} abs={is_abs}")
            else:  # float64 accumulators, stored in a narrower dtype: the same bits
                np.testing.assert_array_equal(g, w, err_msg=f"{op} abs={is_abs}")


def test_what_the_graph_path_does_not_take(tf: Any) -> None:
    """Empty tensors, sizes unknown at tracing, integers and bools keep the NumPy path."""
    from sagemaker_debugger_ext.hooks.tensorflow._device_reductions import stored_dtype

    assert stored_dtype(tf.zeros((0, 3))) is None
    assert stored_dtype(tf.zeros(3, tf.int64)) is None
    assert stored_dtype(tf.zeros(3, tf.bool)) is None
    seen: list[object] = []

    def traced(x: Any) -> Any:
        seen.append(stored_dtype(x))
        return x

    tf.function(traced, input_signature=[tf.TensorSpec([None, 3])]).get_concrete_function()
    assert seen == [None]


def _fit(out: Path, save_raw: bool) -> Any:
    import keras

    import sagemaker_debugger_ext.tensorflow as smd

    rng = np.random.default_rng(1)
    x = rng.normal(size=(32, 6)).astype("float32")
    y = (x[:, :3] > 0).astype("float32")
    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(64, activation="relu", name="hidden"),
                              keras.layers.Dense(32, name="half", dtype="float16"),
                              keras.layers.Dense(3, name="logits")])  # fmt: skip
    config = smd.ReductionConfig(reductions=["min", "max", "mean", "std", "variance", "sum", "prod"],
                                 abs_reductions=["max", "mean"], norms=["l1", "l2"], save_raw_tensor=save_raw)  # fmt: skip
    hook = smd.KerasHook(out_dir=str(out), save_config=smd.SaveConfig(save_interval=2), reduction_config=config,
                         include_collections=["weights", "biases", "gradients", "losses"])  # fmt: skip
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss="mse")
    model.fit(x, y, batch_size=8, epochs=2, callbacks=[hook], verbose=0, shuffle=False)
    hook.close()
    return create_trial(str(out)), hook.handed_over_bytes


def test_keras_fit_stores_graph_reductions_equal_to_the_numpy_path(tf: Any, tmp_path: Path) -> None:
    """Weights (float32 and float16) and gradients of reductions-only collections: no tensor
    is stored, only reductions, equal to those the NumPy path stores from host copies."""
    (graph, graph_bytes), (host, host_bytes) = _fit(tmp_path / "graph", False), _fit(tmp_path / "host", True)
    names = graph.tensor_names(collection="weights") + graph.tensor_names(collection="gradients")
    assert names == host.tensor_names(collection="weights") + host.tensor_names(collection="gradients")
    assert any("half" in n for n in names) and any(n.startswith("gradients/") for n in names)
    assert graph.steps() == host.steps()
    # only scalars reach the host: per saved step 11 float64 reductions of 12 tensors, plus the
    # replica number and the optimizer's iteration and learning rate (not reductions-only)
    assert graph_bytes <= 4 * (11 * 8 * 12 + 64) and host_bytes > 10 * graph_bytes, (graph_bytes, host_bytes)
    for name in names:
        g, h = graph.tensor(name), host.tensor(name)
        assert g.steps() == h.steps() == [0, 2, 4, 6], name
        for step in g.steps():
            with pytest.raises(TensorUnavailableForStep):
                g.value(step)
            got, want = g.reduction_values(step), h.reduction_values(step)
            assert sorted(got) == sorted(want) and len(got) == 11, (name, step)
            for key, value in want.items():
                assert got[key].dtype == value.dtype, (name, step, key)
                # TensorFlow's threads flush subnormal results to zero (the documented tolerance)
                tiny = np.finfo(value.dtype).tiny
                np.testing.assert_allclose(got[key], value, rtol=0, atol=tiny, err_msg=f"{name} {step} {key}")
                if abs(value) >= tiny:
                    np.testing.assert_array_equal(got[key], value, err_msg=f"{name} {step} {key}")
    assert graph.tensor("loss").value(2).shape == (1,)  # a scalar collection keeps its value
