"""The arena a saved step copies its tensors into: private copies, one buffer reused from
step to step (or each copy's own array, ``SlotCopies``), big ones not kept."""

from __future__ import annotations

import numpy as np

from sagemaker_debugger_ext.hooks._arena import ArenaPool, CopyArena, SlotCopies


def test_copies_are_private_c_order_and_typed() -> None:
    arena = CopyArena()
    source = np.arange(12, dtype=np.float32).reshape(3, 4)
    copies = [arena.copy(source), arena.copy(source.T), arena.copy(np.array([True, False])), arena.copy(np.int64(7))]
    source += 100  # the training changes its tensor afterwards
    np.testing.assert_array_equal(copies[0], np.arange(12).reshape(3, 4))
    np.testing.assert_array_equal(copies[1], np.arange(12).reshape(3, 4).T)
    assert copies[1].flags.c_contiguous and copies[2].dtype == np.bool_ and copies[3].shape == ()
    for copy in copies:  # each at its dtype's alignment
        assert copy.__array_interface__["data"][0] % copy.dtype.alignment == 0
    text = np.array(["a", "bc"])
    copied = arena.copy(text)  # not a number: an ordinary copy
    assert copied.tolist() == ["a", "bc"] and not np.shares_memory(copied, text)


def test_one_buffer_is_reused_from_step_to_step() -> None:
    pool = ArenaPool()
    tensors = [np.full(n, i, np.float32) for i, n in enumerate((300_000, 5, 200_000))]  # 2 MB: 2 chunks
    arena = pool.take()
    first = [arena.copy(t) for t in tensors]
    assert not np.shares_memory(first[0], first[2])
    pool.give_back(arena)  # the step's files are written
    again = pool.take()
    assert again is arena
    second = [again.copy(t) for t in tensors]  # now one buffer holds them all
    base = second[0].base
    assert all(s.base is base for s in second) and base.size >= sum(t.nbytes for t in tensors)
    for copy, tensor in zip(second, tensors, strict=True):
        np.testing.assert_array_equal(copy, tensor)


def test_big_arenas_are_not_kept() -> None:
    pool = ArenaPool(keep_bytes=4 << 20)
    big = pool.take()
    big.copy(np.zeros(2 << 20, np.float32))  # 8 MB
    pool.give_back(big)
    assert pool.take() is not big
    small = pool.take()
    small.copy(np.zeros(1000, np.float32))
    pool.give_back(small)
    assert pool.take() is small


def test_without_reuse_every_copy_is_an_ordinary_array() -> None:
    """Hooks that do not set reuse_copy_buffer (PyTorch: measured dearer there) copy as NumPy does."""
    pool = ArenaPool(reuse=False)
    arena = pool.take()
    source = np.arange(6, dtype=np.float32)
    copy = arena.copy(source)
    source[0] = 100
    assert copy.base is None and copy[0] == 0
    pool.give_back(arena)
    assert arena.capacity == 0


def test_slot_copies_keep_each_copys_array_for_the_next_step() -> None:
    pool = ArenaPool(arena=SlotCopies)
    source = np.arange(12, dtype=np.float32).reshape(3, 4)
    arena = pool.take()
    assert isinstance(arena, SlotCopies)
    first = [arena.copy(source), arena.copy(np.array(["a", "bc"])), arena.copy(np.int64(7))]
    source += 100  # the training changes its tensor afterwards
    np.testing.assert_array_equal(first[0], np.arange(12).reshape(3, 4))
    assert first[1].tolist() == ["a", "bc"] and first[2].shape == () and first[2] == 7
    pool.give_back(arena)
    assert pool.bytes_copied == source.nbytes + first[1].nbytes + 8
    again = pool.take()
    assert again is arena and arena.capacity == source.nbytes + 8  # the strings' copy is not kept
    second = [again.copy(source), again.copy(source.T), again.copy(np.int64(9))]
    assert second[0] is first[0]  # same shape and dtype: the same array
    np.testing.assert_array_equal(second[0], source)
    np.testing.assert_array_equal(second[1], source.T)  # another shape in that slot: a fresh copy
    assert not np.shares_memory(second[1], first[1]) and second[2] is first[2] and second[2] == 9
    source -= 100
    np.testing.assert_array_equal(second[0], np.arange(12).reshape(3, 4) + 100)
    np.testing.assert_array_equal(second[1], (np.arange(12).reshape(3, 4) + 100).T)


def test_slot_copies_of_a_strided_source_are_plain_copies() -> None:
    arena = SlotCopies()
    source = np.arange(12, dtype=np.float32).reshape(3, 4)
    kept = arena.copy(source.T.copy())  # (4, 3), C order
    arena.reset()
    strided = arena.copy(source.T)  # (4, 3), not C-contiguous: not copied into the kept array
    assert strided is not kept
    np.testing.assert_array_equal(strided, source.T)
