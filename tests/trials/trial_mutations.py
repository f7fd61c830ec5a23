"""Mutations of a trial's files for the reader's fuzz test (tests/trials/test_trials_fuzz.py).

``mutate`` applies one hostile change (a truncation at a record-boundary class, a flipped byte,
a wrong CRC, a wrong JSON type, a huge length, a stray index file, an empty or missing file)
and says which records it changed.
"""

from __future__ import annotations

import json
import random
import struct
from collections.abc import Iterator
from typing import Any

Files = dict[str, bytes]


def _records(data: bytes) -> list[tuple[int, int]]:
    """(offset, length) of each well-formed record of an event file."""
    out, pos = [], 0
    while pos + 12 <= len(data):
        (n,) = struct.unpack_from("<Q", data, pos)
        if pos + 16 + n > len(data):
            break
        out.append((pos, 16 + n))
        pos += 16 + n
    return out


def _json_paths(doc: Any, path: tuple = ()) -> Iterator[tuple]:
    yield path
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _json_paths(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _json_paths(v, (*path, i))


_WEIRD = [None, True, False, 0, -1, 1.5, 2**40, 2**64, -(2**63), "", "x", "TRAIN", "../../x", [], [1], {}, {"a": 1},
          [[1, 2]], "\udcff", float("nan"), 10**400 if False else 1e308, "worker_0"]  # fmt: skip


def _set(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = value
    return doc


def mutate(rng: random.Random, files: Files) -> tuple[str, Files, set[tuple[str, int]]]:
    """Apply one random mutation; return (kind, files, {(event key, record offset) whose payload changed})."""
    files = dict(files)
    keys = sorted(files)
    events = [k for k in keys if k.endswith(".tfevents")]
    jsons = [k for k in keys if k.endswith(".json")]
    indexes = [k for k in jsons if k.startswith("index/")]
    kind = rng.choice(["truncate", "flip", "crc", "json_type", "huge", "stray", "empty", "delete", "garbage_json",
                       "duplicate_record"])  # fmt: skip
    changed: set[tuple[str, int]] = set()
    if kind == "truncate":
        key = rng.choice(keys)
        data = files[key]
        recs = _records(data) if key in events else []
        if recs:
            off, length = rng.choice(recs)
            cut = off + rng.choice([0, 1, 7, 8, 11, 12, 13, length // 2, length - 5, length - 4, length - 1, length])
        else:
            cut = rng.randrange(len(data) + 1)
        files[key] = data[:cut]
        changed.add((key, -1))
        kind = f"truncate:{key.split('/')[0]}"
    elif kind == "flip":
        key = rng.choice(events if events and rng.random() < 0.7 else keys)
        data = bytearray(files[key])
        if not data:
            return kind, files, changed
        for _ in range(rng.choice([1, 1, 2, 8])):
            pos = rng.randrange(len(data))
            data[pos] ^= 1 << rng.randrange(8)
            for off, length in _records(files[key]) if key in events else []:
                if off + 12 <= pos < off + length - 4:
                    changed.add((key, off))
        files[key] = bytes(data)
        changed.add((key, -1))
        kind = f"flip:{key.split('/')[0]}"
    elif kind == "crc" and events:
        key = rng.choice(events)
        recs = _records(files[key])
        if recs:
            off, length = rng.choice(recs)
            data = bytearray(files[key])
            where = off + 8 if rng.random() < 0.5 else off + length - 4
            data[where : where + 4] = struct.pack("<I", rng.getrandbits(32))
            files[key] = bytes(data)
    elif kind in ("json_type", "huge") and jsons:
        key = rng.choice(indexes if kind == "huge" or rng.random() < 0.6 else jsons)
        doc = json.loads(files[key])
        paths = list(_json_paths(doc))
        if kind == "huge":
            paths = [p for p in paths if p and p[-1] in ("start_idx", "length")] or paths
            value: Any = rng.choice([2**31, 2**40, 2**47, 2**48, 2**63, 2**64, -1, -(2**63)])
        else:
            value = rng.choice(_WEIRD)
        doc = _set(doc, rng.choice(paths), value)
        files[key] = json.dumps(doc, allow_nan=True).encode("utf-8", "surrogatepass")
        changed.add((key, -1))
        kind = f"{kind}:{key.split('/')[0]}"
    elif kind == "stray" and indexes:
        src = rng.choice(indexes)
        doc = json.loads(files[src])
        step = rng.choice([0, 1, 2, 3, 5, 7, 999, 1000])
        worker = rng.choice(["worker_0", "worker_1", "a", "zz", ".", "_"])
        sub = rng.choice([step // 1000, step // 1000 + 1])
        if isinstance(doc.get("meta"), dict) and rng.random() < 0.5:
            doc["meta"]["mode_step"] = rng.choice([0, 1, 2, 3])
        if isinstance(doc.get("meta"), dict) and rng.random() < 0.5:
            doc["meta"]["event_file_name"] = f"events/{step:012d}/{step:012d}_{worker}.tfevents"
            ev = doc["meta"].get("event_file_name")
            old = json.loads(files[src])["meta"].get("event_file_name")
            if old in files and ev not in files:  # a stray adds files, it does not replace real ones
                files[ev] = files[old]
        target = f"index/{sub:09d}/{step:012d}_{worker}.json"
        if target in files:  # it replaces a real index: a rewritten index, not a stray one
            changed.add((target, -1))
            kind = "json_type:index"
        files[target] = json.dumps(doc).encode()
    elif kind == "empty":
        key = rng.choice(keys)
        files[key] = b""
        changed.add((key, -1))
    elif kind == "delete":
        key = rng.choice(keys)
        del files[key]
        changed.add((key, -1))
    elif kind == "garbage_json" and jsons:
        key = rng.choice(jsons)
        changed.add((key, -1))
        files[key] = rng.choice([b"\xff\xfe", b"[", b"null", b"5", b'"x"', b"{}", b"[]" * 1000,
                                               b"[" * 100000, rng.randbytes(64)])  # fmt: skip
    elif kind == "duplicate_record" and events:
        key = rng.choice(events)
        recs = _records(files[key])
        if recs:
            off, length = rng.choice(recs)
            files[key] = files[key] + files[key][off : off + length]
    return kind.split(":")[0] if ":" not in kind else kind, files, changed
