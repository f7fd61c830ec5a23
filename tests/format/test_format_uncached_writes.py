"""Uncached writes (``atomic_write(..., uncached=True)``, Linux's ``RWF_DONTCACHE``): the same
bytes on disk as an ordinary write, the flag asked only for large data, partial writes resumed
at the right offset, and a filesystem that refuses it written the ordinary way and not asked
again; the hook asks for it by default and ``$SAGEMAKER_DEBUGGER_EXT_UNCACHED_WRITES`` turns
it off. ``os.pwritev`` is wrapped (it still writes) to see which calls the writer makes."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sagemaker_debugger_ext.format import _files
from sagemaker_debugger_ext.format._files import RWF_DONTCACHE, UNCACHED_MIN_BYTES, atomic_write
from sagemaker_debugger_ext.hooks import Hook, HookConfigError, SaveConfig, TrainingContext
from sagemaker_debugger_ext.trials import create_trial

ENV = "SAGEMAKER_DEBUGGER_EXT_UNCACHED_WRITES"
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RWF_DONTCACHE is Linux's")


def _supports_uncached(folder: Path) -> bool:
    fd = os.open(folder / ".probe", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.pwritev(fd, [b"x"], 0, RWF_DONTCACHE)
        return True
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            return False
        raise
    finally:
        os.close(fd)
        os.unlink(folder / ".probe")


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, int]]:
    """(offset, flags, bytes asked) of every ``os.pwritev`` call; no filesystem refused yet."""
    seen: list[tuple[int, int, int]] = []
    real = os.pwritev

    def spy(fd: int, buffers: Any, offset: int, flags: int = 0) -> int:
        seen.append((offset, flags, sum(memoryview(b).nbytes for b in buffers)))
        return real(fd, buffers, offset, flags)

    monkeypatch.setattr(os, "pwritev", spy)
    monkeypatch.setattr(_files, "_REFUSED_DEVICES", set())
    return seen


def _chunks(total: int, size: int) -> list[bytes]:
    data = np.random.default_rng(0).integers(0, 256, total, dtype=np.uint8).tobytes()
    return [data[i : i + size] for i in range(0, total, size)]


@pytest.fixture
def uncached_dir(tmp_path: Path) -> Path:
    if not _supports_uncached(tmp_path):
        pytest.skip(f"the filesystem of {tmp_path} (or this kernel, before 6.14) has no uncached writes")
    return tmp_path


@pytest.mark.parametrize(
    ("uncached", "nbytes", "expected"),
    [(True, UNCACHED_MIN_BYTES, True), (True, 2_154_015, True), (True, UNCACHED_MIN_BYTES - 1, False),
     (True, 0, False), (False, 2_154_015, False), (False, 1 << 30, False)],
)  # fmt: skip
def test_write_uncached_asks_only_for_data_of_at_least_the_threshold(
    uncached: bool, nbytes: int, expected: bool
) -> None:
    """The policy itself: a 2.15 MB event file of the fast-step MLP goes uncached when asked, as
    the Keras benchmark's 2.05 MB ones do (one rule for both, docs/format.md "Speed")."""
    assert _files.write_uncached(uncached, nbytes) is expected


def test_large_data_is_written_uncached_and_whole(uncached_dir: Path, calls: list[tuple[int, int, int]]) -> None:
    """More chunks than one writev takes (1,500 of 1 KiB): several calls at growing offsets,
    each with RWF_DONTCACHE, and the file is exactly the chunks."""
    chunks = _chunks(1500 * 1024, 1024)
    assert atomic_write(uncached_dir / "big", chunks, uncached=True) == 1500 * 1024
    assert (uncached_dir / "big").read_bytes() == b"".join(chunks)
    assert calls and all(flags == RWF_DONTCACHE for _, flags, _ in calls)
    offsets = [offset for offset, _, _ in calls]
    assert offsets[0] == 0 and offsets == sorted(offsets) and len(set(offsets)) == len(offsets) > 1


def test_small_data_and_unasked_writes_stay_ordinary(uncached_dir: Path, calls: list[tuple[int, int, int]]) -> None:
    small = _chunks(UNCACHED_MIN_BYTES - 1, 4096)
    atomic_write(uncached_dir / "small", small, uncached=True)
    big = _chunks(UNCACHED_MIN_BYTES, 4096)
    atomic_write(uncached_dir / "unasked", big)
    assert calls == []
    assert (uncached_dir / "small").read_bytes() == b"".join(small)
    assert (uncached_dir / "unasked").read_bytes() == b"".join(big)


def test_partial_uncached_writes_resume_at_their_offset(
    uncached_dir: Path, calls: list[tuple[int, int, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call that writes less than asked (as the kernel may) is followed by one for the rest."""
    spy: Callable[..., int] = os.pwritev

    def short(fd: int, buffers: Any, offset: int, flags: int = 0) -> int:
        head = memoryview(b"".join(bytes(b) for b in buffers))[:100_000]  # at most 100,000 bytes a call
        return spy(fd, [head], offset, flags)

    monkeypatch.setattr(os, "pwritev", short)
    chunks = _chunks(UNCACHED_MIN_BYTES + 12_345, 65_536)
    atomic_write(uncached_dir / "partial", chunks, uncached=True)
    assert (uncached_dir / "partial").read_bytes() == b"".join(chunks)
    assert [offset for offset, _, _ in calls] == list(range(0, UNCACHED_MIN_BYTES + 12_345, 100_000))


def test_refusing_filesystem_is_written_ordinarily_and_not_asked_again(
    tmp_path: Path, calls: list[tuple[int, int, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filesystem that answers EOPNOTSUPP (tmpfs, an older kernel) gets an ordinary write,
    the same bytes, and no second uncached attempt."""
    spy: Callable[..., int] = os.pwritev

    def refusing(fd: int, buffers: Any, offset: int, flags: int = 0) -> int:
        if flags:
            calls.append((offset, flags, 0))  # refused before writing anything, as the kernel does
            raise OSError(errno.EOPNOTSUPP, "Operation not supported")
        return spy(fd, buffers, offset, flags)

    monkeypatch.setattr(os, "pwritev", refusing)
    first, second = _chunks(UNCACHED_MIN_BYTES, 8192), _chunks(UNCACHED_MIN_BYTES + 1, 8192)
    atomic_write(tmp_path / "a", first, uncached=True)
    atomic_write(tmp_path / "b", second, uncached=True)
    assert (tmp_path / "a").read_bytes() == b"".join(first)
    assert (tmp_path / "b").read_bytes() == b"".join(second)
    assert len(calls) == 1  # the refused attempt only; the rest went through writev
    assert _files._REFUSED_DEVICES == {os.stat(tmp_path).st_dev}


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="no /dev/shm")
def test_tmpfs_without_uncached_writes_gets_whole_files(calls: list[tuple[int, int, int]]) -> None:
    """Where the kernel itself refuses (tmpfs here), the file is still whole."""
    import tempfile

    with tempfile.TemporaryDirectory(dir="/dev/shm") as folder:
        if _supports_uncached(Path(folder)):
            pytest.skip("this kernel's tmpfs takes uncached writes")
        chunks = _chunks(UNCACHED_MIN_BYTES * 2, 1 << 16)
        atomic_write(Path(folder) / "f", chunks, uncached=True)
        assert (Path(folder) / "f").read_bytes() == b"".join(chunks)
        assert os.stat(folder).st_dev in _files._REFUSED_DEVICES


def _run_hook(out: Path) -> None:
    hook = Hook(out_dir=out, context=TrainingContext(), include_regex=["w"], save_config=SaveConfig(save_interval=1))
    for step in range(2):
        hook.advance_step()
        hook.record_tensor_value("w", np.full(UNCACHED_MIN_BYTES // 4, step, np.float32))  # 1 MiB a step
    hook.close()
    trial = create_trial(str(out))
    assert [float(trial.tensor("w").value(s)[0]) for s in trial.steps()] == [0.0, 1.0]


def test_hook_writes_event_files_uncached_unless_turned_off(
    uncached_dir: Path, calls: list[tuple[int, int, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    _run_hook(uncached_dir / "default")
    assert [flags for _, flags, _ in calls] == [RWF_DONTCACHE, RWF_DONTCACHE]  # one event file a step
    calls.clear()
    monkeypatch.setenv(ENV, "false")
    _run_hook(uncached_dir / "off")
    assert calls == []


@pytest.mark.parametrize("value", ["maybe", "2"])
def test_bad_environment_value_is_refused_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(ENV, value)
    with pytest.raises(HookConfigError, match=ENV) as err:
        Hook(out_dir=tmp_path / "run", context=TrainingContext())
    assert err.value.field == ENV
    assert not (tmp_path / "run").exists()
