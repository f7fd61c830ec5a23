"""Fetching tensor records: whole event files decoded in one pass (cached), ranged reads for big files."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from .._exceptions import CorruptRecordError, TruncatedRecordError
from ..format._decode import decode_tensor_value
from ..format._tfrecord import locate_record
from ..storage import LocalStorage, MemoryStorage, Storage, read_many
from ._event_file import EventFile, FileDecoder

__all__ = ["Location", "RecordFetcher"]

_WHOLE_FILE_LIMIT = 8 << 20  # local stores: read, decode and cache event files up to this size in one go
_REMOTE_WHOLE_FILE_LIMIT = 1 << 20  # S3: one GET per event file up to this size, ranged GETs above it


#: Where one record lives: ``(event file key, frame offset, frame length)``. A plain tuple,
#: not a NamedTuple: the garbage collector stops tracking plain tuples of str/int, and a
#: trial holds one per record.
Location = tuple[str, int, int]


class RecordFetcher:
    """Read and decode records for a trial.

    An event file up to 8 MiB (1 MiB on S3: one GET per file) is read whole (one read of at
    most the limit, whatever the index says), once, its
    records walked and checked in one pass (:mod:`._event_file`), and kept in a small LRU
    cache (event files never change after their atomic rename). The first value asked of a
    file is copied alone; at the second, every value of the file is copied in one batch and
    kept for the requests to come (each handed out once: a caller may change its array).
    While the caller reads files through (the last file was emptied of its values before the
    next one was opened), a file's values are copied in one batch at its first request.
    Once every value of a local file was handed out, the file is forgotten (its memory is
    reused while still in the CPU's caches; a value asked again reads and checks the file
    again); on S3, where reading it again costs a request, it stays in the cache.
    Bigger files, and files read once and evicted before reuse: one ranged read per record;
    batches of those go through a thread pool on S3.

    Args:
        storage: the trial's storage.
        cache_bytes: budget of the event-file cache.
    """

    def __init__(self, storage: Storage, *, cache_bytes: int = 64 << 20) -> None:
        self._storage = storage
        local = isinstance(storage, (LocalStorage, MemoryStorage))
        self._whole_limit = _WHOLE_FILE_LIMIT if local else _REMOTE_WHOLE_FILE_LIMIT
        self._spent: tuple[bytes, list[np.ndarray]] | None = None
        self._forget = local  # forget files once consumed where reading one again is cheap (not S3)
        self._streaming = False  # the last file opened was emptied of its values first (see _drop)
        self._cache: OrderedDict[str, EventFile] = OrderedDict()
        self._costs: dict[str, int] = {}
        self._cache_bytes = cache_bytes
        self._cached = 0
        self._evicted: set[str] = set()
        self._decoder = FileDecoder()
        self._last_key: str | None = None
        self._last_file: EventFile | None = None
        self._prev_key: str | None = None  # the file read before the last one (and its records)
        self._prev_file: EventFile | None = None
        self.file_sizes: dict[str, int] = {}  # known extent of each event file, from the index
        self._sizes: dict[str, int] = {}  # real size of each event file, where asked

    def note_extent(self, key: str, end: int) -> None:
        """Record that event file ``key`` is at least ``end`` bytes long (from the index)."""
        if end > self.file_sizes.get(key, 0):
            self.file_sizes[key] = end

    def _whole(self, key: str) -> bool:
        """Whether ``key`` is read as a whole file (small enough, not cycled out of the cache)."""
        return key not in self._evicted and self.file_sizes.get(key, 0) <= self._whole_limit

    def _file(self, key: str) -> EventFile | None:
        """The decoded event file ``key`` (read and walked at its first use), or None: read it by records."""
        if key == self._last_key:
            return self._last_file
        if key == self._prev_key:  # two files in turn (two workers' files of a step): swap, no LRU work
            self._prev_key, self._prev_file, self._last_key, self._last_file = (
                self._last_key, self._last_file, self._prev_key, self._prev_file)  # fmt: skip
            return self._last_file
        file = self._cache.get(key)
        if file is None:
            last = self._last_file
            if last is not None and (last.slots or last.slots is None):  # left with values not asked for
                self._streaming = False
            if not self._whole(key):
                # read once and evicted before reuse: the access pattern cycles through more
                # files than the cache holds, so read single records from now on
                return None
            data = self._read_whole(key)
            if data is None:
                return None
            file = self._decoder.scan(data)
            self._add(key, file, len(data))
        else:
            self._cache.move_to_end(key)
        self._prev_key, self._prev_file = self._last_key, self._last_file
        self._last_key, self._last_file = key, file
        return file

    def _read_whole(self, key: str) -> bytes | None:
        """The bytes of event file ``key``: one read of at most the whole-file limit plus one byte,
        so a file bigger than its index says is never read whole (None: read it by records)."""
        data = self._storage.read_range(key, 0, self._whole_limit + 1)
        if len(data) > self._whole_limit:
            self._evicted.add(key)
            return None
        return data

    def _add(self, key: str, file: EventFile, cost: int) -> None:
        self._cache[key] = file
        self._costs[key] = self._costs.get(key, 0) + cost
        self._cached += cost
        while self._cached > self._cache_bytes and len(self._cache) > 1:
            old_key, _ = self._cache.popitem(last=False)
            self._cached -= self._costs.pop(old_key, 0)
            self._evicted.add(old_key)
            if old_key == self._prev_key:
                self._prev_key, self._prev_file = None, None

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
        """One record on its own, every check done here (the path of records the file walk left out)."""
        key, offset, length = loc
        if pos + length > len(data):
            raise self._past_end(loc, len(data))
        try:
            start, stop = locate_record(data, pos)
        except (CorruptRecordError, TruncatedRecordError) as exc:
            path = f"{self._storage.uri.rstrip('/')}/{key}"
            msg = f"{path}: {exc}"
            raise type(exc)(msg, path=path, offset=offset) from None
        if stop + 4 - pos != length:
            msg = f"record at {key}:{offset} is {stop + 4 - pos} bytes but the index says {length}"
            raise CorruptRecordError(msg, path=key, offset=offset)
        self._decoder.remember_header(data[pos : pos + 12], stop - start)
        found = self._decoder.layout(data, start, stop)
        if found is None:
            return decode_tensor_value(data, start, stop)  # the general decoder (or what is wrong)
        dtype, count, shape, content = found
        value = np.frombuffer(data, dtype, count, content).copy()
        return value if shape is None else value.reshape(shape)

    def _from_file(self, file: EventFile, loc: Location) -> np.ndarray:
        pos, length = loc[1], loc[2]
        slots = file.slots
        if slots is not None:
            slot = slots.pop(pos, None)
            if slot is not None and slot[0] == length:
                value: np.ndarray = file.blocks[slot[1]][slot[2]]
                if not slots and file.complete and self._forget:
                    self._drop(loc[0], file)
                return value if slot[3] is None else value.reshape(slot[3])
        rec = file.records.get(pos)
        if rec is None or rec[0] != length:
            return self._decode(loc, file.data, pos)
        if slots is None and (file.asked is not None or self._streaming):  # decode all of them in one go
            slots = self._decoder.materialize(file)
            self._grow(loc[0], len(file.data))
            return self._from_file(file, loc)
        file.asked = pos
        return self._decoder.single(file, rec)

    def _drop(self, key: str, file: EventFile) -> None:
        """Forget event file ``key`` once every value decoded ahead was handed out: its bytes and
        batches go back to the allocator while they are still in the CPU's caches (the next
        file reuses them), and a value asked again reads and checks the file again."""
        self._streaming = True
        if self._cache.get(key) is file:
            del self._cache[key]
            self._cached -= self._costs.pop(key, 0)
        if self._last_file is file:
            self._last_key, self._last_file = self._prev_key, self._prev_file
            self._prev_key, self._prev_file = None, None
        elif self._prev_file is file:
            self._prev_key, self._prev_file = None, None
        # held until the next file is forgotten: its memory is then free below the heap's top for the
        # file after, instead of the top shrinking and growing at every file (pages faulted in again)
        self._spent = (file.data, file.blocks)
        file.blocks = []

    def _grow(self, key: str, cost: int) -> None:
        if key in self._costs:
            self._costs[key] += cost
            self._cached += cost

    def fetch(self, key: str, offset: int, length: int) -> np.ndarray:
        """Return the value of the record of ``length`` bytes at ``offset`` of event file ``key``."""
        file = self._last_file if key == self._last_key else self._file(key)
        if file is not None:
            slots = file.slots
            if slots is not None:  # _from_file's first case, inlined: a value decoded ahead
                slot = slots.pop(offset, None)
                if slot is not None and slot[0] == length:
                    value: np.ndarray = file.blocks[slot[1]][slot[2]]
                    if not slots and file.complete and self._forget:
                        self._drop(key, file)
                    return value if slot[3] is None else value.reshape(slot[3])
                if slot is not None:
                    return self._decode((key, offset, length), file.data, offset)  # the index disagrees: say how
            return self._from_file(file, (key, offset, length))
        loc = (key, offset, length)
        return self._decode(loc, self._ranged(loc), 0)

    def fetch_many(self, locs: Sequence[Location]) -> list[np.ndarray]:
        """Return the values at ``locs`` (files or ranges read in parallel on remote stores)."""
        keys = list(dict.fromkeys(loc[0] for loc in locs if loc[0] not in self._cache and self._whole(loc[0])))
        files: dict[str, EventFile] = {}
        if keys and not isinstance(self._storage, (LocalStorage, MemoryStorage)):
            limit = self._whole_limit
            for key, data in zip(keys, read_many(self._storage, [(k, 0, limit + 1) for k in keys]), strict=False):
                if len(data) > limit:
                    self._evicted.add(key)
                    continue
                files[key] = self._decoder.scan(data)
                self._add(key, files[key], len(data))
        out: list[np.ndarray | None] = [None] * len(locs)
        ranged: list[int] = []
        for i, loc in enumerate(locs):
            found = files.get(loc[0]) or self._file(loc[0])
            if found is None:
                ranged.append(i)
            else:
                out[i] = self._from_file(found, loc)
        if ranged:
            for i in ranged:
                loc = locs[i]
                if loc[2] > _WHOLE_FILE_LIMIT and loc[1] + loc[2] > self._size(loc[0]):
                    raise self._past_end(loc, self._size(loc[0]))
            chunks = read_many(self._storage, [locs[i] for i in ranged])
            for i, data in zip(ranged, chunks, strict=False):
                if len(data) != locs[i][2]:
                    raise self._past_end(locs[i], locs[i][1] + len(data))
                out[i] = self._decode(locs[i], data, 0)
        return out  # type: ignore[return-value]
