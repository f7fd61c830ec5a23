"""ExplodingTensor, AllZero, TensorVariance, UnchangedTensor, SimilarAcrossRuns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from sagemaker_debugger_ext._exceptions import RuleParameterError
from sagemaker_debugger_ext.rules.builtin import (
    AllZero,
    ExplodingTensor,
    SimilarAcrossRuns,
    TensorVariance,
    UnchangedTensor,
)

RNG = np.random.default_rng(0)


def _w(scale: float = 1.0) -> np.ndarray:
    return (RNG.standard_normal((4, 3)) * scale).astype(np.float32)


def test_exploding_tensor_nan_and_inf(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """NaN fires; inf fires unless only_nan; finite tensors stay silent."""
    inf = _w()
    inf[0, 0] = np.inf
    nan = _w()
    nan[1, 1] = np.nan
    trial = make_trial({0: {"a": _w()}, 1: {"a": inf}, 2: {"a": nan}})
    assert fires(ExplodingTensor(trial)) == 1
    assert fires(ExplodingTensor(trial, only_nan="True")) == 2
    assert fires(ExplodingTensor(make_trial({s: {"a": _w()} for s in range(3)}))) is None


def test_exploding_tensor_report_names_tensor(make_trial: Callable[..., Any]) -> None:
    """The finding names the tensor, the step and the count of non-finite values."""
    bad = _w()
    bad[:] = np.nan
    rule = ExplodingTensor(make_trial({0: {"good": _w(), "bad": bad}}), tensor_regex="b.*")
    assert rule.invoke_at_step(0)
    (finding,) = rule.findings
    assert (finding.step, finding.tensor, finding.value) == (0, "bad", 12)


def test_all_zero(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """All-zero fires at threshold 100; 75 % zeros fires only at threshold <= 75."""
    part = np.zeros((4,), np.float32)
    part[0] = 1.0
    trial = make_trial({0: {"x": _w()}, 1: {"x": part}, 2: {"x": np.zeros((4,), np.float32)}})
    assert fires(AllZero(trial, tensor_regex="x")) == 2
    assert fires(AllZero(trial, tensor_regex="x", threshold="75")) == 1


def test_all_zero_requires_a_selection(make_trial: Callable[..., Any]) -> None:
    """Neither collection_names nor tensor_regex is a parameter error."""
    with pytest.raises(RuleParameterError, match="one of 'collection_names' or 'tensor_regex'"):
        AllZero(make_trial({0: {"x": _w()}}))


def test_tensor_variance(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """Variance above max_threshold or below min_threshold fires."""
    trial = make_trial({0: {"w": _w(1.0)}, 1: {"w": _w(100.0)}, 2: {"w": np.ones((4, 3), np.float32)}})
    assert fires(TensorVariance(trial, tensor_regex="w", max_threshold="100")) == 1
    assert fires(TensorVariance(trial, tensor_regex="w", min_threshold="1e-6")) == 2
    idle = TensorVariance(trial, tensor_regex="w")  # no threshold: evaluates nothing and says what to set
    assert fires(idle) is None
    assert idle.steps_evaluated == 0
    assert "'max_threshold' and/or 'min_threshold'" in (idle.status_note() or "")


def test_unchanged_tensor_fires_at_step_2(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """smdebug's vector: identical tensors at steps 0,1,2 fire at step 2, not at 0-1."""
    same = _w()
    trial = make_trial({s: {"t": same} for s in range(3)})
    assert fires(UnchangedTensor(trial, tensor_regex=".*")) == 2
    changing = make_trial({s: {"t": same + s} for s in range(5)})
    assert fires(UnchangedTensor(changing, tensor_regex=".*")) is None


def test_similar_across_runs(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """Identical runs stay silent; a run that diverges at step 2 fires at step 2."""
    values = {s: {"w": _w()} for s in range(4)}
    base = make_trial(values)
    same = make_trial(values)
    diverged = make_trial({s: ({"w": v["w"] + 1} if s >= 2 else v) for s, v in values.items()})
    assert fires(SimilarAcrossRuns(base, other_trials=[same])) is None
    assert fires(SimilarAcrossRuns(base, other_trials=[diverged])) == 2
    with pytest.raises(RuleParameterError, match="other_trial_0"):
        SimilarAcrossRuns(base)
