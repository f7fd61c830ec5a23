"""The PyTorch hook on CUDA tensors (skipped without a CUDA device; run them with ``make gpu-check``).

Reductions-only tensors are reduced on the GPU (``_batched_reductions``: the same code as on
CPU, with CUDA kernels) and only their scalars cross to the host, without blocking, into pinned
memory; raw tensors are copied to the host. Every value is compared with the NumPy path on host
copies taken at the same time. CUDA sums in another order than NumPy (and than the CPU path):
a value stored in float32 or float16 may differ in its last bit (docs/reductions in
``_device_reductions``), so sums, means, norms and deviations are compared to one unit in the
last place of the stored dtype; min and max are exact.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from test_pytorch_device_reductions import ALL_OPS, DTYPES, SAVED_OPS, WIDTH, _numpy_path, _tensors, train_recording

from sagemaker_debugger_ext.hooks import TrainingContext
from sagemaker_debugger_ext.hooks.pytorch import _batched_reductions as _batched
from sagemaker_debugger_ext.hooks.pytorch import _fused_reductions as _fused
from sagemaker_debugger_ext.hooks.pytorch._batched_reductions import Workspace
from sagemaker_debugger_ext.hooks.pytorch._device_reductions import reduce_tensors, stored_dtype
from sagemaker_debugger_ext.pytorch import Hook, SaveConfig
from sagemaker_debugger_ext.trials import create_trial

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
]
CUDA = torch.device("cuda")


def _assert_as_numpy_path(tensors: list[torch.Tensor], table: torch.Tensor) -> None:
    """``table`` (``reduce_tensors``' result for ``tensors``, on CUDA) equals the NumPy path's
    values of each tensor's host copy, to the last place of the stored dtype."""
    assert table.device.type == "cuda" and table.dtype == torch.float64
    for tensor, row in zip(tensors, table.cpu().numpy(), strict=True):
        dtype = stored_dtype(tensor)
        assert dtype is not None
        for (op, is_abs), value, want in zip(ALL_OPS, row, _numpy_path(tensor.cpu(), ALL_OPS), strict=True):
            with np.errstate(over="ignore"):
                got = np.asarray(value).astype(dtype)
            assert got.dtype == want.dtype, (op, is_abs)
            message = f"{tensor.dtype} {tuple(tensor.shape)} {op} abs={is_abs}"
            if op in ("min", "max"):
                np.testing.assert_array_equal(got, want, err_msg=message)
            else:
                rtol = 1e-12 if dtype == np.float64 else float(np.finfo(dtype).eps)
                np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True, err_msg=message)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_reductions_equal_the_numpy_path(dtype: torch.dtype) -> None:
    """Every op of float32, float64, float16 and bfloat16 CUDA tensors with inf, NaN and
    values whose squares overflow the dtype, batched together: the result stays on the GPU."""
    tensors = [t.to(CUDA) for t in _tensors(dtype)]
    _assert_as_numpy_path(tensors, reduce_tensors(tensors, ALL_OPS))


def test_cuda_batch_of_mixed_dtypes_strides_and_float8() -> None:
    """One batch: every float dtype, a transposed tensor, a parameter, whole rows, float8."""
    gen = torch.Generator().manual_seed(3)
    tensors = [torch.randn(300, 257, generator=gen).t(), torch.nn.Parameter(torch.randn(2 * WIDTH, generator=gen))]
    tensors += [(torch.randn(WIDTH + 1, generator=gen) * 50 - 3).to(d) for d in DTYPES]
    tensors += [torch.tensor([-7.0]), torch.randn(4, WIDTH, generator=gen).to(torch.float16)]
    for name in ("float8_e5m2", "float8_e4m3fn"):
        if (fp8 := getattr(torch, name, None)) is not None:
            tensors.append((torch.randn(1000, generator=gen) * 4).to(fp8))
    tensors = [t.to(CUDA) for t in tensors]
    table = reduce_tensors(tensors, ALL_OPS)
    assert not table.requires_grad
    _assert_as_numpy_path(tensors, table)


def test_cuda_tensors_larger_than_the_workspace_are_reduced_in_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts and pieces on the GPU (``segment_reduce`` and the parallel variance there); the
    kept workspace is reused by the next batches and never holds more than ``MAX_VALUES``."""
    monkeypatch.setattr(_batched, "MAX_VALUES", 4 * WIDTH)
    gen = torch.Generator().manual_seed(11)
    ramp = torch.linspace(-4, 9, 13 * WIDTH + 29)
    with_nan = torch.randn(9 * WIDTH, generator=gen) * 2
    with_nan[7 * WIDTH + 3] = float("nan")
    wide = torch.randn(3, 9 * WIDTH + 7, generator=gen)
    tensors = [
        torch.tensor([-1.5, 2.0]),
        (ramp + torch.randn(ramp.shape, generator=gen) * 1e-2).view(-1, 1),
        with_nan,
        torch.randn(3 * WIDTH, 5, generator=gen).t(),
        wide[:, ::2],
        torch.randn(700, generator=gen),
    ]
    workspace = Workspace()
    for batch in (tensors, [-t for t in tensors], [t.to(torch.bfloat16) for t in tensors]):
        batch = [t.to(CUDA) for t in batch]
        _assert_as_numpy_path(batch, reduce_tensors(batch, ALL_OPS, workspace))
    assert set(workspace._storage) == {torch.device("cuda", torch.cuda.current_device())}
    assert max(s.numel() for s in workspace._storage.values()) <= 4 * WIDTH


def test_large_cuda_tensors_take_the_fused_kernel_and_equal_the_numpy_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tensors from ``MIN_VALUES`` values (every supported dtype, NaN, inf, a transposed one, a
    last block shorter than ``BLOCK``) are read once by the Triton kernel; a strided view with
    gaps, small tensors and float8 take the batched path; the table is in the tensors' order."""
    gen = torch.Generator().manual_seed(5)
    big = (1 << 20) + 3  # the default threshold, with a short last block
    with_nan, with_inf = torch.randn(big, generator=gen), torch.randn(5000, generator=gen) * 7
    with_nan[123_457] = float("nan")
    with_inf[17] = float("-inf")
    tensors = [
        torch.tensor([0.25, -3.0]),
        with_nan,
        (torch.randn(3 * _fused.BLOCK + 5, generator=gen) * 1e3).to(torch.float16),
        with_inf,
        torch.randn(90, 70, generator=gen).to(torch.bfloat16).t(),  # dense, transposed
        torch.randn(80, 90, generator=gen),  # with gaps once on the GPU (below): the batched path
        (torch.randn(6000, generator=gen) * 1e-3 + 5).double(),
        torch.randn(700, generator=gen),
    ]
    tensors = [t.to(CUDA) for t in tensors]
    tensors[5] = tensors[5][:, ::2]  # a copy to the GPU is dense: the gaps are made there
    monkeypatch.setattr(_fused, "MIN_VALUES", 3000)
    assert [_fused._fusable(t) for t in tensors] == [False, True, True, True, True, False, True, False]
    table = _fused.reduce_mixed(tensors, tuple(ALL_OPS))
    assert _fused._kernel() is not None and not _fused._failed  # the kernel ran, it did not fall back
    _assert_as_numpy_path(tensors, table)


def _net() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).to(CUDA)


@pytest.mark.parametrize("fused", [False, True], ids=["batched", "fused"])
def test_hook_on_cuda_reduces_on_the_gpu_and_copies_only_scalars(
    tmp_path: Path, fused: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model trained on the GPU: weights at each step's start and gradients as backward
    delivers them (before clipping changes them in place) are stored as the NumPy path
    computes them from host copies taken then; only the scalars reach the host. ``fused``:
    every tensor of 100 values or more takes the fused kernel."""
    monkeypatch.setattr(_fused, "MIN_VALUES", 100 if fused else 1 << 40)
    ops = SAVED_OPS
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(2)).to(CUDA)
    hook, expected, host_bytes = train_recording(tmp_path / "run", _net(), x)
    assert hook._writer.arenas.bytes_copied == 0
    assert host_bytes == 3 * 8 * len(ops) * 8  # 4 parameters + 4 gradients, 6 float64 each, 3 steps
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps() == [0, 1, 2]
    for (name, step), want in expected.items():
        stored = trial.tensor(name).reduction_values(step)
        for key, w in zip(ops, want, strict=True):
            if key[0] in ("min", "max"):
                np.testing.assert_array_equal(stored[key], w, err_msg=f"{name} step {step} {key}")
            else:
                np.testing.assert_allclose(stored[key], w, rtol=float(np.finfo(np.float32).eps), atol=0,
                                           err_msg=f"{name} step {step} {key}")  # fmt: skip


def test_hook_on_cuda_saves_raw_tensors_from_host_copies(tmp_path: Path) -> None:
    """Raw weights, gradients and outputs of a model on the GPU are the values at their time."""
    hook = Hook(out_dir=tmp_path / "run", save_config=SaveConfig(save_interval=1),
                include_collections=["weights", "gradients"], include_regex=["2_output_0"],
                context=TrainingContext())  # fmt: skip
    net = _net()
    hook.register_module(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(2)).to(CUDA)
    want = {}
    for step in range(2):
        want["Sequential_0.weight", step] = net[0].weight.detach().cpu().numpy().copy()
        opt.zero_grad()
        out = net(x)
        want["2_output_0", step] = out.detach().cpu().numpy().copy()
        out.square().mean().backward()
        want["gradient/Sequential_0.weight", step] = net[0].weight.grad.cpu().numpy().copy()
        opt.step()
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    for (name, step), value in want.items():
        np.testing.assert_array_equal(trial.tensor(name).value(step), value, err_msg=f"{name} step {step}")
