"""Fixtures for hook tests: read back what a hook wrote, through the format reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sagemaker_debugger_ext.format import decode_tensor_record, read_records


class RunReader:
    """A tiny reader over a trial folder: ``{(global step, name): DecodedTensor}`` and indexes."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def index(self) -> dict[int, dict[str, Any]]:
        """Global step -> parsed index JSON (worker_0)."""
        out = {}
        for f in sorted(self.root.glob("index/*/*_worker_0.json")):
            out[int(f.name.split("_")[0])] = json.loads(f.read_text())
        return out

    def tensors(self, worker: str = "worker_0") -> dict[tuple[int, str], Any]:
        """Every tensor record of ``worker``."""
        out = {}
        for f in sorted(self.root.glob(f"events/*/*_{worker}.tfevents")):
            for rec in read_records(str(f)):
                t = decode_tensor_record(rec.payload)
                out[(t.step, t.tag)] = t
        return out

    def names_at(self, step: int) -> list[str]:
        """Tensor names written at global ``step`` (index order)."""
        return [p["tensorname"] for p in self.index()[step]["tensor_payload"]]

    def value(self, step: int, name: str) -> np.ndarray:
        """The value of ``name`` at global ``step``."""
        return self.tensors()[(step, name)].value

    def collections(self, worker: str = "worker_0") -> dict[str, Any]:
        """The parsed collections JSON."""
        return json.loads((self.root / "collections" / "000000000" / f"{worker}_collections.json").read_text())


@pytest.fixture
def read_run() -> type[RunReader]:
    """The RunReader class (call it with a trial folder)."""
    return RunReader
