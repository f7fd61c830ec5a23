"""Zero-length and string tensors through the hook and the reader (issue 16 items 4 and 5).

Reductions of a zero-length tensor: ``sum``/``l1``/``l2`` 0, ``prod`` 1, the others NaN;
of a string tensor: none (ReductionNotApplicableError from the reader, nothing stored).
The hook's stored reductions and the reader's computed ones are the same function.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext._exceptions import ReductionNotApplicableError
from sagemaker_debugger_ext._reductions import ALLOWED_NORMS, ALLOWED_REDUCTIONS, compute_reduction
from sagemaker_debugger_ext.hooks import Hook, ReductionConfig, SaveConfig, TrainingContext
from sagemaker_debugger_ext.trials import create_trial

EMPTY = {"sum": 0.0, "prod": 1.0, "l1": 0.0, "l2": 0.0}
OPS = (*ALLOWED_REDUCTIONS, *ALLOWED_NORMS)


def _expected(op: str) -> float:
    return EMPTY.get(op, float("nan"))


def _hook(tmp_path: Path, **kw: object) -> Hook:
    return Hook(out_dir=tmp_path / "run", context=TrainingContext(), save_config=SaveConfig(save_interval=1), **kw)  # type: ignore[arg-type]


def test_zero_length_tensor_is_saved_and_read_back(tmp_path: Path) -> None:
    """Item 5: save_tensor("empty", np.zeros((0,))) wrote nothing and said nothing."""
    hook = _hook(tmp_path)
    hook.advance_step()
    hook.save_tensor("empty", np.zeros((0,), dtype=np.float32), "c")
    hook.save_tensor("empty2d", np.zeros((3, 0), dtype=np.int64), "c")
    hook.close()
    trial = create_trial(tmp_path / "run", poll_interval_s=0.01, wait_timeout_s=1)
    value = trial.tensor("empty").value(0)
    assert (value.shape, value.dtype) == ((0,), np.float32)
    assert trial.tensor("empty2d").value(0).shape == (3, 0)
    for op in OPS:  # item 4, reader side: computed from the raw value
        got = trial.tensor("empty").reduction_value(0, op)
        np.testing.assert_equal(float(got), _expected(op))
    assert trial.tensor("empty2d").reduction_value(0, "max").dtype == np.float64


def test_stored_reductions_of_edge_tensors_match_the_reader(tmp_path: Path) -> None:
    """Item 4, hook side: stored reductions of a zero-length tensor are the same values; a
    string tensor is saved raw and gets no stored reductions (the hook does not crash)."""
    hook = _hook(tmp_path, include_collections=["r"])
    hook.get_collection("r").include("^r_")
    hook.get_collection("r").reduction_config = ReductionConfig(
        reductions=list(ALLOWED_REDUCTIONS), norms=list(ALLOWED_NORMS), abs_reductions=["max"], save_raw_tensor=True
    )
    hook.advance_step()
    hook.record_tensor_value("r_empty", np.zeros((0,), dtype=np.float32))
    hook.record_tensor_value("r_text", np.array(["a", "bc"]))
    hook.close()
    trial = create_trial(tmp_path / "run", poll_interval_s=0.01, wait_timeout_s=1)
    stored = trial.tensor("r_empty").reduction_values(0)
    assert {op for op, _ in stored} == set(OPS)
    for (op, _), value in stored.items():
        np.testing.assert_equal(float(value), _expected(op))
        assert value.dtype == np.float32
    text = trial.tensor("r_text")
    assert text.value(0).tolist() == ["a", "bc"]
    assert text.reduction_values(0) == {}
    for op in ("max", "min", "mean", "sum", "l2"):
        with pytest.raises(ReductionNotApplicableError, match=rf"{op}.*'r_text' at step 0.*<U2"):
            text.reduction_value(0, op)
    with pytest.raises(ValueError):  # code that caught numpy's ValueError still does
        text.reduction_value(0, "max")


@pytest.mark.parametrize("op", OPS)
def test_one_implementation_for_empty_integer_tensors(op: str) -> None:
    out = compute_reduction(op, np.zeros((0, 4), dtype=np.int32), is_abs=True)
    np.testing.assert_equal(float(out), _expected(op))
