"""The writer's index text and grouped writes: what the faster paths write equals the long way.

``StepWriter.close`` builds the index JSON by hand (json's own string encoder, no
``json.dumps`` of the meta dict) and writes a step's two files with ``atomic_write_group``
(both prepared before the first is opened); the bytes must equal ``json.dumps`` of the
document and what ``atomic_write`` of each file writes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext.format import StepWriter, _files
from sagemaker_debugger_ext.format._files import Data, atomic_write, atomic_write_group
from sagemaker_debugger_ext.modes import ModeKeys


def _index_text(root: Path) -> str:
    (path,) = root.glob("index/*/*.json")
    return path.read_text(encoding="ascii")


@pytest.mark.parametrize("mode", list(ModeKeys))
@pytest.mark.parametrize("mode_step", [0, 7, 10**12])
@pytest.mark.parametrize("worker", ["worker_0", 'w"q', "w\u00e9\u2603"])
@pytest.mark.parametrize("content", ["tensors", "shapes", "both"])
def test_index_text_is_json_dumps_of_its_document(
    tmp_path: Path, mode: ModeKeys, mode_step: int, worker: str, content: str
) -> None:
    writer = StepWriter(tmp_path, global_step=3, worker=worker, mode=mode, mode_step=mode_step)
    if content != "shapes":
        writer.write_tensor("a/b\u00e9", np.arange(4, dtype=np.float32))
        writer.write_tensor("c", np.float64(2.5))
    if content != "tensors":
        writer.write_shape('s"\u2603', (2, 3))
    event_key = writer.event_key
    writer.close()
    text = _index_text(tmp_path)
    meta: dict[str, object] = {"mode": mode.name, "mode_step": mode_step}
    if content != "shapes":
        meta["event_file_name"] = event_key
    shapes = [{"tensorname": 's"\u2603', "originalname": 's"\u2603', "shape": [2, 3]}] if content != "tensors" else []
    tensors = json.loads(text)["tensor_payload"]
    assert [t["tensorname"] for t in tensors] == ([] if content == "shapes" else ["a/b\u00e9", "c"])
    assert text == json.dumps({"meta": meta, "tensor_payload": tensors, "shape_payload": shapes})


def test_a_group_writes_what_atomic_write_writes_in_order(tmp_path: Path) -> None:
    big: list[bytes | memoryview] = [np.arange(300_000, dtype=np.float32).tobytes(), b"tail"]
    group: list[tuple[str, Data, bool, bool]] = [
        (str(tmp_path / "g" / "events" / "1" / "e.bin"), big, True, True),
        (str(tmp_path / "g" / "index" / "i.json"), '{"x": "\u00e9"}', False, False),
    ]
    atomic_write_group(group)
    for path, data, new_dir, uncached in group:
        atomic_write(
            path.replace(f"{os.sep}g{os.sep}", f"{os.sep}one{os.sep}"), data, new_dir=new_dir, uncached=uncached
        )
    for path, *_ in group:
        assert Path(path).read_bytes() == Path(path.replace(f"{os.sep}g{os.sep}", f"{os.sep}one{os.sep}")).read_bytes()
    assert not list(tmp_path.rglob("*.tmp"))


def test_a_group_stops_at_its_first_failure_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    group = [
        (str(tmp_path / "first"), b"1", False, False),
        (str(tmp_path / "file" / "second"), b"2", False, False),  # a file is not a folder
        (str(tmp_path / "third"), b"3", False, False),
    ]
    with pytest.raises(OSError):
        atomic_write_group(group)
    assert (tmp_path / "first").read_bytes() == b"1"
    assert not (tmp_path / "third").exists()
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


def test_an_uncached_write_looks_up_the_device_only_once_a_filesystem_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked_up: list[int] = []
    real = os.fstat

    def counting(fd: int) -> os.stat_result:
        looked_up.append(fd)
        return real(fd)

    monkeypatch.setattr(os, "fstat", counting)
    monkeypatch.setattr(_files, "_REFUSED_DEVICES", set())
    data = bytes(_files.UNCACHED_MIN_BYTES)
    atomic_write(tmp_path / "a", data, uncached=True)
    assert looked_up == []
    monkeypatch.setattr(_files, "_REFUSED_DEVICES", {-1})  # some other filesystem refused
    atomic_write(tmp_path / "b", data, uncached=True)
    assert len(looked_up) == 1
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes() == data
