"""Reductions of big values and low-precision tensors: computed in float64, so a finite tensor
never gets an infinite norm or mean (which ExplodingTensor would report)."""

from __future__ import annotations

import numpy as np
import pytest

from sagemaker_debugger_ext._reductions import compute_reduction


@pytest.mark.parametrize("op", ["l2", "mean", "std", "variance"])
def test_finite_float32_tensor_has_finite_reductions(op: str) -> None:
    big = np.full(1000, 3e19, dtype=np.float32)  # squares and sums overflow float32
    big[::2] = -3e19
    value = compute_reduction(op, big)
    assert value.dtype == np.float32
    expected = {"l2": np.sqrt(1000) * 3e19, "mean": 0.0, "std": 3e19, "variance": np.inf}[op]
    if op == "variance":  # 9e38 is above float32's max: inf is the true float32 result
        assert np.isinf(value)
    else:
        np.testing.assert_allclose(float(value), expected, rtol=1e-6, atol=1e12)


def test_abs_mean_of_large_tensor_is_not_inf() -> None:
    grads = np.full(4096, 1e36, dtype=np.float32)
    assert np.isfinite(compute_reduction("mean", grads, is_abs=True))
