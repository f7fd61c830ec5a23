"""Reused memory for the private copies a saved step makes of its tensors.

A step copies every tensor it saves (the training changes them afterwards) and frees the
copies once its files are written. Fresh allocations for that cost more than the copying
(glibc returns the freed top of the heap to the system after every step and takes it back,
page by page, at the next one: figures in ``docs/hook.md``, "Measurements behind the hook's
design"). A :class:`CopyArena` is one buffer that a step's copies are packed into; the
hook's :class:`ArenaPool` hands the same arena to the next saved step once the files of
the step before are written, so a run whose steps save the same tensors allocates once.
:class:`SlotCopies` keeps each copy's own array instead (the PyTorch hook's): the i-th copy of
a step goes into the i-th array of the last step that used the arena when its shape and dtype
match, with no more Python per copy than a plain NumPy copy (measured: docs/hook.md).
"""

from __future__ import annotations

import numpy as np

__all__ = ["ArenaPool", "CopyArena", "PlainCopies", "SlotCopies"]

#: arenas up to this size are kept for the next saved step; bigger ones are freed after use
KEEP_BYTES = 512 << 20
_MIN_CHUNK = 1 << 20


class CopyArena:
    """Packs copies of numeric arrays into a few large buffers, reused after :meth:`reset`."""

    def __init__(self) -> None:
        self._chunks: list[np.ndarray] = []  # uint8 buffers; the last one is being filled
        self._used = 0  # bytes used in the last chunk
        self._total = 0  # bytes used in this step, all chunks together
        self.copied = 0  # bytes copied in this step (the tensors' values, no padding)

    @property
    def capacity(self) -> int:
        """Bytes held."""
        return sum(c.size for c in self._chunks)

    def copy(self, array: np.ndarray) -> np.ndarray:
        """A private copy of ``array`` (same dtype and shape, C order) in the arena; arrays
        whose dtype holds objects or is not a plain number get an ordinary copy."""
        if array.dtype.kind not in "biufc":
            return np.array(array, copy=True)
        view = self.slot(array)
        np.copyto(view, array, casting="no")
        return view

    def slot(self, array: np.ndarray) -> np.ndarray:
        """Room in the arena for a copy of ``array`` (a plain number dtype), not filled: the
        caller fills it later (a live read, see ``hooks/pytorch/_live_raw``)."""
        dtype = array.dtype
        nbytes = array.nbytes
        align = dtype.alignment
        start = -(-self._used // align) * align
        if not self._chunks or start + nbytes > self._chunks[-1].size:
            size = max(nbytes, _MIN_CHUNK, self._chunks[-1].size * 2 if self._chunks else 0)
            self._chunks.append(np.empty(size, np.uint8))
            start = 0
        self.copied += nbytes
        self._used = start + nbytes
        self._total += nbytes + align
        return self._chunks[-1][start : start + nbytes].view(dtype).reshape(array.shape)

    def reset(self) -> None:
        """Forget this step's copies (nothing may use them any more); when they took several
        chunks, keep one buffer big enough for all of them instead."""
        if len(self._chunks) > 1:
            self._chunks = [np.empty(self._total, np.uint8)]
        self._used = self._total = self.copied = 0


class PlainCopies(CopyArena):
    """A :class:`CopyArena` that makes ordinary NumPy copies (no buffer to reuse)."""

    def copy(self, array: np.ndarray) -> np.ndarray:
        """An ordinary private copy of ``array``."""
        self.copied += array.nbytes
        return np.array(array, copy=True)

    def slot(self, array: np.ndarray) -> np.ndarray:
        """An array like ``array``, not filled."""
        self.copied += array.nbytes
        return np.empty(array.shape, array.dtype)

    def reset(self) -> None:
        """Nothing to forget."""


class SlotCopies(CopyArena):
    """Each copy in an array of its own, kept for the same copy of the next step that uses
    this arena (after :meth:`reset`): the i-th copy reuses the i-th array when the source is
    C-contiguous and has its shape and dtype, else it is an ordinary NumPy copy (kept in that
    slot when its dtype is a plain number)."""

    def __init__(self) -> None:
        super().__init__()
        self._slots: list[np.ndarray | None] = []  # by copy index; None: not kept (not a plain number)
        self._next = 0  # the slot of this step's next copy

    @property
    def capacity(self) -> int:
        """Bytes held."""
        return sum(s.nbytes for s in self._slots if s is not None)

    def copy(self, array: np.ndarray) -> np.ndarray:
        """A private copy of ``array`` (same dtype and shape)."""
        if array.dtype.kind in "biufc" and array.flags.c_contiguous:
            room = self.slot(array)
            np.copyto(room, array, casting="no")
            return room
        self._claim(array)  # a strided source or objects: an ordinary copy (its own layout)
        copy = np.array(array, copy=True)
        self._slots[self._next - 1] = copy if copy.dtype.kind in "biufc" else None
        return copy

    def slot(self, array: np.ndarray) -> np.ndarray:
        """The array :meth:`copy` would fill with ``array`` (a plain number dtype), not filled."""
        kept = self._claim(array)
        if kept is not None and kept.shape == array.shape and kept.dtype == array.dtype:
            return kept
        room = self._slots[self._next - 1] = np.empty(array.shape, array.dtype)
        return room

    def _claim(self, array: np.ndarray) -> np.ndarray | None:
        """This step's next slot, for a copy of ``array``: the array it kept, if any."""
        i = self._next
        self._next = i + 1
        self.copied += array.nbytes
        if i == len(self._slots):
            self._slots.append(None)
        return self._slots[i]

    def reset(self) -> None:
        """Forget this step's copies (nothing may use them any more); the arrays stay."""
        self._next = self.copied = 0


class ArenaPool:
    """The arenas of one hook: taken by a saved step, given back once its files are written.

    Arenas bigger than ``keep_bytes`` are not kept (their memory goes back to the system).
    Without ``reuse`` every step gets :class:`PlainCopies`; with it, ``arena`` (a
    :class:`CopyArena` or :class:`SlotCopies`) is made when none is free.
    """

    def __init__(self, *, reuse: bool = True, keep_bytes: int = KEEP_BYTES, arena: type[CopyArena] = CopyArena) -> None:
        self.bytes_copied = 0  # bytes the given-back arenas copied, all steps together
        self._free: list[CopyArena] = []
        self._keep_bytes = keep_bytes
        self._reuse = reuse
        self._arena = arena

    def take(self) -> CopyArena:
        """A free arena (a new one when none is free)."""
        if not self._reuse:
            return PlainCopies()  # one per step: its count of copied bytes is that step's
        return self._free.pop() if self._free else self._arena()

    def give_back(self, arena: CopyArena) -> None:
        """Return ``arena`` after its copies were written (from any thread)."""
        self.bytes_copied += arena.copied
        if not self._reuse:
            return
        arena.reset()
        if arena.capacity <= self._keep_bytes:
            self._free.append(arena)
