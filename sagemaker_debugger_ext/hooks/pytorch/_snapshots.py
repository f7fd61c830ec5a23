"""Reductions of CPU tensors computed on the writer thread, from one copy per batch.

On the CPU, reducing a step's parameters and gradients on the training thread costs that
thread every pass over them, while the writer thread waits on another core. So a batch of
CPU tensors is copied with one ``torch.cat`` into a buffer kept from step to step (the
tensors change once the step goes on) and the writer thread reduces the copy with the NumPy
path (``_step_reductions.reduce_records``: the NumPy path's values by construction) before it
writes the step's files. The buffer goes back to the pool once reduced.

That pays only while the writer thread has a core the training leaves free: batches of more
than ``SNAPSHOT_VALUES`` values, hooks without a writer thread, a training whose torch
intra-op threads take every core the process may use, and the batches right after the
writer thread was starved (a waiting caller ran its jobs: ``BackgroundWriter.run_by_callers``)
and the batches that find an earlier one not reduced yet (the thread is behind) are reduced
in place on the training thread, where torch's own threads share the work (no copy;
``_device_reductions``). Measured on the benchmark GPT-2 (torch on 1 of 2 cores): with
the writer's core idle, 0.108-0.131 of the step against 0.131-0.159 in place; with that core
taken by other processes, 0.16-0.28 against 0.15-0.18.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import partial

import numpy as np
import torch

from ...format import BackgroundWriter
from .._step_reductions import Reductions, reduce_records

__all__ = ["SNAPSHOT_VALUES", "Snapshots"]

#: the most values of one batch copied for the writer thread (256 MiB of float32)
SNAPSHOT_VALUES = 1 << 26
#: buffers kept for the next steps (a step has a batch of parameters and one of gradients)
_KEEP = 4
_AS_FLOAT32 = frozenset({torch.bfloat16})  # NumPy has no bfloat16: its values as float32, as tensor_to_numpy


class Snapshots:
    """Copies batches of CPU tensors for the writer thread; ``copied_bytes``: bytes copied so far."""

    def __init__(self) -> None:
        self._free: list[torch.Tensor] = []  # buffers no job uses any more (given back by the writer thread)
        self.copied_bytes = 0
        self._helped = 0  # the writer's run_by_callers when last looked at
        self._submitted = 0  # batches handed to the writer thread (written by the training thread only)
        self._reduced = 0  # of those, reduced (written by the writer thread only)

    def worth_it(self, background: BackgroundWriter, values: int) -> bool:
        """Whether to copy a batch of ``values`` values for ``background``'s thread (see the
        module docstring) rather than reduce it in place."""
        helped, self._helped = self._helped, background.run_by_callers
        if helped != background.run_by_callers or self._submitted != self._reduced or values > SNAPSHOT_VALUES:
            return False  # the thread was starved since the last batch, is behind, or the batch is too big
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        return torch.get_num_threads() < cores

    def reduce_later(
        self, background: BackgroundWriter, records: Sequence[Reductions], tensors: Sequence[torch.Tensor]
    ) -> None:
        """Copy ``tensors`` (flat, one dtype, CPU) into one buffer now, and have ``background``'s
        thread fill ``records`` (one per tensor) from it before the step's files are written."""
        dtype = torch.float32 if tensors[0].dtype in _AS_FLOAT32 else tensors[0].dtype
        sizes = [t.numel() for t in tensors]
        size = sum(sizes)
        buffer = self._take(dtype, size)
        view = buffer[:size]
        torch.cat(list(tensors), out=view)
        self.copied_bytes += view.numel() * view.element_size()
        arrays = np.split(view.numpy(), np.cumsum(sizes[:-1]))
        for record, array in zip(records, arrays, strict=True):
            record.array = array
        background.submit_call(partial(self._reduce, list(records), buffer), counted=False)
        self._submitted += 1

    def _take(self, dtype: torch.dtype, size: int) -> torch.Tensor:
        for i, buffer in enumerate(self._free):
            if buffer.dtype == dtype and buffer.numel() >= size:
                return self._free.pop(i)
        return torch.empty(size, dtype=dtype)

    def _reduce(self, records: list[Reductions], buffer: torch.Tensor) -> None:
        """On the writer thread: the records' values, then the buffer back to the pool."""
        try:
            with np.errstate(all="ignore"):  # inf - inf, overflow: as the NumPy path stores them
                reduce_records(records)
        finally:
            if len(self._free) < _KEEP:
                self._free.append(buffer)
            self._reduced += 1
