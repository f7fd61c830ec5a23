"""ClassImbalance, Confusion (incl. smdebug's 990/10 vector)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sagemaker_debugger_ext.rules.builtin import ClassImbalance, Confusion


def test_class_imbalance_990_10_fires_at_step_3(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """smdebug's vector: 990 zeros and 10 ones seen at step 3 fire at step 3."""
    labels = np.array([0] * 990 + [1] * 10)
    trial = make_trial({3: {"labels": labels, "predictions": labels}})
    assert fires(ClassImbalance(trial)) == 3


def test_class_imbalance_waits_for_samples_and_checks_mispredictions(
    make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """Balanced labels stay silent; a class mostly mispredicted fires once `samples` labels of
    warm-up (steps 0-2, 600 labels) and then `samples` more (steps 3-5) were seen."""
    y = np.array([0, 1] * 100)
    wrong = np.where(y == 1, 0, 0)
    steps = {s: {"labels": y, "predictions": wrong} for s in range(8)}
    assert fires(ClassImbalance(make_trial(steps))) == 5
    assert fires(ClassImbalance(make_trial({s: {"labels": y, "predictions": y} for s in range(4)}))) is None
    probs = np.eye(2)[y].astype(np.float32)
    assert (
        fires(ClassImbalance(make_trial({s: {"labels": y, "predictions": probs} for s in range(4)}), argmax="true"))
        is None
    )


def test_confusion(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """A good classifier stays silent; confusing class 2 with 1 fires with the off-diagonal share."""
    y = np.array([0, 1, 2] * 50)
    bad = y.copy()
    bad[y == 2] = 1
    trial = make_trial({0: {"labels": y, "predictions": y}, 1: {"labels": y, "predictions": bad}})
    rule = Confusion(trial)
    assert fires(rule) == 1
    assert any(f.value == 0.5 for f in rule.findings)
    assert fires(Confusion(trial, min_diag="0.4", max_off_diag="0.6")) is None
