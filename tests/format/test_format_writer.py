"""StepWriter, collections JSON, end marker: golden bytes and round trips."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext._exceptions import (
    ConfigTypeError,
    PathEscapeError,
    UnsupportedDTypeError,
)
from sagemaker_debugger_ext.format import (
    StepWriter,
    decode_tensor_record,
    read_records,
    write_collections_file,
    write_training_end,
)
from sagemaker_debugger_ext.modes import ModeKeys

# Event.wall_time of the reference §2.4 file (the 8 bytes after the 0x09 key).
WALL_TIME = float(np.frombuffer(bytes.fromhex("17b45ee9adc0da41"), "<f8")[0])

ALL_DTYPES = [
    "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "complex128",
]  # fmt: skip


def _read_all(root: Path, step: int, worker: str = "worker_0") -> dict[str, np.ndarray]:
    data = (root / f"events/{step:012d}/{step:012d}_{worker}.tfevents").read_bytes()
    return {d.tag: d.value for d in (decode_tensor_record(r.payload) for r in read_records(data))}


def test_reference_file_reproduced_byte_for_byte(smdebug_runs: Path, tmp_path: Path) -> None:
    """The §2.4 file (tensor t=[1,2,3] float32, TRAIN step 3, global 7) is reproduced exactly."""
    with StepWriter(tmp_path, global_step=7, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=3,
                    clock=lambda: WALL_TIME) as w:  # fmt: skip
        w.write_tensor("t", np.array([1, 2, 3], np.float32))
    ref = smdebug_runs / "sample_run_min"
    rel_event = "events/000000000007/000000000007_worker_0.tfevents"
    rel_index = "index/000000000/000000000007_worker_0.json"
    assert (tmp_path / rel_event).read_bytes() == (ref / rel_event).read_bytes()
    assert (tmp_path / rel_index).read_bytes() == (ref / rel_index).read_bytes()


def test_reference_bytes_hard_coded(tmp_path: Path) -> None:
    """Without the fixture, the writer still yields the 92 bytes dissected in reference §2.4."""
    expected = bytes.fromhex(
        "4c00000000000000f5d4a2a00917b45ee9adc0da4110072a3f0a3d0a0174421b"
        "080112091207080312037 45f33220c0000803f00000040000040404a1b0a0e0a"
        "096d6f64655f737465701201330a090a046d6f6465120131b3c02d06".replace(" ", "")
    )
    with StepWriter(tmp_path, global_step=7, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=3,
                    clock=lambda: WALL_TIME) as w:  # fmt: skip
        w.write_tensor("t", [1.0, 2.0, 3.0], dtype="float32")
    assert (tmp_path / "events/000000000007/000000000007_worker_0.tfevents").read_bytes() == expected


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=ALL_DTYPES)
def test_every_dtype_round_trips(tmp_path: Path, dtype: str) -> None:
    """Each numeric dtype comes back with the same dtype, shape and values."""
    rng = np.random.default_rng(0)
    value = (rng.normal(size=(3, 4)) * 50).astype(dtype)
    if dtype.startswith("complex"):
        value = value + 1j * value
    with StepWriter(tmp_path, global_step=3, worker="worker_1") as w:
        w.write_tensor("a/b:0", value)
        w.write_tensor("scalar0d", value.reshape(-1)[:1].reshape(()))
    got = _read_all(tmp_path, 3, "worker_1")
    assert got["a/b:0"].dtype == value.dtype
    np.testing.assert_array_equal(got["a/b:0"], value)
    assert got["scalar0d"].shape == ()


def test_bfloat16_bits_read_back_as_float32(tmp_path: Path) -> None:
    """Raw bf16 bits written with dtype='bfloat16' read back as the exact float32 values."""
    f32 = np.array([1.0, -2.5, 3.140625, 0.0], np.float32)
    bits = (f32.view(np.uint32) >> 16).astype(np.uint16)
    with StepWriter(tmp_path, global_step=0, worker="worker_0") as w:
        w.write_tensor("bf", bits, dtype="bfloat16")
    got = _read_all(tmp_path, 0)["bf"]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, f32)


def test_bfloat16_from_floats_rounds_to_nearest_even(tmp_path: Path) -> None:
    """Float input with dtype='bfloat16' is rounded to the nearest bf16 (ties to even)."""
    x = np.array([1.0 + 2**-8, 1.0 + 3 * 2**-8, -3.3], np.float32)  # tie down, tie up, inexact
    with StepWriter(tmp_path, global_step=0, worker="worker_0") as w:
        w.write_tensor("bf", x, dtype="bfloat16")
    got = _read_all(tmp_path, 0)["bf"]
    np.testing.assert_array_equal(got[:2], np.array([1.0, 1.0 + 2**-6], np.float32))
    assert abs(got[2] - x[2]) <= 2**-7 * 4


def test_strings_and_python_scalars(tmp_path: Path) -> None:
    """Strings use string_val; Python scalars become shape (1,) as in smdebug."""
    with StepWriter(tmp_path, global_step=1, worker="worker_0", mode=ModeKeys.EVAL, mode_step=0) as w:
        w.write_tensor("s", np.array(["héllo", "x"]))
        w.write_tensor("f", 2.5)
        w.write_tensor("i", 7)
    data = (tmp_path / "events/000000000001/000000000001_worker_0.tfevents").read_bytes()
    recs = [decode_tensor_record(r.payload) for r in read_records(data)]
    assert recs[0].value.tolist() == ["héllo", "x"]
    assert recs[1].value.shape == (1,) and recs[1].value.dtype == np.float64
    assert recs[2].value.tolist() == [7]
    assert {(r.mode, r.mode_step, r.step) for r in recs} == {(ModeKeys.EVAL, 0, 1)}


def test_index_offsets_cover_each_record(tmp_path: Path) -> None:
    """Index start_idx/length slice exactly one full record per tensor, in order."""
    with StepWriter(tmp_path, global_step=1234, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=9) as w:
        for i in range(5):
            w.write_tensor(f"t{i}", np.arange(i * 100, dtype=np.float32))
        w.write_shape("t0", (0,))
    index = json.loads((tmp_path / "index/000000001/000000001234_worker_0.json").read_text())
    assert index["meta"] == {"mode": "TRAIN", "mode_step": 9,
                             "event_file_name": "events/000000001234/000000001234_worker_0.tfevents"}  # fmt: skip
    assert index["shape_payload"] == [{"tensorname": "t0", "originalname": "t0", "shape": [0]}]
    data = (tmp_path / index["meta"]["event_file_name"]).read_bytes()
    for i, entry in enumerate(index["tensor_payload"]):
        chunk = data[entry["start_idx"] : entry["start_idx"] + entry["length"]]
        (rec,) = read_records(chunk, allow_torn_tail=False)
        assert decode_tensor_record(rec.payload).value.size == i * 100
    assert not list(tmp_path.rglob("*.tmp"))


def test_empty_writer_writes_nothing(tmp_path: Path) -> None:
    """A StepWriter closed with no tensor or shape leaves no file behind."""
    StepWriter(tmp_path / "t", global_step=0, worker="worker_0").close()
    assert not (tmp_path / "t").exists()


def test_shape_only_index_has_no_event_file(tmp_path: Path) -> None:
    """Shapes alone produce an index without event_file_name, and no event file."""
    with StepWriter(tmp_path, global_step=2, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=2) as w:
        w.write_shape("w", (3, 4))
    index = json.loads((tmp_path / "index/000000000/000000000002_worker_0.json").read_text())
    assert index["meta"] == {"mode": "TRAIN", "mode_step": 2}
    assert not (tmp_path / "events").exists()


@pytest.mark.parametrize("worker", ["../x", "a/b", "", "..", "a\\b"], ids=["dotdot", "slash", "empty", "up", "bslash"])
def test_unsafe_worker_names_refused(tmp_path: Path, worker: str) -> None:
    """Worker names that would escape the trial folder raise PathEscapeError."""
    with pytest.raises(PathEscapeError, match="'worker' must be"):
        StepWriter(tmp_path, global_step=0, worker=worker)
    with pytest.raises(PathEscapeError):
        write_collections_file(tmp_path, worker, {}, 1)


def test_unsupported_dtype_and_bad_name(tmp_path: Path) -> None:
    """datetime64 data and an empty tensor name are refused with clear errors."""
    w = StepWriter(tmp_path, global_step=0, worker="worker_0")
    with pytest.raises(UnsupportedDTypeError, match="'dtype' must be one of"):
        w.write_tensor("d", np.array(["2020-01-01"], dtype="datetime64[D]"))
    with pytest.raises(UnsupportedDTypeError, match="'dtype' must be"):
        w.write_tensor("d", np.zeros(2, np.uint16), dtype="bfloat17")
    with pytest.raises(ConfigTypeError, match="'name' must be a non-empty str"):
        w.write_tensor("", np.zeros(2))


def test_collections_file_and_end_marker(tmp_path: Path) -> None:
    """The collections JSON carries _meta.num_workers; the end marker is an empty file."""
    coll = {"weights": {"name": "weights", "include_regex": [], "tensor_names": ["w"],
                        "reduction_config": None, "save_config": None, "save_histogram": True}}  # fmt: skip
    path = write_collections_file(tmp_path, "worker_0", coll, 2)
    doc = json.loads(path.read_text())
    assert path.relative_to(tmp_path).as_posix() == "collections/000000000/worker_0_collections.json"
    assert doc == {"collections": coll, "_meta": {"num_workers": 2}}
    end = write_training_end(tmp_path)
    assert end.name == "training_job_end.ts" and end.read_bytes() == b""


def test_value_is_captured_at_write_time(tmp_path: Path) -> None:
    """Changing the array after write_tensor (an optimizer step) does not change the file."""
    value = np.ones(4, np.float32)
    with StepWriter(tmp_path, global_step=0, worker="worker_0") as w:
        w.write_tensor("w", value)
        value += 5
    np.testing.assert_array_equal(_read_all(tmp_path, 0)["w"], np.ones(4, np.float32))


def test_non_contiguous_and_big_endian_inputs(tmp_path: Path) -> None:
    """Transposed views and big-endian arrays are stored as little-endian C-order data."""
    base = np.arange(12, dtype=">f8").reshape(3, 4)
    with StepWriter(tmp_path, global_step=0, worker="worker_0") as w:
        w.write_tensor("t", base.T)
    got = _read_all(tmp_path, 0)["t"]
    np.testing.assert_array_equal(got, base.T)
    assert got.dtype == np.dtype("<f8")


def test_background_writer_produces_identical_files(tmp_path: Path) -> None:
    """With a BackgroundWriter the same bytes land on disk once flushed, in order."""
    from sagemaker_debugger_ext.format import BackgroundWriter

    def write(root: Path, bg: BackgroundWriter | None) -> None:
        for step in range(5):
            with StepWriter(root, global_step=step, worker="worker_0", clock=lambda: 1.5, background=bg) as w:
                w.write_tensor("x", np.full(50, step, np.float32))

    write(tmp_path / "sync", None)
    with BackgroundWriter(max_pending=2) as bg:
        write(tmp_path / "bg", bg)
        bg.flush()
        files = sorted(p.relative_to(tmp_path / "bg") for p in (tmp_path / "bg").rglob("*") if p.is_file())
        assert files == sorted(p.relative_to(tmp_path / "sync") for p in (tmp_path / "sync").rglob("*") if p.is_file())
    for rel in files:
        assert (tmp_path / "bg" / rel).read_bytes() == (tmp_path / "sync" / rel).read_bytes()


def test_background_writer_reports_failures(tmp_path: Path) -> None:
    """A failed background write surfaces as StorageError on flush and on the next submit."""
    from sagemaker_debugger_ext._exceptions import StorageError
    from sagemaker_debugger_ext.format import BackgroundWriter

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    bg = BackgroundWriter()
    with StepWriter(blocker, global_step=0, worker="worker_0", background=bg) as w:
        w.write_tensor("x", np.zeros(2))
    with pytest.raises(StorageError, match="background write failed"):
        bg.flush()
    with pytest.raises(StorageError):
        bg.submit(tmp_path / "y", b"data")
    with pytest.raises(StorageError):
        bg.close()


def test_borrowed_arrays_write_the_same_bytes(tmp_path: Path) -> None:
    """borrow_arrays=True writes byte-identical files to the copying path."""
    arrays = {"a": np.arange(12, dtype=np.float32).reshape(3, 4), "b": np.array([True, False]), "c": np.float64(2.5)}
    for root, borrow in ((tmp_path / "copy", False), (tmp_path / "borrow", True)):
        with StepWriter(root, global_step=3, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=1,
                        clock=lambda: 1.0, borrow_arrays=borrow) as w:  # fmt: skip
            for name, value in arrays.items():
                w.write_tensor(name, value)
    for rel in ("events/000000000003/000000000003_worker_0.tfevents", "index/000000000/000000000003_worker_0.json"):
        assert (tmp_path / "borrow" / rel).read_bytes() == (tmp_path / "copy" / rel).read_bytes()


@pytest.mark.parametrize("borrow", [False, True])
def test_fast_path_raw_bytes_of_unusual_arrays(tmp_path: Path, borrow: bool) -> None:
    """The cached-layout path takes a C-contiguous array's bytes through the buffer protocol, or
    numpy's view where a buffer cannot give them (a zero-size array of two dimensions): big-endian,
    zero-size, 0-d and complex arrays write the bytes the general encoder writes, and read back."""
    arrays = {
        "be": np.arange(6, dtype=">f4").reshape(2, 3),
        "empty2d": np.zeros((0, 3), np.float32),
        "flag": np.array(True),
        "cplx": np.arange(4, dtype=np.complex64).reshape(2, 2),
    }
    for root, forced in ((tmp_path / "fast", False), (tmp_path / "general", True)):
        with StepWriter(root, global_step=5, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=5,
                        clock=lambda: 1.0, borrow_arrays=borrow) as w:  # fmt: skip
            for name, arr in arrays.items():
                w.write_tensor(name, arr, dtype=arr.dtype.newbyteorder("=").name if forced else None)
    for rel in ("events/000000000005/000000000005_worker_0.tfevents", "index/000000000/000000000005_worker_0.json"):
        assert (tmp_path / "fast" / rel).read_bytes() == (tmp_path / "general" / rel).read_bytes()
    got = _read_all(tmp_path / "fast", 5)
    for name, arr in arrays.items():
        assert got[name].size == arr.size and np.array_equal(got[name].reshape(arr.shape), arr)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cached_layout_and_general_encoder_agree(tmp_path: Path, dtype: str) -> None:
    """A C-contiguous array takes the cached-layout fast path, a Fortran-ordered copy of the
    same values the general encoder: the files are byte-identical, for every dtype."""
    values = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    for root, arr in ((tmp_path / "fast", values), (tmp_path / "general", np.asfortranarray(values))):
        assert arr.flags.c_contiguous == (root.name == "fast")
        with StepWriter(root, global_step=130, worker="worker_0", mode=ModeKeys.EVAL, mode_step=7,
                        clock=lambda: 2.5) as w:  # fmt: skip
            w.write_tensor("layer/t", arr)
            w.write_tensor("scalar", np.array(3, dtype))
    for rel in ("events/000000000130/000000000130_worker_0.tfevents", "index/000000000/000000000130_worker_0.json"):
        assert (tmp_path / "fast" / rel).read_bytes() == (tmp_path / "general" / rel).read_bytes()


def test_atomic_write_of_many_chunks_and_partial_write_resume(tmp_path: Path) -> None:
    """More chunks than one writev takes are written in batches; a partial write resumes at
    the right byte (the bookkeeping, checked on views)."""
    from sagemaker_debugger_ext.format._files import _advance, atomic_write

    chunks = [bytes([i % 251]) * (i % 7 + 1) for i in range(3000)]
    assert atomic_write(tmp_path / "many.bin", chunks) == sum(map(len, chunks))
    assert (tmp_path / "many.bin").read_bytes() == b"".join(chunks)
    views = [memoryview(b"abc"), memoryview(b"de"), memoryview(b"fgh")]
    _advance(views, 4)
    assert [bytes(v) for v in views] == [b"e", b"fgh"]
    _advance(views, 1)
    assert [bytes(v) for v in views] == [b"fgh"]


def test_background_writer_runs_calls_in_order_with_writes(tmp_path: Path) -> None:
    """submit_call jobs run on the writer thread in submission order with file writes; a
    failing job surfaces as StorageError; a closed writer refuses new work."""
    from sagemaker_debugger_ext._exceptions import ConfigValueError, StorageError
    from sagemaker_debugger_ext.format import BackgroundWriter

    seen: list[str] = []
    bg = BackgroundWriter(max_pending=1)
    bg.submit(tmp_path / "a.txt", b"a")
    bg.submit_call(lambda: seen.append((tmp_path / "a.txt").read_text()))
    bg.submit_group([(str(tmp_path / "b.txt"), [b"b", b"c"], False, False)])
    bg.submit_call(lambda: seen.append((tmp_path / "b.txt").read_text()))
    bg.flush()
    assert seen == ["a", "bc"]

    def fail() -> None:
        raise OSError(28, "No space left on device")

    bg.submit_call(fail)
    with pytest.raises(StorageError, match="No space left"):
        bg.flush()
    with pytest.raises(StorageError):
        bg.close()
    fresh = BackgroundWriter()
    fresh.close()
    with pytest.raises(StorageError, match="closed"):
        fresh.submit(tmp_path / "c.txt", b"c")
    with pytest.raises(ConfigValueError, match="max_pending"):
        BackgroundWriter(max_pending=0)


def test_uncounted_calls_never_block_and_keep_their_order(tmp_path: Path) -> None:
    """With the one counted place taken by a job that waits, uncounted calls still queue at
    once (the hook hands a step's reductions over this way) and run in submission order;
    their failure surfaces like a write's."""
    import threading

    from sagemaker_debugger_ext._exceptions import StorageError
    from sagemaker_debugger_ext.format import BackgroundWriter

    release = threading.Event()
    seen: list[int] = []
    bg = BackgroundWriter(max_pending=1)
    bg.submit_call(lambda: release.wait(timeout=30))  # holds the only counted place
    for i in range(5):  # would block on the counted place if these took it
        bg.submit_call(lambda i=i: seen.append(i), counted=False)
    release.set()
    bg.flush()
    assert seen == [0, 1, 2, 3, 4]

    def fail() -> None:
        raise ValueError("reduction failed")

    bg.submit_call(fail, counted=False)
    with pytest.raises(StorageError, match="reduction failed"):
        bg.flush()
    with pytest.raises(StorageError):
        bg.close()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", ">f4", "int64", "bool"])
@pytest.mark.parametrize("borrow", [False, True])
def test_write_scalars_writes_the_bytes_of_one_record_per_value(tmp_path: Path, dtype: str, borrow: bool) -> None:
    """write_scalars (a cached template) gives the bytes of write_tensor called once per
    0-d value, between other records, at a step whose fields differ from the last one's."""
    names = [f"smdebug/reductions/{op}/layer{i}.weight" for i in range(40) for op in ("min", "abs_mean")]
    values = (np.arange(len(names)) * 1.5 - 7).astype(dtype)
    files = []
    for root, batched in ((tmp_path / "one", False), (tmp_path / "many", True)):
        for step in (3, 1234):  # the Event.step field grows by one byte: another template
            with StepWriter(root, global_step=step, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=step,
                            clock=lambda: 2.5, borrow_arrays=borrow) as w:  # fmt: skip
                w.write_tensor("first", np.ones(3, np.float32))
                if batched:
                    w.write_scalars(names, values)
                    w.write_scalars([], values[:0])
                else:
                    for name, value in zip(names, values, strict=True):
                        w.write_tensor(name, np.asarray(value).reshape(()))
                w.write_tensor("last", np.arange(2))
        files.append({p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()})
    assert len(files[0]) == 4 and files[0] == files[1]
    decoded = _read_all(tmp_path / "many", 1234)
    assert decoded[names[3]].shape == () and decoded[names[3]] == values[3]


def test_write_scalars_refuses_values_that_do_not_fit(tmp_path: Path) -> None:
    from sagemaker_debugger_ext._exceptions import ConfigValueError

    with StepWriter(tmp_path, global_step=0, worker="worker_0") as w:
        with pytest.raises(ConfigValueError, match="values"):
            w.write_scalars(["a", "b"], np.ones(3, np.float32))
        with pytest.raises(ConfigValueError, match="values"):
            w.write_scalars(["a"], np.array(["text"]))
        with pytest.raises(ConfigTypeError, match="name"):
            w.write_scalars(["a", ""], np.ones(2, np.float32))
