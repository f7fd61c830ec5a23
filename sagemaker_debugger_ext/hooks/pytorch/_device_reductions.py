"""Reductions computed with torch on the tensor's own device; only the scalars reach the host.

When every due collection of a tensor saves reductions only (no raw tensor, no TensorBoard
histogram), the PyTorch hook does not copy the tensor to host memory: it reduces it where it
lives, several tensors per call where it can (one float64 copy of a batch by ``torch.cat``,
``torch._foreach_norm`` over it), keeps the results on the device as one small float64
tensor per batch, and copies them to the host once per step (on CUDA without blocking, into
pinned memory; the step's end waits for the copy only). The writer thread then only encodes
scalars.

Values are those of the NumPy path (``sagemaker_debugger_ext._reductions``): float64
accumulators for sums, means, norms, products and variances (population); min and max exact;
bfloat16 and float8 tensors reduced from their values and stored as float32, float16 ones
stored as float16, float32 and float64 in their own dtype (beyond the stored dtype's range:
inf, as there). Sums are taken in another order than NumPy's, so a stored float32 value may
differ from the NumPy path's in its last bit. Tensors that do not qualify (integers,
complex, empty, devices other than CPU and CUDA) take the NumPy path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch

from .._collections import Collection
from .._device_plan import DEVICE_OPS, derivation, device_plan
from .._step import StepOutput
from .._step_reductions import Reductions
from ._distributed import is_sharded

__all__ = ["CHUNK_VALUES", "DEVICE_OPS", "DeviceReductions", "device_plan", "reduce_tensors", "stored_dtype"]

_F64 = torch.float64
_FLOAT8: frozenset[torch.dtype] = frozenset(
    d for n in dir(torch) if n.startswith("float8_") and isinstance(d := getattr(torch, n), torch.dtype)
)
_STORED: dict[torch.dtype, np.dtype[Any]] = {
    torch.float32: np.dtype(np.float32),
    torch.float64: np.dtype(np.float64),
    torch.float16: np.dtype(np.float16),
    torch.bfloat16: np.dtype(np.float32),  # the NumPy path reduces bf16 values as float32
}
_DEVICES = frozenset({"cpu", "cuda"})
#: autograd's engine: callbacks queued on it run when the running backward pass ends
_ENGINE = torch.autograd.Variable._execution_engine


def stored_dtype(tensor: torch.Tensor) -> np.dtype[Any] | None:
    """The dtype the reductions of ``tensor`` are stored in, or None when ``tensor`` takes the
    NumPy path (not a float tensor, empty, or on a device without float64)."""
    if tensor.device.type not in _DEVICES or not tensor.numel():
        return None
    dtype = _STORED.get(tensor.dtype)
    if dtype is None and tensor.dtype in _FLOAT8:
        return np.dtype(np.float32)  # the NumPy path takes float8 tensors as float32
    return dtype


#: most values of a batch copied into one float64 buffer at a time (32 MiB; on the CPU kept for
#: the next batches: a fresh buffer costs more than the copy; a bigger tensor gets one of its own)
CHUNK_VALUES = 1 << 22


def reduce_tensors(
    tensors: Sequence[torch.Tensor],
    ops: Sequence[tuple[str, bool]],
    workspace: dict[torch.device, torch.Tensor] | None = None,
) -> torch.Tensor:
    """The reductions ``ops`` (``(op, abs)``) of each of ``tensors`` (non-empty floats, one
    device) as a ``(len(tensors), len(ops))`` float64 tensor on that device.

    The tensors are copied into one float64 buffer (``torch.cat``, a chunk of about
    ``CHUNK_VALUES`` values at a time), so the float64 sums take no per-tensor conversion and
    the absolute values are taken in place, once; then one call per tensor and quantity
    (``aminmax``, ``sum``, ...) and one ``_foreach_norm`` for the L2 norms; no host transfer.
    ``workspace``: the buffer of each device, kept from call to call (made when missing).
    """
    flat = [(t.float() if t.dtype in _FLOAT8 else t).detach().reshape(-1) for t in tensors]
    plan = [derivation(op, is_abs) for op, is_abs in ops]
    names = {name for _, name in plan}
    cache: dict[str, torch.Tensor] = {}
    if names <= {"min", "max"}:  # no float64 values needed
        cache.update(_minmax(flat, ""))
    else:
        workspace = {} if workspace is None else workspace
        parts = [_quantities(chunk, names, workspace) for chunk in _chunks(flat)]
        cache.update({name: torch.cat([p[name] for p in parts]) for name in names})
    sizes = torch.tensor([t.numel() for t in flat], dtype=_F64).to(flat[0].device)
    columns = []
    for how, name in plan:
        value = cache[name]
        if how == "mean":
            value = value / sizes
        columns.append(torch.sqrt(value) if how == "sqrt" else value)
    return torch.stack(columns, dim=1)


def _chunks(flat: list[torch.Tensor]) -> Iterator[list[torch.Tensor]]:
    """``flat`` in consecutive groups of at most ``CHUNK_VALUES`` values (or one tensor)."""
    chunk: list[torch.Tensor] = []
    size = 0
    for tensor in flat:
        if chunk and size + tensor.numel() > CHUNK_VALUES:
            yield chunk
            chunk, size = [], 0
        chunk.append(tensor)
        size += tensor.numel()
    yield chunk


def _minmax(values: Sequence[torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    pairs = torch.stack([torch.stack(torch.aminmax(t)) for t in values]).to(_F64)
    return {prefix + "min": pairs[:, 0], prefix + "max": pairs[:, 1]}


def _quantities(
    flat: list[torch.Tensor], names: set[str], workspace: dict[torch.device, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """The base quantities ``names`` (see :func:`derivation`) of each of ``flat``, from one
    float64 copy of them all (made absolute in place for the ``abs_`` ones)."""
    size, device = sum(t.numel() for t in flat), flat[0].device
    if size > CHUNK_VALUES or device.type != "cpu":  # one big tensor; CUDA's allocator keeps its memory
        buffer = torch.empty(size, dtype=_F64, device=device)
    else:
        if device not in workspace:
            workspace[device] = torch.empty(CHUNK_VALUES, dtype=_F64, device=device)
        buffer = workspace[device][:size]
    torch.cat(flat, out=buffer)
    views = buffer.split([t.numel() for t in flat])
    out: dict[str, torch.Tensor] = {}
    for prefix in ("", "abs_"):
        if prefix:
            if not any(n.startswith(prefix) for n in names):
                break
            buffer.abs_()  # the views see it
        if prefix + "min" in names or prefix + "max" in names:
            out.update(_minmax(flat if not prefix else views, prefix))
        if prefix + "sum" in names:
            out[prefix + "sum"] = torch.stack([v.sum() for v in views])
        if prefix + "prod" in names:
            out[prefix + "prod"] = torch.stack([v.prod() for v in views])
        if prefix + "variance" in names:  # population, as numpy's
            out[prefix + "variance"] = torch.stack([torch.var(v, correction=0) for v in views])
        if not prefix and "l2" in names:
            out["l2"] = torch.stack(torch._foreach_norm(views, 2))
    return out


class DeviceReductions:
    """A hook's reductions computed on the devices; :meth:`finish` fills the records' values.

    ``host_bytes``: bytes copied from the devices to the host so far (the scalars only).
    """

    def __init__(self) -> None:
        self._batching = 0
        self._at_backward_end = False  # a callback at the end of the running backward pass is queued
        self._error: Exception | None = None  # what that callback raised
        self._pending: dict[tuple[Any, ...], list[tuple[Reductions, torch.Tensor, np.dtype[Any]]]] = {}
        self._done: list[tuple[list[tuple[Reductions, np.dtype[Any]]], torch.Tensor, Any]] = []
        self.host_bytes = 0
        self._workspace: dict[torch.device, torch.Tensor] = {}  # reduce_tensors' float64 buffers

    def take(self, name: str, value: Any, collections: Sequence[Collection], output: Callable[[], StepOutput]) -> bool:
        """Reduce ``value`` on its device when ``collections`` (all due) ask for reductions
        only and it qualifies (see the module doc), into a record of the step's ``output()``;
        returns whether it did (else the hook copies it to the host)."""
        if not isinstance(value, torch.Tensor) or is_sharded(value):
            return False
        plan = device_plan(collections)
        dtype = stored_dtype(value) if plan is not None else None
        if plan is None or dtype is None:
            return False
        ops, shape = plan
        self.add(output().write_reductions(name, ops, tuple(value.shape) if shape else None), value, dtype)
        return True

    def add(self, record: Reductions, tensor: torch.Tensor, dtype: np.dtype[Any]) -> None:
        """Reduce ``tensor`` into ``record``: now, when the enclosing :meth:`batch` ends, or,
        during a backward pass (gradients), when that pass ends, all its gradients together
        (before anything, e.g. gradient clipping, can change them in place);
        ``dtype``: the stored dtype (see :func:`stored_dtype`)."""
        key = (record.ops, tensor.device, tensor.dtype)
        self._pending.setdefault(key, []).append((record, tensor, dtype))
        if self._batching or self._at_backward_end:
            return
        try:
            _ENGINE.queue_callback(self._backward_ended)
        except RuntimeError:  # not in a backward pass
            self._flush()
        else:
            self._at_backward_end = True

    def _backward_ended(self) -> None:
        self._at_backward_end = False
        try:
            self._flush()
        except Exception as exc:  # noqa: BLE001 - never into the training's backward(): raised by finish()
            self._error = exc

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Reduce the tensors added inside together (same ops, device and dtype per batch)."""
        self._batching += 1
        try:
            yield
        finally:
            self._batching -= 1
            if not self._batching:
                self._flush()

    def _flush(self) -> None:
        pending, self._pending = self._pending, {}
        for (ops, device, _), items in pending.items():
            result = reduce_tensors([t for _, t, _ in items], ops, self._workspace)
            event = None
            if device.type == "cuda":  # copy without blocking; finish() waits for this copy only
                host = torch.empty(result.shape, dtype=_F64, pin_memory=True)
                host.copy_(result, non_blocking=True)
                event = torch.cuda.Event()
                event.record()
                result = host
            self.host_bytes += result.numel() * result.element_size()
            self._done.append(([(record, dtype) for record, _, dtype in items], result, event))

    @property
    def pending(self) -> bool:
        """Whether some records wait for :meth:`finish`."""
        return bool(self._done or self._pending)

    def finish(self) -> None:
        """Fill every reduced record's values (waits for the device copies)."""
        self._at_backward_end = False
        if self._error is not None:
            error, self._error, self._pending = self._error, None, {}
            raise error
        self._flush()
        done, self._done = self._done, []
        for records, result, event in done:
            if event is not None:
                event.synchronize()
            table = result.numpy()
            with np.errstate(over="ignore"):
                for (record, dtype), row in zip(records, table, strict=True):
                    record.values = row.astype(dtype)
