"""Loading a trial: collections files, incremental index refresh, step completeness.

:class:`TrialLoader` holds what was read and reads more; :class:`~._trial.Trial` composes one
and adds the queries.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from operator import itemgetter

from .._exceptions import StorageNotFoundError
from ..exceptions import IndexReaderException, MissingCollectionFiles
from ..format._in_process import flush_writers_under
from ..format._layout import END_OF_JOB_FILE, parse_collections_key, parse_index_key
from ..modes import ModeKeys
from ..storage import LocalStorage, Storage, read_many
from ._collections import Collection, parse_collections_file
from ._fetch import Location, RecordFetcher
from ._index import REDUCTIONS_PREFIX, IndexFile, Payloads, parse_index, split_reduction_name
from ._tensor import _LOC, _REDS, _SHAPE, StepData, TensorSteps

__all__ = ["TrialLoader"]

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
        self._by_mode: dict[
            int, dict[str, dict[int, tuple[StepData, ...]]]
        ] = {}  # mode -> name -> _tensors[name][mode]
        # modes are plain ints internally (IntEnum hashing is slow in hot dict lookups)
        self._global_to_mode: dict[int, tuple[int, int]] = {}
        self._mode_to_global: dict[int, dict[int, int]] = {}
        self._workers_for_step: dict[int, set[str]] = {}
        self._step_tensors: dict[int, set[str]] = {}
        self._mode_tensors: dict[int, set[str]] = {}
        self._seen_index: set[str] = set()
        self.last_index_key: str | None = None  # the newest index file loaded (smdebug's last_index_token)
        self._step_sources: dict[int, str] = {}  # global step -> the index file that defined it
        self._payloads: Payloads = {}  # index payload text -> its checked entries (see parse_index)

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

    def _add_index(self, idx: IndexFile, key: str = "") -> None:
        self._check_steps(idx, key)
        mode, mode_step, step, worker = int(idx.mode), idx.mode_step, idx.step, idx.worker
        names = self._step_tensors.setdefault(step, set())
        mode_names = self._mode_tensors.setdefault(mode, set())
        tensors = self._tensors
        ekey = idx.event_key or ""  # parse_index guarantees a key whenever there are tensors
        extent = 0
        of_mode = self._by_mode.get(mode)  # tensor name -> tensors[name][mode], the same dicts
        if of_mode is None:
            of_mode = self._by_mode[mode] = {}
        plain = True  # no reduction among the names: they are the tensors' names
        for name, start, length in idx.tensors:
            if start + length > extent:
                extent = start + length
            by_step = of_mode.get(name)  # only tensors' own names are in of_mode, never a reduction's
            if by_step is None:
                red = split_reduction_name(name)
                tname = red[0] if red else name
                steps = tensors.get(tname)
                if steps is None:
                    steps = tensors[tname] = {}
                by_step = steps.get(mode)
                if by_step is None:
                    by_step = steps[mode] = {}
                if red:
                    plain = False
                    names.add(tname)
                    _add_reduction(by_step, mode_step, worker, (red[1], red[2]), (ekey, start, length))
                    continue
                of_mode[name] = by_step
            entry = by_step.get(mode_step)
            if entry is None:  # the common case: the first record of this tensor at this step
                by_step[mode_step] = ((worker, (ekey, start, length), None, None),)
            else:
                by_step[mode_step] = _replaced(entry, worker, _LOC, (ekey, start, length))
        if plain:
            names.update(map(itemgetter(0), idx.tensors))
        else:
            names.update(n for n, _, _ in idx.tensors if not n.startswith(REDUCTIONS_PREFIX))
        if extent:
            self._fetcher.note_extent(ekey, extent)
        for name, shape in idx.shapes:
            steps = tensors.get(name)
            if steps is None:
                steps = tensors[name] = {}
            by_step = steps.setdefault(mode, {})
            by_step[mode_step] = _replaced(by_step.get(mode_step, ()), worker, _SHAPE, shape)
            names.add(name)
        mode_names.update(names)
        self._global_to_mode.setdefault(step, (mode, mode_step))
        if mode != 4:  # ModeKeys.GLOBAL
            self._mode_to_global.setdefault(mode, {}).setdefault(mode_step, step)
        self._workers_for_step.setdefault(step, set()).add(worker)
        self._workers.add(worker)

    def _update_last_complete(self, steps: Iterable[int]) -> None:
        for step in steps:
            if step > self.last_complete_step and len(self._workers_for_step[step]) >= self.num_workers:
                self.last_complete_step = step
        pending = [s for s in self._global_to_mode if s > self.last_complete_step]
        if len(pending) > self._window:
            pending.sort()
            self.last_complete_step = pending[len(pending) // 2 - 1]


def _replaced(entries: tuple[StepData, ...], worker: str, field: int, value: object) -> tuple[StepData, ...]:
    """``entries`` with field ``field`` of ``worker``'s entry set to ``value`` (added if missing)."""
    for i, data in enumerate(entries):
        if data[0] == worker:
            changed = (*data[:field], value, *data[field + 1 :])
            return (*entries[:i], changed, *entries[i + 1 :])  # type: ignore[arg-type]
    new: list[object] = [worker, None, None, None]
    new[field] = value
    if not entries or entries[-1][0] < worker:  # workers' index files usually come in worker order
        return (*entries, tuple(new))  # type: ignore[arg-type]
    return tuple(sorted((*entries, tuple(new)), key=itemgetter(0)))  # type: ignore[arg-type]


def _add_reduction(
    by_step: dict[int, tuple[StepData, ...]], mode_step: int, worker: str, key: tuple[str, bool], loc: Location
) -> None:
    entries = by_step.get(mode_step, ())
    data = next((d for d in entries if d[0] == worker), None)
    reductions = data[_REDS] if data is not None else None
    if reductions is None:
        reductions = {}
        entries = by_step[mode_step] = _replaced(entries, worker, _REDS, reductions)
    reductions[key] = loc
