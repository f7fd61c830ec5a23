"""Trial summaries and step formatting, in process, on the real smdebug sample run."""

from __future__ import annotations

import json

import pytest

from sagemaker_debugger_ext._exceptions import ConfigValueError, StorageNotFoundError
from sagemaker_debugger_ext.reports import format_steps, open_trial, summarize_trial


@pytest.mark.parametrize(
    ("steps", "text"),
    [
        ((), "-"),
        ((4,), "4"),
        ((0, 6), "0, 6"),
        ((0, 1, 2, 3), "0..3"),
        ((0, 10, 20, 30), "0..30 every 10"),
        ((0, 1, 2, 3, 6, 7), "0..3, 6..7"),
        ((0, 2, 5, 9, 14, 20, 27), "0..27 (7 steps)"),
    ],
    ids=["empty", "one", "few", "run", "interval", "runs", "irregular"],
)
def test_format_steps(steps, text):
    """Steps are shown compactly: ranges, intervals, runs, else first..last with a count."""
    assert format_steps(steps) == text


def test_open_trial_fails_fast_without_collections(tmp_path):
    """A folder without collections/ is refused at once, naming the path."""
    with pytest.raises(StorageNotFoundError) as err:
        open_trial(tmp_path)
    assert str(tmp_path) in str(err.value)


def test_summarize_sample_run(smdebug_runs):
    """The summary matches what smdebug's sample script saved, and is JSON-able."""
    summary = summarize_trial(open_trial(smdebug_runs / "sample_run"))
    assert summary.workers == ("worker_0",)
    assert summary.training_ended is True
    assert [(m.mode, m.global_steps) for m in summary.modes] == [("TRAIN", (0, 1, 2, 3, 6, 7)), ("EVAL", (4, 5))]
    rows = {t.name: t for t in summary.tensors}
    assert rows["gradient/Net_fc2.weight"].shape == (2, 3)
    assert rows["gradient/Net_fc2.weight"].collections == ("gradients",)
    assert rows["CrossEntropyLoss_output_0"].shape == ()
    assert json.loads(json.dumps(summary.to_dict()))["collections"]["gradients"] == 4


def test_summarize_unknown_collection(smdebug_runs):
    """An unknown collection is named with the ones the trial has."""
    with pytest.raises(ConfigValueError) as err:
        summarize_trial(open_trial(smdebug_runs / "sample_run"), collection="nope")
    assert "'nope'" in str(err.value) and "losses" in str(err.value)
