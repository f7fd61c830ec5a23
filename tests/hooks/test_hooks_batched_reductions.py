"""Reductions computed in batches (several tensors per NumPy pass, on the writer thread while
the step trains) equal the one-tensor reductions the reader computes from raw values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from sagemaker_debugger_ext._exceptions import ConfigValueError
from sagemaker_debugger_ext._reductions import compute_reduction, compute_reductions, compute_reductions_many
from sagemaker_debugger_ext.hooks import TrainingContext
from sagemaker_debugger_ext.hooks._step_reductions import HAND_OVER_VALUES
from sagemaker_debugger_ext.pytorch import Hook, ReductionConfig, SaveConfig
from sagemaker_debugger_ext.trials import create_trial

OPS = [("min", False), ("max", False), ("mean", False), ("sum", False), ("l1", False), ("l2", False),
       ("min", True), ("max", True), ("mean", True), ("l2", True)]  # fmt: skip
# 8192 is NumPy's buffer size: sizes around it cross a buffer boundary inside a segment
SIZES = [1, 2, 7, 8191, 8192, 8193, 65_537, 300_000]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("batch_values", [1_000, 1 << 22])
def test_many_equals_one_by_one_exactly(dtype: type, batch_values: int) -> None:
    rng = np.random.default_rng(3)
    arrays = [(rng.standard_normal(n) * rng.uniform(1e-3, 1e3)).astype(dtype) for n in SIZES]
    arrays.append(np.array([np.nan, 1.0, -np.inf], dtype))
    table = compute_reductions_many(OPS, arrays, batch_values=batch_values)
    assert table.shape == (len(arrays), len(OPS)) and table.dtype == dtype
    for row, array in zip(table, arrays, strict=True):
        one_by_one = np.array(compute_reductions(OPS, array), dtype)
        np.testing.assert_array_equal(row, one_by_one)  # bit for bit, NaN where NaN
    assert np.isnan(table[-1, 0]) and np.isnan(table[-1, 2])  # NaN propagates as in np.min/mean


def test_many_keeps_float64_accumulators() -> None:
    """Sums and squares of big float32 values do not overflow (as for one tensor)."""
    big = np.full(1000, 3e19, np.float32)
    big[::2] = -3e19
    row = compute_reductions_many([("mean", False), ("l2", False), ("mean", True)], [big, big * 0.5])[0]
    np.testing.assert_allclose(row, [0.0, np.sqrt(1000) * 3e19, 3e19], rtol=1e-6)


@pytest.mark.parametrize(
    ("ops", "arrays", "field"),
    [
        ([("std", False)], [np.ones(3, np.float32)], "reduction"),
        ([("median", False)], [np.ones(3, np.float32)], "reduction"),
        ([("min", False)], [np.ones(3, np.float32), np.ones(3, np.float64)], "arrays[1]"),
        ([("min", False)], [np.ones(3, np.int32)], "arrays[0]"),
        ([("min", False)], [np.ones(3, np.float32), np.ones(0, np.float32)], "arrays[1]"),
    ],
)
def test_many_refuses_what_it_cannot_batch(ops: list[tuple[str, bool]], arrays: list[np.ndarray], field: str) -> None:
    with pytest.raises(ConfigValueError) as err:
        compute_reductions_many(ops, arrays)
    assert err.value.field == field
    assert field in str(err.value)


def _train(out: Path, *, background: bool, steps: int = 3) -> torch.nn.Module:
    """A model whose parameters together exceed one hand-over batch, so a step's reductions
    are handed to the writer thread in several batches while the step trains."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 128),
                                torch.nn.ReLU(), torch.nn.Linear(128, 4))  # fmt: skip
    assert sum(p.numel() for p in model.parameters()) > HAND_OVER_VALUES  # weights, then gradients: 2+ batches
    config = ReductionConfig(reductions=["min", "max", "mean", "std"], abs_reductions=["mean"], norms=["l2"],
                             save_raw_tensor=True)  # fmt: skip
    hook = Hook(out_dir=out, save_config=SaveConfig(save_interval=1), reduction_config=config,
                include_collections=["weights", "biases", "gradients"], context=TrainingContext(),
                background_writes=background)  # fmt: skip
    hook.register_module(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 64, generator=torch.Generator().manual_seed(1))
    for _ in range(steps):
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()
    hook.close()
    return model


def test_hook_reductions_equal_the_readers_from_raw_values(tmp_path: Path) -> None:
    """Every stored reduction (batched min/max/mean/abs mean/l2, one-by-one std) equals the
    reduction the reader computes from the raw value saved beside it, bit for bit."""
    _train(tmp_path / "run", background=True)
    trial = create_trial(str(tmp_path / "run"))
    names = [n for c in ("weights", "biases", "gradients") for n in trial.tensor_names(collection=c)]
    assert len(names) == 12 and trial.steps() == [0, 1, 2]  # 6 parameters, 6 gradients
    checked = 0
    for name in names:
        tensor = trial.tensor(name)
        for step in trial.steps():
            stored = tensor.reduction_values(step)
            assert set(stored) == {("min", False), ("max", False), ("mean", False), ("std", False),
                                   ("mean", True), ("l2", False)}  # fmt: skip
            raw = tensor.value(step)
            for (op, is_abs), value in stored.items():
                np.testing.assert_array_equal(value, compute_reduction(op, raw, is_abs=is_abs))
                checked += 1
    assert checked == 12 * 3 * 6


def test_background_and_synchronous_writes_store_the_same_reductions(tmp_path: Path) -> None:
    _train(tmp_path / "bg", background=True)
    _train(tmp_path / "sync", background=False)
    bg, sync = create_trial(str(tmp_path / "bg")), create_trial(str(tmp_path / "sync"))
    assert bg.tensor_names() == sync.tensor_names()
    for name in bg.tensor_names(collection="gradients"):
        for step in (0, 2):
            a, b = bg.tensor(name).reduction_values(step), sync.tensor(name).reduction_values(step)
            assert a.keys() == b.keys()
            for key in a:
                np.testing.assert_array_equal(a[key], b[key])


def test_write_records_writes_mixed_records_in_their_order(tmp_path: Path) -> None:
    """Raw records (with and without dtype or wall-time overrides), batched reductions of two
    dtypes and unbatched ones, interleaved: the step's files equal writing each record on its
    own, in the records' order."""
    from sagemaker_debugger_ext.format import StepWriter
    from sagemaker_debugger_ext.hooks._step_reductions import Reductions, write_records

    def reductions(name: str, array: np.ndarray, ops: tuple[tuple[str, bool], ...]) -> Reductions:
        return Reductions(name, array, ops, tuple(f"{name}/{op}" for op, _ in ops))

    a32, a64 = np.arange(6, dtype=np.float32), np.linspace(0, 1, 5)
    records = [
        ("w0", a32, None, None),
        ("w1", a64.reshape(5, 1), None, None),
        reductions("g0", a32, (("max", False), ("min", False))),
        reductions("g1", a64, (("max", False),)),
        ("loss", np.float32([0.5]), None, None),
        ("bits", np.arange(3, dtype=np.uint16), "bfloat16", None),
        ("late", a32, None, 1.25e9),
        ("i", np.arange(3), None, None),
        reductions("ints", np.arange(4), (("max", False),)),  # integers: not batched
    ]
    files = {}
    for how in ("write_records", "one_by_one"):
        writer = StepWriter(tmp_path / how, global_step=1, worker="worker_0", clock=lambda: 1.5e9)
        recs = [r if isinstance(r, tuple) else reductions(r.name, r.array, r.ops) for r in records]  # type: ignore[arg-type]
        if how == "write_records":
            write_records(writer, recs)
        else:
            for record in recs:
                if isinstance(record, tuple):
                    name, array, dtype, wall_time = record
                    writer.write_tensor(name, array, dtype=dtype, wall_time=wall_time)
                    continue
                values = compute_reductions(record.ops, record.array)
                for name, value in zip(record.names, values, strict=True):
                    writer.write_tensor(name, np.asarray(value).reshape(()))
        writer.close()
        files[how] = [p.read_bytes() for p in sorted((tmp_path / how).rglob("*")) if p.is_file()]
    assert len(files["write_records"]) == 2
    assert files["write_records"] == files["one_by_one"]
