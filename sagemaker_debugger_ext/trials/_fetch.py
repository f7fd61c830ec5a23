"""Fetching tensor records: whole small event files (cached) locally, ranged GETs on S3."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from .._exceptions import CorruptRecordError, TruncatedRecordError
from ..format._crc import MAGIC_FOOTER
from ..format._decode import decode_tensor_value, tensor_value_layout
from ..format._tfrecord import locate_record
from ..storage import LocalStorage, MemoryStorage, Storage, read_many

__all__ = ["Location", "RecordFetcher"]

_MAGIC = MAGIC_FOOTER.to_bytes(4, "little")
_WHOLE_FILE_LIMIT = 8 << 20  # read and cache event files up to this size in one go


#: Where one record lives: ``(event file key, frame offset, frame length)``. A plain tuple,
#: not a NamedTuple: the garbage collector stops tracking plain tuples of str/int, and a
#: trial holds one per record.
Location = tuple[str, int, int]


class RecordFetcher:
    """Read and decode records for a trial.

    Local (and in-memory) stores: an event file smaller than 8 MiB is read whole, once,
    and kept in a small LRU cache (event files never change after their atomic rename).
    S3 and big files: one ranged read per record; batches go through a thread pool.

    Args:
        storage: the trial's storage.
        cache_bytes: budget of the event-file cache.
    """

    def __init__(self, storage: Storage, *, cache_bytes: int = 64 << 20) -> None:
        self._storage = storage
        self._local = isinstance(storage, (LocalStorage, MemoryStorage))
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cache_bytes = cache_bytes
        self._cached = 0
        self._evicted: set[str] = set()
        # (content length, first bytes) -> (prefix, dtype, count, shape or None for 1-D, prefix length)
        self._layouts: dict[
            tuple[int, bytes], tuple[bytes, np.dtype[np.generic], int, tuple[int, ...] | None, int]
        ] = {}
        self._headers: dict[bytes, int] = {}  # validated record headers -> payload length
        self._last_key: str | None = None
        self._last_data: bytes | None = None
        self._prev_key: str | None = None  # the file read before the last one (and its bytes)
        self._prev_data: bytes | None = None
        self.file_sizes: dict[str, int] = {}  # known extent of each event file, from the index
        self._sizes: dict[str, int] = {}  # real size of each event file, where asked

    def note_extent(self, key: str, end: int) -> None:
        """Record that event file ``key`` is at least ``end`` bytes long (from the index)."""
        if end > self.file_sizes.get(key, 0):
            self.file_sizes[key] = end

    def _file_bytes(self, key: str) -> bytes | None:
        if key == self._last_key:  # consecutive reads from one file: skip the LRU bookkeeping
            return self._last_data
        if key == self._prev_key:  # two files in turn (two workers' files of a step): swap, no LRU work
            self._prev_key, self._prev_data, self._last_key, self._last_data = (
                self._last_key, self._last_data, self._prev_key, self._prev_data)  # fmt: skip
            return self._last_data
        data = self._cache.get(key)
        if data is not None:
            self._cache.move_to_end(key)
            self._prev_key, self._prev_data = self._last_key, self._last_data
            self._last_key, self._last_data = key, data
            return data
        if key in self._evicted or self.file_sizes.get(key, 0) > _WHOLE_FILE_LIMIT:
            # read once and evicted before reuse: the access pattern cycles through more
            # files than the cache holds, so read single records from now on
            return None
        data = self._storage.read(key)
        self._prev_key, self._prev_data = self._last_key, self._last_data
        self._last_key, self._last_data = key, data
        self._cache[key] = data
        self._cached += len(data)
        while self._cached > self._cache_bytes and len(self._cache) > 1:
            old_key, old = self._cache.popitem(last=False)
            self._cached -= len(old)
            self._evicted.add(old_key)
        return data

    def _size(self, key: str) -> int:
        """The real size of event file ``key`` (asked once per file)."""
        size = self._sizes.get(key)
        if size is None:
            size = self._sizes[key] = int(self._storage.size(key))  # type: ignore[attr-defined]
        return size

    def _past_end(self, loc: Location, size: int) -> TruncatedRecordError:
        key, offset, length = loc
        path = f"{self._storage.uri.rstrip('/')}/{key}"
        msg = (f"{path} is truncated: the index entry at offset {offset} with length {length} reaches past "
               f"the end of the event file ({size} bytes)")  # fmt: skip
        return TruncatedRecordError(msg, path=path, offset=offset)

    def _ranged(self, loc: Location) -> bytes:
        """Read one record with a ranged read; a length beyond the file is refused first."""
        key, offset, length = loc
        if length > _WHOLE_FILE_LIMIT and offset + length > self._size(key):
            raise self._past_end(loc, self._size(key))
        data = self._storage.read_range(key, offset, length)
        if len(data) != length:
            raise self._past_end(loc, offset + len(data))
        return data

    def _decode(self, loc: Location, data: bytes, pos: int) -> np.ndarray:
        # Fast path: a 12-byte header (length + its CRC) seen and validated before needs no
        # new CRC; smdebug's magic footer and the index's length are still checked here.
        key, offset, length = loc
        header = data[pos : pos + 12]
        plen = self._headers.get(header)
        if plen is not None:
            stop = pos + 12 + plen
            if stop + 4 - pos == length and data.startswith(_MAGIC, stop):
                return self._value(data, pos + 12, stop)
        try:
            start, stop = locate_record(data, pos)
        except (CorruptRecordError, TruncatedRecordError) as exc:
            path = f"{self._storage.uri.rstrip('/')}/{key}"
            msg = f"{path}: {exc}"
            raise type(exc)(msg, path=path, offset=offset) from None
        if stop + 4 - pos != length:
            msg = f"record at {key}:{offset} is {stop + 4 - pos} bytes but the index says {length}"
            raise CorruptRecordError(msg, path=key, offset=offset)
        if len(self._headers) > 4096:
            self._headers.clear()
        self._headers[header] = stop - start
        return self._value(data, start, stop)

    def _value(self, data: bytes, start: int, stop: int) -> np.ndarray:
        # Records of one tensor differ between steps only in wall time, step and metadata:
        # remember the bytes from Event.summary to the content (tag, dtype, shape) and, when
        # they match byte for byte, view the content directly without parsing.
        pos = start
        try:
            if data[pos] == 0x09:
                pos += 9
            if data[pos] == 0x10:
                pos += 1
                while data[pos] & 0x80 and pos < stop:
                    pos += 1
                pos += 1
        except IndexError:
            pos = stop
        if pos >= stop:
            return decode_tensor_value(data, start, stop)  # malformed: the full decoder says why
        key = (stop - pos, data[pos : pos + 40])
        known = self._layouts.get(key)
        if known is not None and data.startswith(known[0], pos):
            _, dtype, count, shape, skip = known
            value = np.frombuffer(data, dtype, count, pos + skip).copy()
            return value if shape is None else value.reshape(shape)
        layout = tensor_value_layout(data, start, stop)
        if layout is None:
            return decode_tensor_value(data, start, stop)
        if len(self._layouts) > 4096:
            self._layouts.clear()
        shape = None if layout.shape == (layout.n_items,) else layout.shape  # None: 1-D, no reshape needed
        self._layouts[key] = (
            data[pos : layout.content_start],
            layout.dtype,
            layout.n_items,
            shape,
            layout.content_start - pos,
        )
        return np.frombuffer(data, layout.dtype, layout.n_items, layout.content_start).copy().reshape(layout.shape)

    def fetch(self, loc: Location) -> np.ndarray:
        """Return the value stored at ``loc``."""
        if self._local:
            key, pos, length = loc
            data = self._last_data if key == self._last_key else self._file_bytes(key)
            if data is not None:
                if pos + length > len(data):
                    raise self._past_end(loc, len(data))
                plen = self._headers.get(data[pos : pos + 12])  # _decode's fast path, inlined
                if plen is not None and plen + 16 == length and data.startswith(_MAGIC, pos + 12 + plen):
                    return self._value(data, pos + 12, pos + 12 + plen)
                return self._decode(loc, data, pos)
        return self._decode(loc, self._ranged(loc), 0)

    def fetch_many(self, locs: Sequence[Location]) -> list[np.ndarray]:
        """Return the values at ``locs`` (ranged reads in parallel on remote stores)."""
        if self._local:
            return [self.fetch(loc) for loc in locs]
        for loc in locs:
            if loc[2] > _WHOLE_FILE_LIMIT and loc[1] + loc[2] > self._size(loc[0]):
                raise self._past_end(loc, self._size(loc[0]))
        chunks = read_many(self._storage, list(locs))
        out = []
        for loc, data in zip(locs, chunks, strict=False):
            if len(data) != loc[2]:
                raise self._past_end(loc, loc[1] + len(data))
            out.append(self._decode(loc, data, 0))
        return out
