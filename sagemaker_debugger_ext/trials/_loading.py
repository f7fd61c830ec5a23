"""Loading a trial: collections files, incremental index refresh, step completeness.

:class:`TrialLoader` holds what was read and reads more; :class:`~._trial.Trial` composes one
and adds the queries.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import NamedTuple

from .._exceptions import StorageNotFoundError
from ..exceptions import IndexReaderException, MissingCollectionFiles
from ..format._in_process import flush_writers_under
from ..format._layout import END_OF_JOB_FILE, parse_collections_key, parse_index_key
from ..modes import ModeKeys
from ..storage import LocalStorage, Storage, read_many
from ._collections import Collection, parse_collections_file
from ._fetch import RecordFetcher
from ._index import REDUCTIONS_PREFIX, IndexFile, Payloads, parse_index, split_reduction_name
from ._tensor import StepRecords, TensorSteps, WorkerRecord

__all__ = ["TrialLoader"]

_PAYLOAD_MAPS_LIMIT = 64
_NO_SHAPES: Mapping[str, tuple[int, ...]] = MappingProxyType({})


class _Payload(NamedTuple):
    """An index's ``tensor_payload`` entries as maps (shared by the steps with the same entries)."""

    tensors: list[tuple[str, int, int]]  # the entries, as parsed
    locs: dict[str, tuple[int, int]]  # tensor name -> (frame offset, frame length)
    reductions: dict[str, dict[tuple[str, bool], tuple[int, int]]]  # tensor -> (op, abs) -> (offset, length)
    names: tuple[str, ...]  # the tensors named, in order (a reduction names its tensor)
    extent: int  # the end of the last frame


_LOG = logging.getLogger("sagemaker_debugger_ext.trials")


class TrialLoader:
    """What a trial has read so far (collections, index entries, step completeness) and the
    methods that read more of it. A :class:`~._trial.Trial` holds one and answers queries
    from its state.

    Args:
        storage: where the trial lives.
        range_steps: ``(begin, end)``: only global steps ``begin <= s < end`` are loaded.
        poll_interval_s: pause between polls while waiting.
        wait_timeout_s: the longest the wait for collections files lasts.
        window: pending incomplete steps tolerated before the older half is declared complete.
        clock, sleep: time sources.
    """

    def __init__(
        self,
        storage: Storage,
        *,
        range_steps: tuple[int, ...] | None,
        poll_interval_s: float,
        wait_timeout_s: float,
        window: int,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
    ) -> None:
        self._storage = storage
        self.path = storage.uri
        self.range_steps = range_steps
        self.poll_interval_s = poll_interval_s
        self.wait_timeout_s = wait_timeout_s
        self._window = window
        self._clock = clock
        self._sleep = sleep
        self.dynamic_refresh = True
        self.loaded_all_steps = False
        self.last_complete_step = -1
        self.num_workers = 1
        self._fetcher = RecordFetcher(storage)
        self._collections: dict[str, Collection] = {}
        self._collection_keys: set[str] = set()
        self._workers: set[str] = set()
        self._tensors: dict[str, TensorSteps] = {}  # tensor name -> its steps (Tensor objects view these)
        self._by_mode: dict[int, dict[str, dict[int, StepRecords]]] = {}  # mode -> name -> _tensors[name][mode]
        # modes are plain ints internally (IntEnum hashing is slow in hot dict lookups)
        self._global_to_mode: dict[int, tuple[int, int]] = {}
        self._mode_to_global: dict[int, dict[int, int]] = {}
        self._mode_tensors: dict[int, set[str]] = {}
        self._seen_index: set[str] = set()
        self.last_index_key: str | None = None  # the newest index file loaded (smdebug's last_index_token)
        self._step_sources: dict[int, str] = {}  # global step -> the index file that defined it
        self._payloads: Payloads = {}  # index payload text -> its checked entries (see parse_index)
        self._payload_maps: dict[int, _Payload] = {}  # id(entries list) -> its maps (see _payload)
        self._step_records: dict[int, StepRecords] = {}  # global step -> every worker's record of it

    def training_has_ended(self) -> bool:
        """Whether ``training_job_end.ts`` exists (the job finished writing)."""
        return self._storage.exists(END_OF_JOB_FILE)

    def _refresh_collections(self) -> None:
        for key in self._storage.list("collections/"):
            worker = parse_collections_key(key)
            if worker is None or key in self._collection_keys:
                continue
            colls, num_workers = parse_collections_file(self._storage.read(key), key)
            if not self._collection_keys:
                self.num_workers = num_workers
            for cname, coll in colls.items():
                self._collections[cname] = self._collections[cname].merged(coll) if cname in self._collections else coll
            self._collection_keys.add(key)
            self._workers.add(worker)

    def load(self) -> None:
        """Wait (up to ``wait_timeout_s``) for every worker's collections file, then refresh.

        Raises:
            StorageNotFoundError: a local folder or a bucket that does not exist.
            MissingCollectionFiles: the job ended, or the wait ran out, without them.
        """
        if isinstance(self._storage, LocalStorage):  # a hook of this process writing here: its finished steps
            flush_writers_under(self._storage.root)
        if isinstance(self._storage, LocalStorage) and not self._storage.exists(""):
            msg = f"trial path {self.path} does not exist"
            raise StorageNotFoundError(msg, uri=self.path)
        if not isinstance(self._storage, LocalStorage):
            self._storage.exists("")  # raises StorageNotFoundError for a missing bucket
        deadline = self._clock() + self.wait_timeout_s
        while True:
            ended = self.training_has_ended()
            self._refresh_collections()
            have = len(self._collection_keys)
            if have and have >= self.num_workers:
                break
            if ended:
                msg = (f"training has ended but {have} of {max(self.num_workers, 1)} collections files "
                       f"exist under {self.path.rstrip('/')}/collections/")  # fmt: skip
                raise MissingCollectionFiles(msg)
            remaining = deadline - self._clock()
            if remaining <= 0:
                msg = (f"no complete set of collections files appeared under {self.path} within "
                       f"{self.wait_timeout_s:g} s ({have} of {self.num_workers}); is the path right?")  # fmt: skip
                raise MissingCollectionFiles(msg)
            self._sleep(min(self.poll_interval_s, remaining))
        self.refresh()

    def _list_start_after(self) -> str | None:
        first = self.last_complete_step + 1
        if self.range_steps is not None:
            first = max(first, self.range_steps[0])
        if first <= 0:
            return None
        return f"index/{first // 1000:09d}/{first:012d}"

    def refresh(self) -> None:
        """Read index files written since the last refresh (no-op once all steps are loaded)."""
        if self.loaded_all_steps:
            return
        if isinstance(self._storage, LocalStorage):  # a hook of this process writing here: its finished steps
            flush_writers_under(self._storage.root)
        ended = self.training_has_ended()
        if ended or len(self._collection_keys) < self.num_workers:
            self._refresh_collections()
        new: list[tuple[str, int, str]] = []
        for key in self._storage.list("index/", self._list_start_after()):
            if key in self._seen_index:
                continue
            parsed = parse_index_key(key)
            if parsed is None:
                self._seen_index.add(key)
                if key.endswith(".json"):
                    _LOG.warning(
                        "ignoring %s/%s: not an index file name the writer produces "
                        "(index/<step//1000:09d>/<step:012d>_<worker>.json)",
                        self.path.rstrip("/"),
                        key,
                    )
                continue
            step, worker = parsed
            if self.range_steps is not None and not self.range_steps[0] <= step < self.range_steps[1]:
                self._seen_index.add(key)
                continue
            new.append((key, step, worker))
        if new:
            blobs = read_many(self._storage, [k for k, _, _ in new])
            for (key, step, worker), data in zip(new, blobs, strict=False):
                self._add_index(parse_index(data, key, step, worker, self._payloads), key)
                self._seen_index.add(key)
            self._update_last_complete(s for _, s, _ in new)
            self.last_index_key = max([k for k, _, _ in new] + ([self.last_index_key] if self.last_index_key else []))
        if ended:
            self.loaded_all_steps = True
            if self._global_to_mode:
                self.last_complete_step = max(self.last_complete_step, max(self._global_to_mode))

    def maybe_refresh(self) -> None:
        """Refresh unless refreshing is off or every step is loaded."""
        if self.dynamic_refresh and not self.loaded_all_steps:
            self.refresh()

    def _check_steps(self, idx: IndexFile, key: str) -> None:
        """Refuse an index whose (mode, mode_step) contradicts another index file's."""
        sources = self._step_sources
        mode, mode_step, step = int(idx.mode), idx.mode_step, idx.step
        known = self._global_to_mode.get(step)
        if known is not None and known != (mode, mode_step):
            msg = (f"index files {sources.get(step)!r} and {key!r} of {self.path} disagree about global step "
                   f"{step}: ({ModeKeys(known[0]).name}, {known[1]}) vs ({idx.mode.name}, {mode_step})")  # fmt: skip
            raise IndexReaderException(msg)
        other = self._mode_to_global.get(mode, {}).get(mode_step) if mode != 4 else None
        if other is not None and other != step:
            msg = (f"index files {sources.get(other)!r} and {key!r} of {self.path} both claim "
                   f"{idx.mode.name} step {mode_step} (global steps {other} and {step})")  # fmt: skip
            raise IndexReaderException(msg)
        sources.setdefault(step, key)

    def _payload(self, tensors: list[tuple[str, int, int]]) -> _Payload:
        """The maps of an index's ``tensor_payload`` entries (made once per distinct payload)."""
        made = self._payload_maps.get(id(tensors))
        if made is not None and made.tensors is tensors:  # the parser's list of an identical payload
            return made
        locs: dict[str, tuple[int, int]] = {}
        reductions: dict[str, dict[tuple[str, bool], tuple[int, int]]] = {}
        names: dict[str, None] = {}  # the tensors named, in order (a reduction names its tensor)
        extent = 0
        for name, start, length in tensors:
            if start + length > extent:
                extent = start + length
            red = split_reduction_name(name) if name.startswith(REDUCTIONS_PREFIX) else None
            if red is None:
                locs[name] = (start, length)
                names[name] = None
            else:
                reductions.setdefault(red[0], {})[(red[1], red[2])] = (start, length)
                names[red[0]] = None
        made = _Payload(tensors, locs, reductions, tuple(names), extent)
        if len(self._payload_maps) >= _PAYLOAD_MAPS_LIMIT:
            self._payload_maps.clear()
        self._payload_maps[id(tensors)] = made  # holds the list: its id is not reused while cached
        return made

    def _add_index(self, idx: IndexFile, key: str = "") -> None:
        self._check_steps(idx, key)
        mode, mode_step, step, worker = int(idx.mode), idx.mode_step, idx.step, idx.worker
        ekey = idx.event_key or ""  # parse_index guarantees a key whenever there are tensors
        payload = self._payload(idx.tensors)
        shapes = dict(idx.shapes) if idx.shapes else _NO_SHAPES
        record: WorkerRecord = (worker, ekey, payload.locs, payload.reductions, shapes)
        known = self._step_records.get(step, ())
        if not known or known[-1][0] < worker:  # workers' index files usually come in worker order
            records = (*known, record)
        else:  # (one index file per step and worker: its key says which)
            records = tuple(sorted([*(r for r in known if r[0] != worker), record], key=_worker_of))
        self._step_records[step] = records
        of_mode = self._by_mode.get(mode)  # tensor name -> tensors[name][mode], the same dicts
        if of_mode is None:
            of_mode = self._by_mode[mode] = {}
        names = payload.names if not idx.shapes else tuple(dict.fromkeys([*payload.names, *shapes]))
        for name in names:  # every tensor this worker saved something of: the step's newest records
            by_step = of_mode.get(name)
            if by_step is None:
                by_step = of_mode[name] = self._tensors.setdefault(name, {}).setdefault(mode, {})
            by_step[mode_step] = records
        if payload.extent:
            self._fetcher.note_extent(ekey, payload.extent)
        self._mode_tensors.setdefault(mode, set()).update(names)
        self._global_to_mode.setdefault(step, (mode, mode_step))
        if mode != 4:  # ModeKeys.GLOBAL
            self._mode_to_global.setdefault(mode, {}).setdefault(mode_step, step)
        self._workers.add(worker)

    def _update_last_complete(self, steps: Iterable[int]) -> None:
        for step in steps:
            if step > self.last_complete_step and len(self._step_records[step]) >= self.num_workers:
                self.last_complete_step = step
        pending = [s for s in self._global_to_mode if s > self.last_complete_step]
        if len(pending) > self._window:
            pending.sort()
            self.last_complete_step = pending[len(pending) // 2 - 1]


def _worker_of(record: WorkerRecord) -> str:
    return record[0]
