"""Reductions-only tensors are reduced with torch on their own device; only scalars reach the
host, and the values equal the NumPy path's (``_reductions``, what the hook stored before)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
import torch

from sagemaker_debugger_ext._reductions import ALLOWED_NORMS, ALLOWED_REDUCTIONS, compute_reductions
from sagemaker_debugger_ext.hooks import TrainingContext
from sagemaker_debugger_ext.hooks._arrays import float_view
from sagemaker_debugger_ext.hooks.pytorch import _batched_reductions as _batched
from sagemaker_debugger_ext.hooks.pytorch._batched_reductions import WIDTH, Workspace
from sagemaker_debugger_ext.hooks.pytorch._device_reductions import reduce_tensors, stored_dtype
from sagemaker_debugger_ext.hooks.pytorch._tensors import tensor_to_numpy
from sagemaker_debugger_ext.pytorch import Hook, ReductionConfig, SaveConfig
from sagemaker_debugger_ext.pytorch import modes as smd_modes
from sagemaker_debugger_ext.trials import create_trial

ALL_OPS = [(op, is_abs) for op in (*ALLOWED_REDUCTIONS, *ALLOWED_NORMS) for is_abs in (False, True)]
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _numpy_path(tensor: torch.Tensor, ops: list[tuple[str, bool]]) -> list[np.ndarray]:
    """What the hook stored before: the host copy's values reduced by ``compute_reductions``."""
    array, dtype = tensor_to_numpy(tensor)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf, as the writer thread allows
        return compute_reductions(ops, float_view(array, dtype))


def _device_path(
    tensors: list[torch.Tensor], ops: list[tuple[str, bool]], workspace: Workspace | None = None
) -> list[list[np.ndarray]]:
    table = reduce_tensors(tensors, ops, workspace).cpu().numpy()
    out = []
    for tensor, row in zip(tensors, table, strict=True):
        dtype = stored_dtype(tensor)
        assert dtype is not None
        with np.errstate(over="ignore"):
            out.append([np.asarray(v).astype(dtype) for v in row])
    return out


def _tensors(dtype: torch.dtype) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(7)
    big = 6e4 if dtype == torch.float16 else 1e30  # squares overflow float32 (float16): float64 sums
    return [
        torch.randn(300, 257, generator=gen).to(dtype),
        (torch.randn(8193, generator=gen) * 1e-3 + 0.5).to(dtype),
        torch.tensor([2.5]).to(dtype),
        torch.tensor([big, -big, big / 2]).to(dtype),
        torch.tensor([1.0, float("inf"), -2.0]).to(dtype),
        torch.tensor([float("inf"), float("-inf"), 3.0]).to(dtype),
        torch.tensor([1.0, float("nan"), -3.0]).to(dtype),
    ]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_device_reductions_equal_the_numpy_path(dtype: torch.dtype) -> None:
    """Every op (plain and abs) of float32, float64, float16 and bfloat16 tensors, with inf,
    NaN and values whose squares overflow the dtype: batched together, as the hook does."""
    tensors = _tensors(dtype)
    for tensor, got in zip(tensors, _device_path(tensors, ALL_OPS), strict=True):
        want = _numpy_path(tensor, ALL_OPS)
        for (op, is_abs), g, w in zip(ALL_OPS, got, want, strict=True):
            assert g.dtype == w.dtype, (op, is_abs)
            if dtype == torch.float64 and op not in ("min", "max"):  # float64 sums in another order
                np.testing.assert_allclose(g, w, rtol=1e-12, equal_nan=True, err_msg=f"{op} abs={is_abs}")
            else:  # float64 accumulators, stored in a narrower dtype: the same bits
                np.testing.assert_array_equal(g, w, err_msg=f"{op} abs={is_abs}")


def test_float8_tensors_are_reduced_as_float32_values() -> None:
    fp8 = getattr(torch, "float8_e4m3fn", None)
    if fp8 is None:
        pytest.skip("this torch has no float8_e4m3fn")
    tensor = (torch.randn(1000, generator=torch.Generator().manual_seed(1)) * 10).to(fp8)
    assert stored_dtype(tensor) == np.float32
    (got,) = _device_path([tensor], ALL_OPS)
    for g, w in zip(got, _numpy_path(tensor, ALL_OPS), strict=True):
        np.testing.assert_array_equal(g, w)


def _assert_equal_numpy_path(tensors: list[torch.Tensor], got: list[list[np.ndarray]]) -> None:
    for tensor, row in zip(tensors, got, strict=True):
        for (op, is_abs), g, w in zip(ALL_OPS, row, _numpy_path(tensor, ALL_OPS), strict=True):
            assert g.dtype == w.dtype, (op, is_abs)
            if tensor.dtype == torch.float64 and op not in ("min", "max"):
                np.testing.assert_allclose(g, w, rtol=1e-12, equal_nan=True, err_msg=f"{op} abs={is_abs}")
            else:
                np.testing.assert_array_equal(g, w, err_msg=f"{tensor.dtype} {tensor.shape} {op} abs={is_abs}")


def test_one_batch_of_mixed_dtypes_shapes_and_strides_equals_the_numpy_path() -> None:
    """One batch holds every float dtype, a transposed (non-contiguous) tensor, a parameter
    that requires grad, sizes that fill whole workspace rows (no padded tail) and one value."""
    gen = torch.Generator().manual_seed(3)
    tensors = [torch.randn(300, 257, generator=gen).t(), torch.nn.Parameter(torch.randn(2 * WIDTH, generator=gen))]
    tensors += [(torch.randn(WIDTH + 1, generator=gen) * 50 - 3).to(d) for d in DTYPES]
    tensors += [torch.tensor([-7.0]), torch.randn(4, WIDTH, generator=gen).to(torch.float16)]
    fp8 = getattr(torch, "float8_e5m2", None)
    if fp8 is not None:
        tensors.append((torch.randn(1000, generator=gen) * 4).to(fp8))
    table = reduce_tensors(tensors, ALL_OPS)
    assert not table.requires_grad  # no autograd graph through the parameter's copy
    _assert_equal_numpy_path(tensors, _device_path(tensors, ALL_OPS))


def test_a_batch_larger_than_the_workspace_is_reduced_in_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """More values than a workspace holds: several parts (a tensor larger than it in pieces);
    the kept workspace is reused by the next batch, whose padded tails (left over from the
    last) do not leak into its values."""
    monkeypatch.setattr(_batched, "MAX_VALUES", 4 * WIDTH)
    gen = torch.Generator().manual_seed(5)
    tensors = [torch.randn(n, generator=gen) * 3 + 1 for n in (700, 5, 3 * WIDTH, 9 * WIDTH + 17, 2, WIDTH)]
    tensors[1][2] = float("nan")
    tensors[4][0] = float("-inf")
    workspace = Workspace()
    for batch in (tensors, [-t for t in tensors], [t.abs() + 100 for t in tensors]):
        table = reduce_tensors(batch, ALL_OPS, workspace).numpy()
        with np.errstate(over="ignore"):  # products beyond float32, stored as inf (as the NumPy path)
            got = [[np.asarray(v).astype(np.float32) for v in row] for row in table]
        _assert_equal_numpy_path(batch, got)
    assert max(s.numel() for s in workspace._storage.values()) <= 4 * WIDTH


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_a_tensor_larger_than_the_workspace_is_reduced_in_pieces(
    dtype: torch.dtype, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tensors of several workspaces each (contiguous, transposed, strided with gaps, with NaN
    or inf in one piece, pieces of different means) beside small ones: every reduction equals
    the NumPy path, and no workspace (kept or not) ever holds more than ``MAX_VALUES`` values
    (before, such a tensor had a float64 workspace of its own size: 1.6 GB for 200 M values)."""
    monkeypatch.setattr(_batched, "MAX_VALUES", 4 * WIDTH)
    layouts = []
    layout = Workspace.layout

    def recorded(self: Workspace, tensors: list[torch.Tensor], staged: bool = False) -> _batched._Layout:
        layouts.append(layout(self, tensors, staged))
        return layouts[-1]

    monkeypatch.setattr(Workspace, "layout", recorded)
    gen = torch.Generator().manual_seed(11)
    ramp = torch.linspace(-4, 9, 13 * WIDTH + 29)  # each piece its own mean: the variance's cross term
    with_nan, with_inf = torch.randn(9 * WIDTH, generator=gen) * 2, torch.randn(3, 3 * WIDTH, generator=gen)
    with_nan[7 * WIDTH + 3] = float("nan")
    with_inf[2, 5] = float("inf")
    wide, narrow = torch.randn(3, 9 * WIDTH + 7, generator=gen), torch.randn(40, 200, generator=gen) * 5
    tensors = [
        torch.tensor([-1.5, 2.0]),
        (ramp + torch.randn(ramp.shape, generator=gen) * 1e-2).view(-1, 1),
        with_nan,
        torch.randn(700, generator=gen),
        with_inf,
        torch.randn(3 * WIDTH, 5, generator=gen).t(),  # no copy: the flat view of its transpose
        wide[:, ::2],  # gaps, rows larger than the workspace: split along dim 0, then along dim 1
        narrow[:, :150],  # gaps: ranges of 13 rows
        1 + torch.randn(5 * WIDTH, generator=gen) * 1e-3,  # a finite product
    ]
    tensors = [t.to(dtype) for t in tensors]
    workspace = Workspace()
    _assert_equal_numpy_path(tensors, _device_path(tensors, ALL_OPS, workspace))
    assert len(layouts) > 6
    assert max(lay.buffer.numel() for lay in layouts) <= 4 * WIDTH
    assert max(s.numel() for s in workspace._storage.values()) <= 4 * WIDTH
    pieces = _batched._pieces(tensors[5], 4 * WIDTH)  # the transposed one: slices of its memory, no copy
    assert [p.numel() for p in pieces] == [4 * WIDTH] * 3 + [3 * WIDTH]
    assert {p.untyped_storage().data_ptr() for p in pieces} == {tensors[5].untyped_storage().data_ptr()}


def test_a_workspace_made_under_inference_mode_serves_the_training_steps_after(tmp_path: Path) -> None:
    """An evaluation under ``torch.inference_mode()`` first (the workspace is made there),
    then training: the kept workspace is a normal tensor, written in place by every step."""
    config = ReductionConfig(reductions=["min", "max"], norms=["l2"])
    hook = Hook(out_dir=tmp_path / "run", save_config=SaveConfig(save_interval=1), reduction_config=config,
                include_collections=["weights"], context=TrainingContext())  # fmt: skip
    net = _net()
    hook.register_module(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(2))
    hook.set_mode(smd_modes.EVAL)
    with torch.inference_mode():
        net(x)
    hook.set_mode(smd_modes.TRAIN)
    maxima = []
    for _ in range(2):
        maxima.append(float(net[0].weight.detach().max()))
        opt.zero_grad()
        net(x).square().mean().backward()
        opt.step()
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    weight = trial.tensor("Sequential_0.weight")
    assert weight.steps(mode=smd_modes.TRAIN) == [0, 1]
    for step, want in enumerate(maxima):
        assert weight.reduction_value(step, "max", mode=smd_modes.TRAIN) == pytest.approx(want)


def test_no_memory_for_the_workspace_means_the_numpy_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The device has no room for a batch's float64 workspace (``torch.OutOfMemoryError``, as
    CUDA raises it; injected here, a real one needs a full device): the batch's tensors are
    reduced from host copies taken then, so the stored values are the NumPy path's at that time."""

    def no_room(self: Workspace, tensors: list[torch.Tensor], staged: bool = False) -> None:
        raise torch.OutOfMemoryError("injected: no room for the workspace")

    monkeypatch.setattr(Workspace, "layout", no_room)
    ops = [("min", False), ("max", False), ("mean", True), ("l2", False)]
    config = ReductionConfig(reductions=["min", "max"], abs_reductions=["mean"], norms=["l2"])
    hook = Hook(out_dir=tmp_path / "run", save_config=SaveConfig(save_interval=1), reduction_config=config,
                include_collections=["weights", "gradients"], context=TrainingContext())  # fmt: skip
    net = _net()
    hook.register_module(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(2))
    expected: dict[object, list[np.ndarray]] = {}
    for step in range(2):
        expected[step] = _numpy_path(net[0].weight.detach().clone(), ops)
        opt.zero_grad()
        net(x).square().mean().backward()
        expected["grad", step] = _numpy_path(net[0].weight.grad.clone(), ops)
        opt.step()  # changes the weights after their reductions were due
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    for step in range(2):
        for name, want in (
            ("Sequential_0.weight", expected[step]),
            ("gradient/Sequential_0.weight", expected["grad", step]),
        ):
            stored = trial.tensor(name).reduction_values(step)
            for key, w in zip(ops, want, strict=True):
                np.testing.assert_array_equal(stored[key], w, err_msg=f"{name} step {step} {key}")


def test_what_the_device_path_does_not_take() -> None:
    """Empty, integer, bool and complex tensors keep the NumPy path (NaN / empty-sum rules there)."""
    assert stored_dtype(torch.zeros(0)) is None
    assert stored_dtype(torch.zeros(3, dtype=torch.int64)) is None
    assert stored_dtype(torch.zeros(3, dtype=torch.bool)) is None
    assert stored_dtype(torch.zeros(3, dtype=torch.complex64)) is None
    assert stored_dtype(torch.zeros(3, dtype=torch.bfloat16)) == np.float32
    assert stored_dtype(torch.zeros(3, dtype=torch.float16)) == np.float16


def _net() -> torch.nn.Module:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    net.register_parameter("empty_weight", torch.nn.Parameter(torch.zeros(0)))  # no value: the NumPy path's NaN
    return net


SAVED_OPS = [("min", False), ("max", False), ("mean", False), ("std", False), ("mean", True), ("l2", False)]


def train_recording(
    out_dir: Path, net: torch.nn.Module, x: torch.Tensor, steps: int = 3
) -> tuple[Hook, dict[tuple[str, int], list[np.ndarray]], int]:
    """Train ``net`` on ``x`` with a hook saving weights, biases and gradients as the
    reductions ``SAVED_OPS``, clipping the gradients in place after each backward pass; return
    the closed hook, the NumPy path's values of host copies taken when each tensor was due
    (weights at the step's start, gradients as backward delivered them) and the bytes the
    hook copied from the tensors' device to the host."""
    config = ReductionConfig(reductions=["min", "max", "mean", "std"], abs_reductions=["mean"], norms=["l2"])
    hook = Hook(out_dir=out_dir, save_config=SaveConfig(save_interval=1), reduction_config=config,
                include_collections=["weights", "biases", "gradients"], context=TrainingContext())  # fmt: skip
    hook.register_module(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    expected: dict[tuple[str, int], list[np.ndarray]] = {}
    names = {p: f"Sequential_{n}" for n, p in net.named_parameters()}
    for step in range(steps):
        for p, name in names.items():
            expected[name, step] = _numpy_path(p.detach().clone().cpu(), SAVED_OPS)
        opt.zero_grad()
        net(x).square().mean().backward()
        for p, name in names.items():
            if p.grad is not None:
                expected[f"gradient/{name}", step] = _numpy_path(p.grad.clone().cpu(), SAVED_OPS)
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1e-3)  # changes the gradients in place
        opt.step()
    host_bytes = hook._device_reductions.host_bytes
    hook.close()
    return hook, expected, host_bytes


def test_hook_stores_device_reductions_of_weights_and_gradients_at_their_time(tmp_path: Path) -> None:
    """The hook stores reductions of the weights at the step's start and of the gradients as
    backward delivers them (before clipping changes them in place), copies only the scalars
    to the host, and stores what the NumPy path computes from host copies taken then."""
    ops = SAVED_OPS
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(2))
    hook, expected, host_bytes = train_recording(tmp_path / "run", _net(), x)
    assert hook._writer.arenas.bytes_copied == 0  # no host copy of any tensor
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps() == [0, 1, 2]
    checked = 0
    for (name, step), want in expected.items():
        tensor = trial.tensor(name)
        stored = tensor.reduction_values(step)
        assert set(stored) == set(ops), name
        for key, w in zip(ops, want, strict=True):
            np.testing.assert_array_equal(stored[key], w, err_msg=f"{name} step {step} {key}")
            checked += 1
        with pytest.raises(Exception, match="not saved|unavailable|Unavailable"):
            tensor.value(step)  # reductions only: no raw value
    assert checked == len(expected) * len(ops)
    assert np.isnan(trial.tensor("Sequential_empty_weight").reduction_value(0, "min"))  # the NumPy path's rule
    # only scalars crossed to the host: 4 non-empty parameters + 4 gradients, 6 float64 each, 3 steps
    assert host_bytes == 3 * 8 * len(ops) * 8


def test_raw_collections_keep_the_host_copies_and_count_them(tmp_path: Path) -> None:
    """A collection that saves the raw tensor still copies it (the count ``make bench`` reports)."""
    hook = Hook(out_dir=tmp_path / "run", save_config=SaveConfig(save_interval=1),
                include_collections=["weights"], context=TrainingContext())  # fmt: skip
    net = torch.nn.Linear(16, 4)
    hook.register_module(net)
    for _ in range(2):
        net(torch.zeros(2, 16)).sum().backward()
    hook.close()
    assert hook._device_reductions.host_bytes == 0
    assert hook._writer.arenas.bytes_copied == 2 * net.weight.numel() * 4


def test_a_reductions_only_step_does_not_wait_for_the_previous_files_until_a_host_copy(tmp_path: Path) -> None:
    """While the previous step's files are still being written, the next step's parameters
    are reduced on their device without waiting for them; the step's first record held in
    host memory (the loss) waits, so two steps' host copies never coexist; every step is
    stored."""
    from polling import wait_until

    config = ReductionConfig(reductions=["min", "max"], norms=["l2"])
    hook = Hook(out_dir=tmp_path / "run", save_config=SaveConfig(save_interval=1), reduction_config=config,
                include_collections=["weights", "losses"], context=TrainingContext())  # fmt: skip
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    hook.register_module(net)
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(2))
    hook.record_tensor_value("loss", net(x).sum())  # step 0 (starts the writer thread)
    gate, waiting = threading.Event(), threading.Event()

    def slow_disk() -> None:  # the writer thread is held up: step 0's files are queued behind this
        waiting.set()
        gate.wait(60)

    background = hook._writer.background
    assert background is not None
    background.submit_call(slow_disk, counted=False)
    steps: list[str] = []

    def step_one() -> None:
        out = net(x)  # starts step 1: its weights are reduced on the device
        steps.append("forward")
        hook.record_tensor_value("loss", out.sum())  # a host copy: waits for the previous files
        steps.append("loss")

    thread = threading.Thread(target=step_one)
    try:
        thread.start()
        wait_until(lambda: steps, what="step 1's forward pass while step 0's files are written")
        assert waiting.is_set() and steps == ["forward"]  # the loss waits for the files
    finally:
        gate.set()
        thread.join(60)
    assert steps == ["forward", "loss"]
    hook.record_tensor_value("loss", net(x).sum())  # step 2
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps() == [0, 1, 2]
    for step in (0, 1, 2):
        weight = net[0].weight.detach()  # SGD never ran: the weights did not change
        assert trial.tensor("Sequential_0.weight").reduction_value(step, "max") == pytest.approx(float(weight.max()))
        assert trial.tensor("loss_output_0").value(step).shape == ()
