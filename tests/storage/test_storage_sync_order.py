"""sync_dir's order: whole steps in step order, also after a pass failed between a step's event and index."""

from __future__ import annotations

from pathlib import Path

from sagemaker_debugger_ext.format._layout import event_key, index_key
from sagemaker_debugger_ext.storage._sync import _steps_in_order


def _item(key: str) -> tuple[str, Path, tuple[int, int]]:
    return key, Path(key), (1, 1)


def test_an_index_whose_event_went_earlier_is_retried_before_later_steps() -> None:
    """A disk that filled after step 19's event: 19's index goes before step 20 (no gap at 19)."""
    walk = [_item(event_key(20, "worker_0")), _item(index_key(19, "worker_0")), _item(index_key(20, "worker_0"))]
    assert [key for key, _, _ in _steps_in_order(walk)] == [
        index_key(19, "worker_0"),
        event_key(20, "worker_0"),
        index_key(20, "worker_0"),
    ]


def test_each_index_follows_its_event() -> None:
    """The ordinary pass: event, index, event, index in the walk's step order."""
    walk = [_item(event_key(s, "worker_0")) for s in (0, 1)] + [_item(index_key(s, "worker_0")) for s in (0, 1)]
    assert [key for key, _, _ in _steps_in_order(walk)] == [
        event_key(0, "worker_0"),
        index_key(0, "worker_0"),
        event_key(1, "worker_0"),
        index_key(1, "worker_0"),
    ]


def test_the_end_marker_goes_after_every_file_of_the_same_pass(tmp_path: Path) -> None:
    """A pass that finds the marker and the last steps uploads the marker last, though the walk
    meets it first (top-level files before folders): a rule job that sees it finds the last step."""
    from sagemaker_debugger_ext.format._layout import END_OF_JOB_FILE
    from sagemaker_debugger_ext.storage._memory import MemoryStorage

    local = tmp_path / "debug-output"
    for key in (event_key(7, "worker_0"), index_key(7, "worker_0"), END_OF_JOB_FILE, "system/" + END_OF_JOB_FILE):
        (local / key).parent.mkdir(parents=True, exist_ok=True)
        (local / key).write_bytes(b"x")
    (local / "system" / "a.json").write_bytes(b"{}")
    store = MemoryStorage()
    assert store.sync_dir(local) == 5
    order = list(store.objects)
    assert sorted(order[-2:]) == sorted([END_OF_JOB_FILE, "system/" + END_OF_JOB_FILE]), order
    assert order.index(index_key(7, "worker_0")) > order.index(event_key(7, "worker_0"))
