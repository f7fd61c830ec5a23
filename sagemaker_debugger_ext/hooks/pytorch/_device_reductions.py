"""Reductions computed with torch on the tensor's own device; only the scalars reach the host.

When every due collection of a tensor saves reductions only (no raw tensor, no TensorBoard
histogram), the PyTorch hook does not copy the tensor to host memory: it reduces it where it
lives (CPU or CUDA), all the tensors of a batch (a step's parameters, its gradients) in a few
torch calls (``_batched_reductions``; on CUDA, each value read once by one Triton launch per
dtype, ``_fused_reductions``), keeps the results on the device as one small float64 tensor per
batch, and copies them to the host once per step (on CUDA without blocking, into pinned memory; the
hook's writer thread waits for the copy, not the training thread, which goes on queueing the
next step's kernels). The writer thread then only encodes scalars.

On CPU, where torch runs each call on the calling thread, a batch is copied on the training
thread, when its values are defined (into a buffer of its dtype, or the float64 workspace),
and converted and reduced on a worker thread (``_reduction_worker``): the step's end does not
wait for it; the hook's writer thread does, before it encodes the step's files (without a
writer thread, the step's end waits). A failure of such a reduction is raised by the hook's
next step end (:meth:`finish`) or by its ``close()``; the step's other records are written
without that batch's reductions. The step's weights and gradients (:meth:`batch` with a
``_live`` kind) may instead be read live, by the worker, with no copy on the training thread:
``_live`` decides when (after a learning window, with barriers and version checks), and a
tensor that changed before its barrier has no reductions stored at that step.

Values are those of the NumPy path (``sagemaker_debugger_ext._reductions``): float64
accumulators for sums, means, norms, products and variances (population); min and max exact;
bfloat16 and float8 tensors reduced from their values and stored as float32, float16 ones
stored as float16, float32 and float64 in their own dtype (beyond the stored dtype's range:
inf, as there). Sums are taken in another order than NumPy's, so a stored float32 value may
differ from the NumPy path's in its last bit. Tensors that do not qualify (integers,
complex, empty, devices other than CPU and CUDA) take the NumPy path.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

import numpy as np
import torch

from ...format import BackgroundWriter
from .._arrays import float_view
from .._collections import Collection
from .._device_plan import DEVICE_OPS, Ops, device_plan
from .._step import StepOutput
from .._step_reductions import Reductions
from ._batched_reductions import Workspace, reduce_tensors
from ._distributed import is_sharded
from ._fused_reductions import reduce_mixed
from ._live import GRADIENTS, LiveGuard, Read, eligible
from ._reduction_worker import HandOver, Pending, ReductionWorker, fill_records
from ._tensors import PLAIN_TENSORS, tensor_to_numpy

__all__ = ["DEVICE_OPS", "DeviceReductions", "device_plan", "reduce_tensors", "stored_dtype"]

_LOG = logging.getLogger("sagemaker_debugger_ext.hooks")
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
#: autograd's engine: callbacks queued on it run when the running backward pass ends
_ENGINE = torch.autograd.Variable._execution_engine


def stored_dtype(tensor: torch.Tensor) -> np.dtype[Any] | None:
    """The dtype the reductions of ``tensor`` are stored in, or None when ``tensor`` takes the
    NumPy path (not a float tensor, empty, or on a device without float64)."""
    if not (tensor.is_cpu or tensor.is_cuda) or not tensor.numel():
        return None
    dtype = _STORED.get(tensor.dtype)
    if dtype is None and tensor.dtype in _FLOAT8:
        return np.dtype(np.float32)  # the NumPy path takes float8 tensors as float32
    return dtype


class DeviceReductions:
    """A hook's reductions computed on the devices; :meth:`finish` fills the records' values.

    ``host_bytes``: bytes copied from the devices to the host so far (the scalars only).
    """

    #: CPU batches are reduced on the worker's thread (False: on the training thread, as on
    #: CUDA; for measurements)
    off_thread = True
    #: with the hook's writer thread, the step's CUDA copies are waited for there (False: by
    #: the step's end, on the training thread; for measurements)
    copies_on_writer = True

    def __init__(self) -> None:
        self._batching = 0
        self._kind: str | None = None  # what the enclosing batch() holds (``_live``'s kinds)
        self._step = -1  # the step of the tensors taken last (for warnings)
        self.live = LiveGuard("reductions")  # CPU weights and gradients read live (``_live``)
        self._at_backward_end = False  # a callback at the end of the running backward pass is queued
        self._error: Exception | None = None  # what that callback raised
        self._pending: dict[tuple[Any, ...], list[tuple[Reductions, torch.Tensor, np.dtype[Any]]]] = {}
        # gradients saved when the running backward pass ends, and what saves them (see defer)
        self._deferred: list[tuple[str, torch.Tensor]] = []
        self._save_grads: Callable[[list[tuple[str, torch.Tensor]]], None] | None = None
        self._done: list[tuple[list[tuple[Reductions, np.dtype[Any]]], torch.Tensor, Any]] = []
        self._workspace = Workspace()  # float64, on each device (see ``_batched_reductions``)
        self._worker: ReductionWorker | None = None  # CPU batches' reductions (made at the first)
        self._reducing: list[Pending] = []  # CPU batches handed to the worker since the last finish()
        self.host_bytes = 0
        self._plans: dict[tuple[Collection, ...], tuple[tuple[Any, ...], tuple[Ops, bool] | None]] = {}

    def take(self, name: str, value: Any, collections: Sequence[Collection], output: Callable[[], StepOutput]) -> bool:
        """Reduce ``value`` on its device when ``collections`` (all due) ask for reductions
        only and it qualifies (see the module doc), into a record of the step's ``output()``;
        returns whether it did (else the hook copies it to the host)."""
        if value.__class__ not in PLAIN_TENSORS and (not isinstance(value, torch.Tensor) or is_sharded(value)):
            return False
        plan = self._plan(collections)
        dtype = stored_dtype(value) if plan is not None else None
        if plan is None or dtype is None:
            return False
        ops, shape = plan
        out = output()
        self._step = out.step
        self.add(out.write_reductions(name, ops, tuple(value.shape) if shape else None), value, dtype)
        return True

    def _plan(self, collections: Sequence[Collection]) -> tuple[Ops, bool] | None:
        """``device_plan(collections)``, kept per collections while their reduction configs
        are the same (a hook asks for the same few sets at every step, per tensor)."""
        key = tuple(collections)
        configs = tuple([c.reduction_config for c in key])
        kept = self._plans.get(key)
        if kept is None or kept[0] != configs:
            kept = self._plans[key] = (configs, device_plan(key))
        return kept[1]

    def add(self, record: Reductions, tensor: torch.Tensor, dtype: np.dtype[Any]) -> None:
        """Reduce ``tensor`` into ``record``: now, when the enclosing :meth:`batch` ends, or,
        during a backward pass (gradients), when that pass ends, all its gradients together
        (before anything, e.g. gradient clipping, can change them in place);
        ``dtype``: the stored dtype (see :func:`stored_dtype`)."""
        key = (record.ops, tensor.device, self._kind)
        self._pending.setdefault(key, []).append((record, tensor, dtype))
        if not self._batching and not self._at_backward_end and not self._queue_at_backward_end():
            self._flush()  # not in a backward pass

    def defers(self, collections: Sequence[Collection], param: torch.Tensor) -> bool:
        """Whether the gradient of ``param``, due in ``collections``, is saved at the backward
        pass's end (:meth:`defer`): they ask for reductions only, all computable here, and it
        is not a shard (a DTensor takes the host path)."""
        return not is_sharded(param) and self._plan(collections) is not None

    def defer(self, save: Callable[[list[tuple[str, torch.Tensor]]], None], name: str, grad: torch.Tensor) -> None:
        """Hand ``(name, grad)`` to ``save`` when the running backward pass ends (now outside
        one): one call ``save([(name, grad), ...])`` with every gradient deferred until then, in
        their order, inside one :meth:`batch` (the hook's per-call work, e.g. its failure
        boundary, runs once per pass).

        A gradient that :meth:`add` takes is read at the pass's end anyway; deferring the
        hook's per-tensor work (collections, records) to that point runs it in one burst
        instead of between the backward pass's kernels, where each call ran several times
        slower (cold caches; measured on the GPT-2 of ``bench_lm``: 40 against 5 µs a
        gradient). What ``save`` raises is raised by :meth:`finish`."""
        self._save_grads = save
        self._deferred.append((name, grad))
        if not self._at_backward_end and not self._queue_at_backward_end():
            self._save_deferred()

    def _queue_at_backward_end(self) -> bool:
        """Queue :meth:`_backward_ended` on the running backward pass; False outside one."""
        try:
            _ENGINE.queue_callback(self._backward_ended)
        except RuntimeError:  # not in a backward pass
            return False
        self._at_backward_end = True
        return True

    def _save_deferred(self) -> None:
        deferred, self._deferred = self._deferred, []
        with self.batch(GRADIENTS):
            if deferred and self._save_grads is not None:
                self._save_grads(deferred)

    def _backward_ended(self) -> None:
        self._at_backward_end = False
        try:
            self._save_deferred()  # then the batch's end reduces what is pending
        except Exception as exc:  # noqa: BLE001 - never into the training's backward(): raised by finish()
            self._error = exc

    @contextmanager
    def batch(self, kind: str | None = None) -> Iterator[None]:
        """Reduce the tensors added inside together (same ops, device and dtype per batch);
        ``kind``: what they are, ``_live.WEIGHTS`` or ``GRADIENTS`` (CPU ones may be read live)."""
        self._batching += 1
        outer, self._kind = self._kind, kind
        try:
            yield
        finally:
            self._batching -= 1
            self._kind = outer
            if not self._batching:
                self._flush()

    def _flush(self) -> None:
        pending, self._pending = self._pending, {}
        for (ops, device, kind), items in pending.items():
            records = [(record, dtype) for record, _, dtype in items]
            try:
                if device.type == "cpu" and self.off_thread:  # copied now (or read live), reduced on the worker
                    worker = self._worker = self._worker or ReductionWorker()
                    tensors = [t for _, t, _ in items]
                    hand_over = self._hand_over(kind, tensors, records) if kind is not None else None
                    self._reducing.append(worker.submit(tensors, ops, records, hand_over))
                    self.host_bytes += len(items) * len(ops) * 8  # the float64 results (reach the records)
                    continue
                result = reduce_mixed([t for _, t, _ in items], ops, self._workspace)
            # What can still fail: the workspace (at most 32 MiB of float64, whatever the tensors'
            # sizes) and, for variance and std, one temporary of its size; the results and the
            # indexes are small. On CUDA that is torch.OutOfMemoryError: these tensors take the
            # NumPy path (host copies). On CPU an allocation failure is a RuntimeError, raised
            # from the step: at most a few workspaces of 32 MiB (``_reduction_worker``), so the
            # host itself is out of memory.
            except torch.OutOfMemoryError:
                _LOG.warning(
                    "no %s memory for the reductions of %d tensors: reduced from host copies", device, len(items)
                )
                for record, tensor, _ in items:
                    array, dtype = tensor_to_numpy(tensor)
                    record.array = np.array(float_view(array, dtype))  # a private copy (the tensor changes)
                continue
            event = None
            if device.type == "cuda":  # copy without blocking; finish() waits for this copy only
                host = torch.empty(result.shape, dtype=_F64, pin_memory=True)
                host.copy_(result, non_blocking=True)
                event = torch.cuda.Event()
                event.record()
                result = host
            self.host_bytes += result.numel() * result.element_size()
            self._done.append((records, result, event))

    def _hand_over(
        self, kind: str, tensors: list[torch.Tensor], records: list[tuple[Reductions, np.dtype[Any]]]
    ) -> HandOver | None:
        """How the worker hands ``tensors`` over to be read live, or None: copied now (then,
        while ``_live`` learns, watched)."""
        live = self.live
        if not live.enabled or kind in live.copy_only or not eligible(tensors):
            return None
        if not live.live(kind):
            live.watch(kind, tensors, [r.name for r, _ in records])
            return None
        label = f"step {self._step}"

        def hand_over(part: Sequence[torch.Tensor], owners: Sequence[int], read: Read) -> Any:
            return live.hand_over(kind, part, [records[i][0].name for i in owners], read, label)

        return hand_over

    @property
    def pending(self) -> bool:
        """Whether some records wait for :meth:`finish`, or a failure to raise there."""
        return bool(self._done or self._pending or self._reducing or self._deferred) or self._error is not None

    def finish(self, background: BackgroundWriter | None = None) -> None:
        """Fill every reduced record's values (waits for the device copies) and raise a
        failure of an earlier CPU reduction. With ``background`` (the hook's writer thread,
        which encodes the step's files in a job submitted after this call), a job there waits
        for the CPU batches and the CUDA copies first, so that the training thread goes on
        queueing the next step's kernels while the GPU finishes this one's; without, they are
        waited for here."""
        self._at_backward_end = False
        if self._error is not None:
            error, self._error, self._pending, self._deferred = self._error, None, {}, []
            raise error
        if self._deferred:  # a backward pass that did not end (it raised): what it delivered
            self._save_deferred()
        self._flush()
        self.live.settle()  # the step's live reads: read, and checked unchanged (before its files)
        worker = self._worker
        if self._reducing and worker is not None:
            reducing, self._reducing = self._reducing, []
            # else reduced, filled and nothing to drop already
            if any(not p.done or p.error is not None or (p.handovers and p.dropped()) for p in reducing):
                if background is not None:
                    background.submit_call(partial(_wait, worker, reducing), counted=False)
                else:
                    _wait(worker, reducing)
        done, self._done = self._done, []
        if done:
            if background is not None and self.copies_on_writer:
                background.submit_call(partial(_fill, done), counted=False)
            else:
                _fill(done)
        if worker is not None:
            worker.raise_failure()

    def close(self) -> None:
        """Finish the CPU reductions queued, stop their thread, raise a failure not raised yet."""
        self.live.close()
        if self._worker is not None:
            self._worker.close()


def _fill(done: list[tuple[list[tuple[Reductions, np.dtype[Any]]], torch.Tensor, Any]]) -> None:
    """Fill the records of the batches ``done`` from their results' host copies, each after
    its copy's event (CUDA: the copy was queued without blocking)."""
    for records, result, event in done:
        if event is not None:
            event.synchronize()
        fill_records(records, result.numpy())


def _wait(worker: ReductionWorker, reducing: list[Pending]) -> None:
    """Wait for the CPU batches ``reducing``; a failed batch's records save nothing (its
    failure is raised by the hook, see :meth:`DeviceReductions.finish`), nor those of tensors
    that changed before their live read's barrier (``_live``: settled before this runs)."""
    worker.wait(reducing)
    for pending in reducing:
        if pending.error is not None:
            for record, _ in pending.records:
                record.names, record.values = (), []
        elif pending.handovers:
            for index in pending.dropped():
                record = pending.records[index][0]
                record.names, record.values = (), []
