"""Writers of a trial folder: one event+index file pair per (step, worker), collections
JSON and the end-of-job marker (docs/format.md)."""

from __future__ import annotations

import functools
import json
import os
import struct
import time
from collections.abc import Callable, Mapping, Sequence
from json.encoder import encode_basestring_ascii as _json_str
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .._exceptions import ConfigTypeError, ConfigValueError, UnsupportedDTypeError, field_error_message
from ..modes import ModeKeys
from ._background import BackgroundWriter, FileWrite
from ._closing import ClosesOnExit
from ._crc import MAGIC_FOOTER
from ._encode import (
    encode_mode_metadata,
    encode_tensor,
    numeric_record_layout,
    to_array,
    value_layout,
)
from ._files import atomic_write, atomic_write_group
from ._layout import (
    END_OF_JOB_FILE,
    check_name,
    check_step,
    collections_key,
    event_key,
    index_key,
    safe_join,
)
from ._tfrecord import frame_header
from ._wire import encode_varint as _varint

__all__ = ["StepWriter", "write_collections_file", "write_training_end"]

_FOOTER = MAGIC_FOOTER.to_bytes(4, "little")
_PACK_DOUBLE = struct.Struct("<d").pack


class StepWriter(ClosesOnExit):
    """Collect the tensors of one (global step, worker) and write them in one go.

    ``close()`` writes ``events/<G>/<G>_<worker>.tfevents`` and then
    ``index/<G//1000>/<G>_<worker>.json``, both atomically. Nothing is written when no
    tensor or shape was added. Usable as a context manager.

    Args:
        trial_root: the trial folder (created on demand).
        global_step: the global step (file names and ``Event.step``).
        worker: the worker name, e.g. ``worker_0`` (one safe path component).
        mode: the mode of the step.
        mode_step: the step within ``mode`` (defaults to ``global_step``).
        clock: the source of ``Event.wall_time``, read once: the records of one step
            share one wall time (tests pass a constant).
        background: hand the two file writes to this writer's thread instead of doing
            them in ``close()`` (the files appear after ``background.flush()``); with
            ``borrow_arrays`` the arrays must stay unchanged until then.
        borrow_arrays: keep references to the arrays given to ``write_tensor`` instead of
            copying them; the caller must not change them before ``close()``.
        uncached: write the event file uncached where the system supports it and it has at
            least ``UNCACHED_MIN_BYTES`` (see ``format._files``; the same bytes either way).

    Raises:
        ConfigValueError: a bad step or mode.
        PathEscapeError: ``worker`` is not one safe path component.
    """

    def __init__(
        self,
        trial_root: str | os.PathLike[str],
        *,
        global_step: int,
        worker: str,
        mode: ModeKeys = ModeKeys.GLOBAL,
        mode_step: int | None = None,
        clock: Callable[[], float] = time.time,
        background: BackgroundWriter | None = None,
        borrow_arrays: bool = False,
        uncached: bool = False,
    ) -> None:
        self._borrow = borrow_arrays
        self._uncached = uncached
        self._background = background
        root = os.fspath(trial_root)
        self._root_abs = _absolute_root(root) if root.startswith("/") else os.path.abspath(root)
        self._step = check_step("global_step", global_step)
        self._worker = check_name("worker", worker)
        if not isinstance(mode, ModeKeys):
            try:
                mode = ModeKeys(mode)
            except ValueError:
                msg = field_error_message("mode", "a ModeKeys member", mode)
                raise ConfigValueError(msg, field="mode", value=mode) from None
        self._mode = mode
        self._mode_step = check_step("mode_step", global_step if mode_step is None else mode_step)
        self._metadata = encode_mode_metadata(int(mode), self._mode_step)
        self._tail = self._metadata + _FOOTER
        step_field = b"\x10" + _varint(self._step) if self._step else b""
        self._prefix = b"\x09" + _PACK_DOUBLE(clock()) + step_field  # Event.wall_time, Event.step
        self._buf = bytearray()
        self._parts: list[bytes | memoryview] = []  # with borrow_arrays: headers and array views
        self._tensor_index: list[str] = []  # JSON objects, as json.dumps writes them
        self._shape_index: list[dict[str, Any]] = []
        self._offset = 0
        self._closed = False

    @property
    def event_key(self) -> str:
        """The trial-relative key of the event file this writer produces."""
        return event_key(self._step, self._worker)

    @property
    def index_key(self) -> str:
        """The trial-relative key of the index file this writer produces."""
        return index_key(self._step, self._worker)

    def write_tensor(
        self, name: str, value: object, *, dtype: str | None = None, wall_time: float | None = None
    ) -> None:
        """Add tensor ``name`` with ``value`` (an ndarray, scalar, list or array-like).

        Args:
            name: the tensor name (may contain ``/``; it is stored inside the file).
            value: the data. Scalars become shape ``(1,)`` as in smdebug.
            dtype: override the stored dtype; ``"bfloat16"`` with a uint16 array of raw bits.
            wall_time: this record's ``Event.wall_time`` instead of the step's (smdebug's
                ``save_scalar(..., timestamp=...)``).

        Raises:
            ConfigTypeError: ``name`` is not a non-empty string.
            UnsupportedDTypeError: the dtype cannot be stored.
        """
        if self._closed:
            self._check_open()
        if name.__class__ is not str or not name:
            _check_tensor_name(name)
        arr = value if isinstance(value, np.ndarray) else to_array(value)
        layout = (
            numeric_record_layout(name, arr.shape, arr.dtype, len(self._metadata))
            if dtype is None and arr.flags.c_contiguous
            else None
        )
        if layout is not None:  # the common case: nothing to encode but the cached layout
            mid, after_step, json_name = layout
            content: bytes | memoryview = _raw_bytes(arr)
        else:
            enc = encode_tensor(name, arr, dtype)
            mid, after_step = value_layout(name, enc.head, enc.size, len(self._metadata))
            content, json_name = enc.content, _json_str(name)
        prefix = self._prefix if wall_time is None else b"\x09" + _PACK_DOUBLE(float(wall_time)) + self._prefix[9:]
        payload_size = len(prefix) + after_step
        if self._borrow:  # the caller keeps the array unchanged until close(): no copy here
            self._parts += (frame_header(payload_size) + prefix + mid, content, self._tail)
        else:
            buf = self._buf
            buf += frame_header(payload_size)
            buf += prefix
            buf += mid
            buf += content  # copied now: the caller may change its array after this call
            buf += self._tail
        record_size = 16 + payload_size
        self._tensor_index.append(
            f'{{"tensorname": {json_name}, "start_idx": {self._offset}, "length": {record_size}}}'
        )
        self._offset += record_size

    def write_scalars(self, names: Sequence[str], values: np.ndarray) -> None:
        """Add one 0-d tensor per name, ``names[i]`` holding ``values[i]``: the same bytes as
        ``write_tensor(names[i], values[i:i + 1].reshape(()))`` for each, in order.

        For the many reductions a hook saves at every step: the records' bytes are a cached
        template (the names and the step's field sizes rarely change from step to step) into
        which the step's wall time, step, mode and values are copied with three NumPy
        assignments, whatever the number of records.

        Raises:
            ConfigTypeError: a name is not a non-empty string.
            ConfigValueError: ``values`` is not a 1-D array of ``len(names)`` numbers.
            UnsupportedDTypeError: the dtype cannot be stored.
        """
        if self._closed:
            self._check_open()
        if not isinstance(values, np.ndarray) or values.shape != (len(names),) or values.dtype.kind not in "biufc":
            msg = field_error_message("values", f"a 1-D numeric ndarray of {len(names)} values", values)
            raise ConfigValueError(msg, field="values", value=getattr(values, "shape", values))
        if not names:
            return
        dtype = values.dtype.newbyteorder("<") if values.dtype.byteorder == ">" else values.dtype
        template = _scalar_template(tuple(names), dtype, len(self._prefix), len(self._metadata), self._offset)
        buf = template.data.copy()
        buf[template.prefix_at] = np.frombuffer(self._prefix, np.uint8)
        buf[template.tail_at] = np.frombuffer(self._tail, np.uint8)
        buf[template.value_at] = np.ascontiguousarray(values, dtype=dtype).view(np.uint8).reshape(len(names), -1)
        if self._borrow:
            self._parts.append(memoryview(buf))  # type: ignore[arg-type]
        else:
            self._buf += memoryview(buf)  # type: ignore[arg-type]
        self._tensor_index.append(template.index_json)
        self._offset += buf.size

    def write_shape(self, name: str, shape: tuple[int, ...], *, original_name: str | None = None) -> None:
        """Record only the shape of tensor ``name`` (the index's ``shape_payload``)."""
        self._check_open()
        _check_tensor_name(name)
        dims = [int(d) for d in shape]
        self._shape_index.append({"tensorname": name, "originalname": original_name or name, "shape": dims})

    def close(self) -> None:
        """Write the event file (if any tensor) and then the index file (if anything)."""
        if self._closed:
            return
        self._closed = True
        if not self._tensor_index and not self._shape_index:
            return
        # byte-identical to json.dumps({"meta": {"mode": ..., "mode_step": ..., "event_file_name": ...},
        # "tensor_payload": [...], "shape_payload": [...]}) (json's own encoders, without its dispatch)
        meta = f'{{"mode": {_json_str(self._mode.name)}, "mode_step": {int.__repr__(self._mode_step)}'
        writes: list[FileWrite] = []
        if self._tensor_index:
            ekey = self.event_key
            writes.append((self._path(ekey), self._parts if self._borrow else self._buf, True, self._uncached))
            meta += f', "event_file_name": {_json_str(ekey)}'
        shapes = json.dumps(self._shape_index) if self._shape_index else "[]"
        text = f'{{"meta": {meta}}}, "tensor_payload": [{", ".join(self._tensor_index)}], "shape_payload": {shapes}}}'
        writes.append((self._path(self.index_key), text.encode(), False, False))
        self._buf = bytearray()
        self._parts = []
        if self._background is not None:  # one hand-over for both files, in this order
            self._background.submit_group(writes)
        else:
            atomic_write_group(writes)

    def _path(self, key: str) -> str:
        # step and worker are validated in __init__, so keys built from them stay inside root
        return os.path.join(self._root_abs, key)

    def _check_open(self) -> None:
        if self._closed:
            msg = f"StepWriter for step {self._step} ({self._worker}) is closed"
            raise ConfigValueError(msg, field="StepWriter", value=self._step)


class _ScalarTemplate(NamedTuple):
    """The bytes of a run of 0-d records with the per-step fields left out, and where they go."""

    data: np.ndarray  # uint8, the records with zeros for the step's fields and the values
    prefix_at: np.ndarray  # (records, len(prefix)) positions of Event.wall_time and Event.step
    tail_at: np.ndarray  # (records, len(tail)) positions of the mode metadata and the footer
    value_at: np.ndarray  # (records, itemsize) positions of the values' bytes
    index_json: str  # the run's index entries, joined as close() joins them


@functools.lru_cache(maxsize=32)
def _scalar_template(
    names: tuple[str, ...], dtype: np.dtype[Any], prefix_size: int, metadata_size: int, offset: int
) -> _ScalarTemplate:
    """Build the template of ``StepWriter.write_scalars`` (cached: a hook saves the same
    reductions at every step, at the same offset of its step's file)."""
    parts: list[bytes] = []
    prefix_at, tail_at, value_at, entries = [], [], [], []
    tail_size = metadata_size + len(_FOOTER)
    position = 0
    for name in names:
        _check_tensor_name(name)
        layout = numeric_record_layout(name, (), dtype, metadata_size)
        if layout is None:
            msg = f"dtype {dtype} cannot be written as a plain numeric record"
            raise UnsupportedDTypeError(msg)
        mid, after_step, json_name = layout
        payload_size = prefix_size + after_step
        header = frame_header(payload_size)
        prefix_at.append(position + len(header))
        value_at.append(prefix_at[-1] + prefix_size + len(mid))
        tail_at.append(value_at[-1] + dtype.itemsize)
        parts += (header, bytes(prefix_size), mid, bytes(dtype.itemsize), bytes(tail_size))
        record_size = 16 + payload_size
        entries.append(f'{{"tensorname": {json_name}, "start_idx": {offset + position}, "length": {record_size}}}')
        position += record_size

    def positions(starts: list[int], size: int) -> np.ndarray:
        return np.asarray(starts, np.intp)[:, None] + np.arange(size, dtype=np.intp)

    data = np.frombuffer(b"".join(parts), np.uint8).copy()
    return _ScalarTemplate(data, positions(prefix_at, prefix_size), positions(tail_at, tail_size),
                           positions(value_at, dtype.itemsize), ", ".join(entries))  # fmt: skip


@functools.lru_cache(maxsize=64)
def _absolute_root(root: str) -> str:
    """``os.path.abspath`` of an absolute path (cached: a hook writes under one root; relative
    paths are not cached, the working folder may change)."""
    return os.path.abspath(root)


def _raw_bytes(arr: np.ndarray) -> memoryview:
    """The bytes of the C-contiguous ``arr``, as a view: the buffer protocol's (a third of the time
    of numpy's reshape and view); numpy's where a buffer cannot give them (dtypes it does not export
    such as bfloat16, zero-size arrays of more than one dimension)."""
    try:
        return memoryview(arr).cast("B")  # type: ignore[arg-type]
    except (TypeError, ValueError, NotImplementedError):
        return memoryview(arr.reshape(-1).view(np.uint8))  # type: ignore[arg-type]


def _check_tensor_name(name: object) -> None:
    if not isinstance(name, str) or not name:
        msg = field_error_message("name", "a non-empty str", name)
        raise ConfigTypeError(msg, field="name", value=name)


def write_collections_file(
    trial_root: str | os.PathLike[str],
    worker: str,
    collections: Mapping[str, Any],
    num_workers: int,
    meta: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``collections/000000000/<worker>_collections.json`` atomically.

    Args:
        trial_root: the trial folder.
        worker: the worker name (one safe path component).
        collections: ``{name: collection dict}`` as in the collections file (docs/format.md) (the value of the
            ``collections`` key); a mapping that already has ``collections``/``_meta`` keys
            is taken as the whole document and its ``num_workers`` replaced.
        num_workers: the number of workers of the job (``_meta.num_workers``).
        meta: other ``_meta`` keys to keep (smdebug's ``CollectionManager.update_meta``).

    Returns:
        The path written.
    """
    check_name("worker", worker)
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
        msg = field_error_message("num_workers", "an int >= 1", num_workers)
        raise ConfigValueError(msg, field="num_workers", value=num_workers)
    body = dict(collections.get("collections", {})) if "collections" in collections else dict(collections)
    doc = {"collections": body, "_meta": {**(meta or {}), "num_workers": num_workers}}
    path = safe_join(trial_root, collections_key(worker))
    atomic_write(path, json.dumps(doc).encode())
    return path


def write_training_end(trial_root: str | os.PathLike[str]) -> Path:
    """Create the empty ``training_job_end.ts`` marker in ``trial_root`` (atomically)."""
    path = safe_join(trial_root, END_OF_JOB_FILE)
    atomic_write(path, b"")
    return path
