"""The passes over a workspace's rows in chunks (``_row_passes``): on the CPU a part's rows
are reduced a chunk at a time (kept in cache); the values are the same bits as one pass over
the whole workspace, and equal to the NumPy path's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from test_pytorch_device_reductions import ALL_OPS, DTYPES, _numpy_path

from sagemaker_debugger_ext.hooks.pytorch import _batched_reductions as _batched
from sagemaker_debugger_ext.hooks.pytorch import _row_passes
from sagemaker_debugger_ext.hooks.pytorch._batched_reductions import WIDTH, Workspace, reduce_tensors
from sagemaker_debugger_ext.hooks.pytorch._device_reductions import stored_dtype

#: every op but the variance's (which takes the whole part as one chunk)
CHUNKED_OPS = [(op, is_abs) for op, is_abs in ALL_OPS if op not in ("std", "variance")]


def _tensors(dtype: torch.dtype) -> list[torch.Tensor]:
    """Tensors across chunk boundaries (3 rows a chunk): NaN and inf in later chunks, padded
    tails in every chunk, one value, values whose squares overflow the dtype, a transposed one."""
    gen = torch.Generator().manual_seed(21)
    big = 6e4 if dtype == torch.float16 else 1e30
    with_nan, with_inf = torch.randn(7 * WIDTH + 9, generator=gen), torch.randn(5, WIDTH + 3, generator=gen) * 4
    with_nan[6 * WIDTH + 1] = float("nan")
    with_inf[4, 2] = float("-inf")
    tensors = [
        torch.tensor([-2.5]),
        with_nan,
        torch.randn(2 * WIDTH + 1, generator=gen) * 1e-3 + 0.5,  # a tensor's tail in the next chunk
        torch.tensor([big, -big, big / 2] * 400),
        with_inf,
        torch.randn(3 * WIDTH, 7, generator=gen).t(),
        torch.randn(WIDTH, generator=gen) - 3,  # no padded tail
        1 + torch.randn(4 * WIDTH + 5, generator=gen) * 1e-3,  # a finite product
    ]
    return [t.to(dtype) for t in tensors]


def _assert_numpy_path(tensors: list[torch.Tensor], ops: list[tuple[str, bool]], table: torch.Tensor) -> None:
    """``table``'s values, in each tensor's stored dtype, equal the NumPy path's (float64: to
    1e-12, its sums taken in another order)."""
    for tensor, row in zip(tensors, table.numpy(), strict=True):
        dtype = stored_dtype(tensor)
        assert dtype is not None
        for (op, is_abs), value, want in zip(ops, row, _numpy_path(tensor, ops), strict=True):
            with np.errstate(over="ignore"):  # beyond the stored dtype: inf, as the NumPy path
                got = np.asarray(value).astype(dtype)
            what = f"{tensor.dtype} {tensor.shape} {op} abs={is_abs}"
            if tensor.dtype == torch.float64 and op not in ("min", "max"):
                np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True, err_msg=what)
            else:
                np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("staged", [True, False], ids=["staged", "in-place"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("ops", [CHUNKED_OPS, ALL_OPS], ids=["chunked", "with-variance"])
def test_rows_in_chunks_give_the_bits_of_one_pass_and_the_numpy_path(
    ops: list[tuple[str, bool]], dtype: torch.dtype, staged: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch reduced 3 rows at a time (through a staging buffer, as the worker does, or in
    place in the workspace) equals, bit for bit, the same batch in one chunk, and the NumPy
    path's values; with a tensor larger than the workspace (pieces in several parts)."""
    tensors = _tensors(dtype)
    whole = reduce_tensors(tensors, ops, Workspace(), staged=staged)
    monkeypatch.setattr(_row_passes, "CHUNK_ROWS", 3)
    workspace = Workspace()
    chunked = reduce_tensors(tensors, ops, workspace, staged=staged)
    spans = [len(layout.chunks) for layout in workspace._layouts.values()]
    assert max(spans) > 3  # the rows were taken in chunks (the variance's pass: in one)
    assert (workspace._layouts[next(iter(workspace._layouts))].stage is not None) == (staged and dtype != torch.float64)
    np.testing.assert_array_equal(chunked.numpy(), whole.numpy())
    _assert_numpy_path(tensors, ops, chunked)
    monkeypatch.setattr(_batched, "MAX_VALUES", 8 * WIDTH)  # 7 * WIDTH + 9 values: in pieces too
    in_parts = reduce_tensors(tensors, ops, Workspace(), staged=staged)
    _assert_numpy_path(tensors, ops, in_parts)


def test_the_chunks_split_the_padded_tails_by_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each chunk's tail positions are its own rows' (relative to its first row), and together
    they are the layout's."""
    sizes = [3, 2 * WIDTH + 1, WIDTH, 5 * WIDTH - 2, 1]
    layout = Workspace().layout([torch.zeros(n) for n in sizes])
    rows = layout.buffer.shape[0]
    pad = layout.pad.tolist()
    spans = _row_passes.chunks(pad, rows, torch.device("cpu"), layout.pad)
    assert len(spans) == 1  # fewer rows than CHUNK_ROWS: one chunk, the layout's own tails
    assert spans[0][2] is layout.pad
    monkeypatch.setattr(_row_passes, "CHUNK_ROWS", 2)
    spans = _row_passes.chunks(pad, rows, torch.device("cpu"), layout.pad)
    assert [(start, end) for start, end, _, _ in spans] == [(0, 2), (2, 4), (4, 6), (6, 8), (8, 10), (10, 11)]
    got = [p + start * WIDTH for start, _, local, _ in spans for p in local.tolist()]
    assert got == pad
    for start, end, local, part in spans:
        assert all(0 <= p < (end - start) * WIDTH for p in local.tolist())
        assert pad[part] == [p + start * WIDTH for p in local.tolist()]


#: what the usual part asks for (the default reductions and norms), and subsets of it
SWEPT_OPS = [
    [("min", False), ("max", False), ("mean", False), ("mean", True), ("l2", False)],
    [("max", False)],
    [("min", False), ("l2", False)],
    [("mean", True)],
    [("mean", False), ("l2", True)],
]


@pytest.mark.parametrize("chunk_rows", [3, _row_passes.CHUNK_ROWS], ids=["3-rows", "default"])
@pytest.mark.parametrize("ops", SWEPT_OPS, ids=lambda ops: "-".join(f"{'abs_' * a}{o}" for o, a in ops))
def test_the_usual_float32_part_is_swept_in_one_compiled_call_with_the_same_bits(
    ops: list[tuple[str, bool]], chunk_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A float32 part staged as the worker stages it, asking for min, max, sums, sums of
    absolute values or of squares, is reduced by the TorchScript sweep: the same bits as the
    same sweep run as Python (where TorchScript is missing) and as the passes in place in the
    float64 workspace (the general path), and the NumPy path's values; also in pieces."""
    monkeypatch.setattr(_row_passes, "CHUNK_ROWS", chunk_rows)
    tensors = _tensors(torch.float32)
    assert isinstance(_row_passes._compiled_sweep(), torch.jit.ScriptFunction)
    workspace = Workspace()
    swept = reduce_tensors(tensors, ops, workspace, staged=True)
    assert all(layout.stage is not None for layout in workspace._layouts.values())
    general = reduce_tensors(tensors, ops, Workspace(), staged=False)
    np.testing.assert_array_equal(swept.numpy(), general.numpy())
    _assert_numpy_path(tensors, ops, swept)
    monkeypatch.setattr(_row_passes, "_compiled_sweep", lambda: _row_passes._sweep)
    np.testing.assert_array_equal(reduce_tensors(tensors, ops, Workspace(), staged=True).numpy(), swept.numpy())
    monkeypatch.setattr(_batched, "MAX_VALUES", 8 * WIDTH)  # 7 * WIDTH + 9 values: in pieces too
    _assert_numpy_path(tensors, ops, reduce_tensors(tensors, ops, Workspace(), staged=True))


def test_compiling_the_sweep_warns_nobody() -> None:
    """TorchScript's deprecation warning (torch >= 2.10) is not shown to the training's user."""
    _row_passes._compiled_sweep.cache_clear()
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        table = reduce_tensors([torch.arange(5.0)], [("max", False), ("l2", False)], staged=True)
    assert [str(w.message) for w in shown] == []
    np.testing.assert_array_equal(table.numpy(), [[4.0, np.sqrt(30.0)]])
