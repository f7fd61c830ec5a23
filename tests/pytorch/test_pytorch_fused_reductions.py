"""The fused one-pass reductions of large CUDA tensors (``_fused_reductions``) without a GPU:
the kernel under Triton's interpreter where Triton is installed, and the fallbacks to the
batched path everywhere (no Triton, a kernel that cannot compile). On a GPU the same path is
tested against the NumPy path in ``test_pytorch_cuda.py``."""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from sagemaker_debugger_ext.hooks.pytorch import _fused_reductions as _fused
from sagemaker_debugger_ext.hooks.pytorch._batched_reductions import reduce_tensors

REPO = Path(__file__).resolve().parents[2]
#: Triton for the interpreter test (``make venv`` installs it there, outside .venv: see the Makefile)
TRITON_SITE = REPO / ".triton"
OPS = tuple((op, a) for op in ("min", "max", "mean", "std", "variance", "sum", "l1", "l2") for a in (False, True))

_INTERPRETED = r"""
import numpy as np, torch
from sagemaker_debugger_ext.hooks.pytorch import _fused_reductions as F
from sagemaker_debugger_ext.hooks.pytorch._batched_reductions import reduce_tensors
OPS = tuple((op, a) for op in ("min", "max", "mean", "std", "variance", "sum", "l1", "l2") for a in (False, True))
F.DEVICE, F.MIN_VALUES = "cpu", 3000
gen = torch.Generator().manual_seed(3)
nan, inf = torch.randn(5000, generator=gen) * 3 + 1, torch.randn(4 * F.BLOCK + 1, generator=gen)
nan[4321], inf[7] = float("nan"), float("inf")
tensors = [torch.tensor([2.0, -1.0]), nan, inf, torch.randn(70, 60, generator=gen).to(torch.bfloat16).t(),
           (torch.randn(3001, generator=gen) * 1e4).to(torch.float16), torch.randn(3100, generator=gen).double() * 1e5,
           torch.randn(90, 80, generator=gen)[:, ::2], torch.randn(600, generator=gen)]
assert [F._fusable(t) for t in tensors] == [False, True, True, True, True, True, False, False]
def check(batch):
    got = F.reduce_mixed(batch, OPS).numpy()
    assert F._kernel() is not None and not F._failed, F._failed
    np.testing.assert_allclose(got, reduce_tensors(batch, OPS).numpy(), rtol=1e-12, equal_nan=True)
check(tensors)
check(tensors[::-1])  # float64 first: the launches (one per dtype) are not in the batch's order
again = [t if i == 6 else t * 2 - 1 for i, t in enumerate(tensors)]  # the gapped view kept (a copy has no gaps)
check(again)  # the same plan, new addresses: read from there, not from the last batch's
assert len(F._PLANS) == 2 and len(F._PLANS[next(iter(F._PLANS))]._addresses) == 2
print("same")
"""


@pytest.mark.skipif(
    importlib.util.find_spec("triton") is None and not (TRITON_SITE / "triton").is_dir(),
    reason="Triton is not installed (make venv puts it in .triton)",
)
def test_the_kernel_under_tritons_interpreter_equals_the_batched_path() -> None:
    """Every base quantity of large tensors (NaN, inf, bfloat16, float16, float64, a short last
    block, a transposed view) equals the batched path's, to float64 rounding; small tensors and
    a strided view with gaps keep the batched path, in the tensors' order, also when the
    launches (one per dtype) take them in another; a batch of the same shapes at new addresses
    is read from there."""
    env = {
        **os.environ,
        "TRITON_INTERPRET": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH"), str(TRITON_SITE)])),
    }
    done = subprocess.run([sys.executable, "-W", "ignore::RuntimeWarning", "-c", _INTERPRETED], env=env,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "same", done.stderr[-3000:]


def _tensors() -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(1)
    return [torch.randn(4000, generator=gen), torch.tensor([1.0, 2.0]), torch.randn(50, 90, generator=gen).t()]


def test_cpu_tensors_and_products_keep_the_batched_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel is never asked for CPU tensors or for products (``prod`` is not fused)."""

    def no_kernel() -> Any:
        raise AssertionError("the fused kernel was asked for")

    monkeypatch.setattr(_fused, "_kernel", no_kernel)
    monkeypatch.setattr(_fused, "MIN_VALUES", 10)
    tensors = _tensors()
    torch.testing.assert_close(_fused.reduce_mixed(tensors, OPS), reduce_tensors(tensors, OPS), equal_nan=True)
    monkeypatch.setattr(_fused, "DEVICE", "cpu")
    ops = (*OPS, ("prod", False))
    torch.testing.assert_close(_fused.reduce_mixed(tensors, ops), reduce_tensors(tensors, ops), equal_nan=True)


class _Uncompilable:
    """What the kernel's launcher does where the kernel cannot be built (a driver or compiler error)."""

    calls = 0

    def __call__(self) -> Any:
        def launch(*args: Any, **kwargs: Any) -> None:
            _Uncompilable.calls += 1
            raise RuntimeError("injected: PTX assembly aborted")

        return launch


def test_a_kernel_that_cannot_run_means_the_batched_path_from_then_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The first failure is logged once, the batch is reduced by the batched path, and the
    kernel is not tried again (the training never sees Triton's error)."""
    monkeypatch.setattr(_fused, "DEVICE", "cpu")
    monkeypatch.setattr(_fused, "MIN_VALUES", 10)
    monkeypatch.setattr(_fused, "_kernel", _Uncompilable())
    monkeypatch.setattr(_Uncompilable, "calls", 0)
    monkeypatch.setattr(_fused, "_failed", [])
    tensors = _tensors()
    with caplog.at_level(logging.WARNING, logger="sagemaker_debugger_ext.hooks"):
        for _ in range(2):
            torch.testing.assert_close(_fused.reduce_mixed(tensors, OPS), reduce_tensors(tensors, OPS), equal_nan=True)
    assert _Uncompilable.calls == 1
    assert [r.getMessage() for r in caplog.records if "fused" in r.getMessage()] == [
        "fused CUDA reductions unavailable (RuntimeError: injected: PTX assembly aborted): "
        "batched reductions from now on"
    ]


def test_without_triton_large_tensors_keep_the_batched_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Triton (``_kernel()`` is None): the batched path, nothing recorded as a failure."""
    monkeypatch.setattr(_fused, "DEVICE", "cpu")
    monkeypatch.setattr(_fused, "MIN_VALUES", 10)
    monkeypatch.setattr(_fused, "_kernel", lambda: None)
    monkeypatch.setattr(_fused, "_failed", [])
    tensors = _tensors()
    torch.testing.assert_close(_fused.reduce_mixed(tensors, OPS), reduce_tensors(tensors, OPS), equal_nan=True)
    assert _fused._failed == []
