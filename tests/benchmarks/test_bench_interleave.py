"""abba_totals: the overhead benchmarks' interleaving of variant blocks."""

from __future__ import annotations

from benchmarks._interleave import abba_totals


def test_blocks_run_abba_and_each_variant_totals_its_own_times() -> None:
    """Even cycles in the given order, odd ones reversed; each total is the sum of its blocks' returns."""
    order: list[str] = []

    def block(key: str, seconds: float) -> float:
        order.append(key)
        return seconds

    blocks = {
        "base": lambda: block("base", 1.0),
        "hook": lambda: block("hook", 0.25),
        "floor": lambda: block("floor", 2),
    }
    totals = abba_totals(blocks, 3)
    assert order == ["base", "hook", "floor", "floor", "hook", "base", "base", "hook", "floor"]
    assert totals == {"base": 3.0, "hook": 0.75, "floor": 6.0}
    assert list(totals) == ["base", "hook", "floor"]
