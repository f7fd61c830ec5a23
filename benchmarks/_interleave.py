"""The overhead benchmarks' A/B method: blocks of the variants interleaved in ABBA order."""

from __future__ import annotations

from collections.abc import Callable, Mapping


def abba_totals(blocks: Mapping[str, Callable[[], float]], cycles: int) -> dict[str, float]:
    """The seconds each variant's blocks took in all (each block returns its own time), over ``cycles``
    cycles of one block of every variant: in the given order in even cycles, reversed in odd ones,
    so that slow drifts in the machine's speed fall on every variant alike."""
    totals = dict.fromkeys(blocks, 0.0)
    keys = list(blocks)
    for cycle in range(cycles):
        for key in keys if cycle % 2 == 0 else keys[::-1]:
            totals[key] += blocks[key]()
    return totals
