"""LocalStorage.read returns every byte of a file in one read where it can: empty files, files of
any size, and files that report no size (as /proc's do) are read whole."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sagemaker_debugger_ext.storage import LocalStorage


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, (1 << 20) + 3])
def test_read_returns_the_whole_file(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    (tmp_path / "f.bin").write_bytes(data)
    assert LocalStorage(tmp_path).read("f.bin") == data


def test_a_file_that_reports_no_size_is_read_to_its_end() -> None:
    proc = Path("/proc/self/status")
    if not proc.exists() or proc.stat().st_size != 0:
        pytest.skip("needs a file that reports size 0 but has content (Linux /proc)")
    got = LocalStorage(proc.parent).read("status")
    assert got.startswith(b"Name:") and b"\nPid:" in got and got.endswith(b"\n")
