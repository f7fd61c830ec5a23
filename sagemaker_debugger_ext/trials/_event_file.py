"""One event file decoded in one pass: every frame checked, every value located, values copied in batches.

:meth:`FileDecoder.scan` walks the records of a whole event file once: each 12-byte header
is checked against its CRC (a header validated before is recognised by its bytes), each
footer must be smdebug's magic value or the payload's CRC, and each payload's value is
located with the layout cache (the bytes from ``Event.summary`` to the tensor content are
the same for one tensor at every step). A record the walk cannot take (a bad CRC, a torn
or unusual record) ends the walk or is left out: the fetcher then decodes it alone, with
the full checks and the error that names what is wrong.

A worker writes the same tensors at every step, so most event files have the layout of an
earlier one: the walk of such a file is remembered as a *template* (the byte positions
that must match: every header, footer and value prefix; of ``Event.step`` only its varint
continuation bits; ``wall_time`` not at all), and a file of the same length is checked
against it with numpy in one go. Any mismatch means a walk.

Values are copied out of the file's bytes in one batch per (dtype, size), one numpy copy
per run of evenly spaced records: one array per batch, one row per record, handed out as
views (as smdebug's reader hands out views), each row once.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._exceptions import CorruptRecordError, TruncatedRecordError
from ..format._crc import MAGIC_FOOTER
from ..format._decode import tensor_value_layout
from ..format._tfrecord import locate_record

__all__ = ["EventFile", "FileDecoder", "RecordLayout"]

_MAGIC = MAGIC_FOOTER.to_bytes(4, "little")
_CACHE_LIMIT = 4096  # entries of each layout/header cache (cleared when full: hostile files cannot grow it)
_TEMPLATE_LIMIT = 64
# A batch holds at most this many bytes (one value more if a value is bigger): below the allocator's
# threshold for memory of its own (glibc: 128 KiB), so freed batches are reused, not faulted in again.
_BATCH_BYTES = 120 << 10

#: Where one record's value is: ``(frame length, dtype, item count, shape or None for 1-D, content start)``.
RecordLayout = tuple[int, np.dtype[np.generic], int, tuple[int, ...] | None, int]
#: ``pos -> (frame length, batch, row, shape or None)``: where each value of a file goes in its batches.
Slots = dict[int, tuple[int, int, int, tuple[int, ...] | None]]


class _Plan(NamedTuple):
    """How a file's values are copied: per batch ``(dtype, count, rows, runs)``, each run
    ``(first row, rows, first content offset, distance between contents)``; and the slots."""

    batches: list[tuple[np.dtype[np.generic], int, int, list[tuple[int, int, int, int]]]]
    slots: Slots


class _Template(NamedTuple):
    records: dict[int, RecordLayout]
    positions: np.ndarray  # byte positions to compare (np.intp)
    mask: np.ndarray  # per position: 0xFF, or 0x80 for a step varint byte
    expected: bytes  # the masked bytes
    plan: _Plan
    complete: bool  # every frame's value located (none left to the general decoder)


class EventFile:
    """The bytes of one event file, its records' layouts by frame offset, and the values
    decoded ahead for the requests to come (``slots``, ``blocks``; None until asked)."""

    __slots__ = ("asked", "blocks", "complete", "data", "plan", "records", "slots")

    def __init__(
        self, data: bytes, records: dict[int, RecordLayout], plan: _Plan | None = None, complete: bool = False
    ) -> None:
        self.data = data
        self.records = records
        self.plan = plan
        self.complete = complete  # every frame walked and located: the batches hold every value of the file
        self.slots: Slots | None = None
        self.blocks: list[np.ndarray] = []
        self.asked: int | None = None  # the frame offset of the value handed out first (copied alone)


def _plan(records: dict[int, RecordLayout]) -> _Plan:
    index: dict[tuple[np.dtype[np.generic], int], int] = {}
    batches: list[tuple[np.dtype[np.generic], int, int, list[tuple[int, int, int, int]]]] = []
    slots: Slots = {}
    for pos, (flen, dtype, count, shape, content) in records.items():
        b = index.get((dtype, count))
        if b is None or batches[b][2] * count * dtype.itemsize >= _BATCH_BYTES - count * dtype.itemsize:
            b = index[(dtype, count)] = len(batches)  # a new batch: none outgrows the heap's small blocks
            batches.append((dtype, count, 0, []))
        _, _, rows, runs = batches[b]
        if runs and (runs[-1][1] == 1 or runs[-1][2] + runs[-1][1] * runs[-1][3] == content):
            row0, n, first, step = runs[-1]
            runs[-1] = (row0, n + 1, first, content - first if n == 1 else step)
        else:
            runs.append((rows, 1, content, 0))
        batches[b] = (dtype, count, rows + 1, runs)
        slots[pos] = (flen, b, rows, shape)
    return _Plan(batches, slots)


class FileDecoder:
    """The caches every event file of a trial shares: validated headers, value layouts, templates."""

    def __init__(self) -> None:
        self.headers: dict[bytes, int] = {}  # validated 12-byte record headers -> payload length
        # (content length, first 40 bytes) -> (prefix up to the content, dtype, count, shape or None, prefix length)
        self._layouts: dict[
            tuple[int, bytes], tuple[bytes, np.dtype[np.generic], int, tuple[int, ...] | None, int]
        ] = {}
        self._templates: dict[tuple[int, bytes], _Template] = {}

    def remember_header(self, header: bytes, payload_length: int) -> None:
        """Record that ``header`` passed its CRC check and announces ``payload_length`` bytes."""
        if len(self.headers) > _CACHE_LIMIT:
            self.headers.clear()
        self.headers[header] = payload_length

    def layout(
        self, data: bytes, start: int, stop: int
    ) -> tuple[np.dtype[np.generic], int, tuple[int, ...] | None, int] | None:
        """``(dtype, count, shape or None for 1-D, content start)`` of the payload ``data[start:stop]``,
        or None where the fast path does not apply (strings, bfloat16, unusual layouts, malformed)."""
        pos = start
        try:
            if data[pos] == 0x09:  # Event.wall_time: key + fixed64
                pos += 9
            if data[pos] == 0x10:  # Event.step: key + varint
                pos += 1
                while data[pos] & 0x80 and pos < stop:
                    pos += 1
                pos += 1
        except IndexError:
            return None
        if pos >= stop:
            return None
        key = (stop - pos, data[pos : pos + 40])
        known = self._layouts.get(key)
        if known is not None and data.startswith(known[0], pos):
            return known[1], known[2], known[3], pos + known[4]
        found = tensor_value_layout(data, start, stop)
        if found is None:
            return None
        if len(self._layouts) > _CACHE_LIMIT:
            self._layouts.clear()
        shape = None if found.shape == (found.n_items,) else found.shape
        self._layouts[key] = (
            data[pos : found.content_start],
            found.dtype,
            found.n_items,
            shape,
            found.content_start - pos,
        )
        return found.dtype, found.n_items, shape, found.content_start

    def scan(self, data: bytes) -> EventFile:
        """Decode the layout of every record of the event file ``data``; see the module docstring."""
        tkey = (len(data), data[:12])
        template = self._templates.get(tkey)
        if template is not None:
            seen = np.frombuffer(data, np.uint8).take(template.positions)
            np.bitwise_and(seen, template.mask, out=seen)
            if seen.tobytes() == template.expected:
                return EventFile(data, template.records, template.plan, template.complete)
        headers = self.headers
        layout = self.layout
        records: dict[int, RecordLayout] = {}
        pos, end = 0, len(data)
        frames: list[int] = []  # every frame's offset, located or not
        while pos + 16 <= end:
            plen = headers.get(data[pos : pos + 12])
            stop = pos + 12 + plen if plen is not None else -1
            if plen is None or not data.startswith(_MAGIC, stop):
                try:  # a new header (its CRC), a payload-CRC footer, or the error the fetcher will raise
                    start, stop = locate_record(data, pos)
                except (CorruptRecordError, TruncatedRecordError):
                    break
                self.remember_header(data[pos : pos + 12], stop - start)
            frames.append(pos)
            found = layout(data, pos + 12, stop)
            if found is not None:
                records[pos] = (stop + 4 - pos, *found)
            pos = stop + 4
        if pos == end and records:
            template = self._template(data, frames, records)
            if template is not None:
                if len(self._templates) >= _TEMPLATE_LIMIT:
                    self._templates.clear()
                self._templates[tkey] = template
                return EventFile(data, records, template.plan, template.complete)
        return EventFile(data, records, None, pos == end and len(frames) == len(records))

    @staticmethod
    def _template(data: bytes, frames: list[int], records: dict[int, RecordLayout]) -> _Template | None:
        """What a file must share with ``data`` byte for byte to have its frames and records: every
        frame's header and footer, every located record's value prefix (None: footers that are
        payload CRCs, which differ from file to file)."""
        positions: list[int] = []
        mask: list[int] = []
        for pos in frames:
            flen = 16 + int.from_bytes(data[pos : pos + 8], "little")
            if not data.startswith(_MAGIC, pos + flen - 4):
                return None
            p = pos + 12
            positions.extend(range(pos, p))
            positions.extend(range(pos + flen - 4, pos + flen))
            rec = records.get(pos)
            if rec is None:  # left to the general decoder: its frame only
                mask.extend([0xFF] * (len(positions) - len(mask)))
                continue
            content = rec[4]
            if data[p] == 0x09:  # Event.wall_time: its key only
                positions.append(p)
                p += 9
            if data[p] == 0x10:  # Event.step: its key, then the continuation bit of each varint byte
                positions.append(p)
                mask.extend([0xFF] * (len(positions) - len(mask)))
                p += 1
                while data[p] & 0x80:
                    positions.append(p)
                    mask.append(0x80)
                    p += 1
                positions.append(p)
                mask.append(0x80)
                p += 1
            positions.extend(range(p, content))
            mask.extend([0xFF] * (len(positions) - len(mask)))
        index = np.array(positions, dtype=np.intp)
        masks = np.array(mask, dtype=np.uint8)
        expected = np.frombuffer(data, np.uint8).take(index)
        np.bitwise_and(expected, masks, out=expected)
        return _Template(records, index, masks, expected.tobytes(), _plan(records), len(frames) == len(records))

    @staticmethod
    def materialize(file: EventFile) -> Slots:
        """Copy every located value of ``file`` out of its bytes (see the module docstring)."""
        plan = file.plan if file.plan is not None else _plan(file.records)
        data = file.data
        blocks = file.blocks
        for dtype, count, rows, runs in plan.batches:
            block = np.empty((rows, count), dtype)
            nbytes = count * dtype.itemsize
            if nbytes:
                raw = block.view(np.uint8)
                for row0, n, first, step in runs:
                    raw[row0 : row0 + n] = np.ndarray((n, nbytes), np.uint8, data, first, (step, 1))
            blocks.append(block)
        slots = file.slots = dict(plan.slots)
        if file.asked is not None:  # handed out already, on its own
            slots.pop(file.asked, None)
        return slots

    @staticmethod
    def single(file: EventFile, rec: RecordLayout) -> np.ndarray:
        """The value of one located record, copied on its own."""
        _, dtype, count, shape, content = rec
        value = np.frombuffer(file.data, dtype, count, content).copy()
        return value if shape is None else value.reshape(shape)
