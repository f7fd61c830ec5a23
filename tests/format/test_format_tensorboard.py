"""TensorBoardWriter output as read by TensorBoard's own EventAccumulator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext._exceptions import ConfigValueError, PathEscapeError
from sagemaker_debugger_ext.format import FooterCheck, TensorBoardWriter, read_records


def _accumulator(path: Path):  # type: ignore[no-untyped-def]
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(path), size_guidance={"scalars": 0, "histograms": 0})
    acc.Reload()
    return acc


def test_event_accumulator_reads_scalars_and_histograms(tmp_path: Path) -> None:
    """Scalars and histograms written over 3 steps are read back by TensorBoard."""
    rng = np.random.default_rng(1)
    values = {s: rng.normal(size=500) for s in range(3)}
    with TensorBoardWriter(tmp_path, mode_name="TRAIN") as tb:
        for step in range(3):
            tb.add_scalar("losses/loss", 1.0 / (step + 1), step)
            assert tb.add_histogram("weights/w", values[step], step)
    files = sorted((tmp_path / "TRAIN").glob("*.tfevents"))
    assert [f.name.split("_")[0] for f in files] == ["000000000000", "000000000001", "000000000002"]
    acc = _accumulator(tmp_path / "TRAIN")
    scalars = acc.Scalars("losses/loss")
    assert [(s.step, round(s.value, 6)) for s in scalars] == [(0, 1.0), (1, 0.5), (2, round(1 / 3, 6))]
    hists = acc.Histograms("weights/w")
    assert [h.step for h in hists] == [0, 1, 2]
    h = hists[1].histogram_value
    assert h.num == 500 and sum(h.bucket) == 500
    assert h.min == pytest.approx(values[1].min()) and h.max == pytest.approx(values[1].max())
    assert h.sum_squares == pytest.approx(float(values[1] @ values[1]))
    assert h.bucket_limit[-1] >= h.max and h.bucket[0] == 0


def test_tensorboard_files_carry_real_crcs(tmp_path: Path) -> None:
    """TensorBoard files pass the full payload-CRC check."""
    tb = TensorBoardWriter(tmp_path, mode_name="EVAL")
    tb.add_scalar("a", 3.0, 4)
    tb.flush()
    tb.add_scalar("b", 4.0, 4)  # same step: the file is rewritten with both records
    tb.close()
    (f,) = (tmp_path / "EVAL").glob("*.tfevents")
    assert len(list(read_records(str(f), check=FooterCheck.FULL, allow_torn_tail=False))) == 2


def test_histogram_of_non_finite_values_is_skipped(tmp_path: Path) -> None:
    """All-NaN or empty input writes no histogram; a bad scalar raises a clear error."""
    tb = TensorBoardWriter(tmp_path, mode_name="TRAIN")
    assert not tb.add_histogram("h", np.array([np.nan, np.inf]), 0)
    assert not tb.add_histogram("h", np.array([]), 0)
    with pytest.raises(ConfigValueError, match="'value' must be a number"):
        tb.add_scalar("s", np.array([1.0, 2.0]), 0)
    tb.close()
    assert not (tmp_path / "TRAIN").exists()
    with pytest.raises(PathEscapeError):
        TensorBoardWriter(tmp_path, mode_name="../x")


def test_decode_event_reads_back_scalars_histograms_and_plugin_data(tmp_path: Path) -> None:
    """Our own general decoder returns what TensorBoardWriter and StepWriter encoded."""
    from sagemaker_debugger_ext.format import StepWriter, decode_event
    from sagemaker_debugger_ext.modes import ModeKeys

    with TensorBoardWriter(tmp_path / "tb", mode_name="TRAIN", clock=lambda: 5.0) as tb:
        tb.add_scalar("loss", 0.25, 3)
        tb.add_histogram("w", np.array([-1.0, 0.5, 0.5, 2.0]), 3)
    (f,) = (tmp_path / "tb" / "TRAIN").glob("*.tfevents")
    scalar, hist = (decode_event(r.payload) for r in read_records(str(f)))
    assert scalar["step"] == 3 and scalar["wall_time"] == 5.0
    assert scalar["values"] == [{"tag": "loss", "simple_value": 0.25}]
    h = hist["values"][0]["histo"]
    assert (h["min"], h["max"], h["num"], h["sum"], h["sum_squares"]) == (-1.0, 2.0, 4.0, 2.0, 5.5)
    assert sum(h["bucket"]) == 4 and len(h["bucket"]) == len(h["bucket_limit"])
    with StepWriter(tmp_path / "t", global_step=9, worker="worker_0", mode=ModeKeys.EVAL, mode_step=2) as w:
        w.write_tensor("x", np.arange(3, dtype=np.int16))
    (ev,) = (tmp_path / "t").rglob("*.tfevents")
    (rec,) = read_records(str(ev))
    value = decode_event(rec.payload)["values"][0]
    assert value["plugin_data"] == [("mode_step", "2"), ("mode", "2")]
    assert value["tensor"].tolist() == [0, 1, 2] and value["tensor"].dtype == np.int16
