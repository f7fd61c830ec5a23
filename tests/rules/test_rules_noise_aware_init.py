"""Issue 33, third round: PoorWeightInitialization judged early weight growth as a poor initialisation
(the generated CNN at SGD lr 0.03, momentum 0.9: variance ratio 2.7 at step 0, 13.5 at step 5, 134 at
step 20). With the recommended settings the ratio is judged on the first saved step only, the forward
pass with the initial weights; a truly poor initialisation (ratio over the threshold there) still fires."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from sagemaker_debugger_ext.exceptions import RuleParameterError
from sagemaker_debugger_ext.rules import recommended_rule_parameters
from sagemaker_debugger_ext.rules.builtin import PoorWeightInitialization

GRADS = {"gradients": ["^gradient/"], "losses": ["loss"]}


def _run(ratios: dict[int, float]) -> dict[int, dict[str, Any]]:
    """Two layers' activation inputs whose variance ratio at step s is ``ratios[s]``; healthy gradients and loss."""
    rng = np.random.default_rng(0)
    out = {}
    for s, r in ratios.items():
        a, b = rng.standard_normal((2, 256))
        out[s] = {
            "l1_relu_input_0": (a / a.std()).astype(np.float32),
            "l2_relu_input_0": (b / b.std() * np.sqrt(r)).astype(np.float32),
            "gradient/fc.weight": (rng.standard_normal((8, 4)) * 0.1).astype(np.float32),
            "loss": np.float32(2.0 - 0.1 * s),
        }
    return out


GROWTH = {0: 2.7, 1: 4.0, 2: 6.0, 3: 8.5, 4: 11.0, 5: 13.5, 6: 30.0, 7: 60.0, 8: 100.0, 9: 134.0}


def test_early_weight_growth_fires_at_aws_defaults_and_is_quiet_recommended(
    make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """Fine at step 0 (ratio 2.7), over threshold 10 from step 4 on: AWS's defaults fire at step 4,
    the recommended settings (ratio judged at the first saved step only) stay quiet."""
    trial = make_trial(_run(GROWTH), collections=GRADS)
    assert fires(PoorWeightInitialization(trial)) == 4
    assert fires(PoorWeightInitialization(trial, **recommended_rule_parameters("PoorWeightInitialization"))) is None


def test_poor_initialisation_still_fires_recommended(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """A ratio of 50 at the first saved step (a poor init) fires at that step with the recommended settings."""
    rule = PoorWeightInitialization(
        make_trial(_run(dict.fromkeys(range(10), 50.0)), collections=GRADS),
        **recommended_rule_parameters("PoorWeightInitialization"),
    )
    assert fires(rule) == 0
    assert "variance ratio" in rule.findings[0].message


def test_ratio_steps_counts_saved_steps(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """``ratio_steps`` counts saved steps, not step numbers: with save_interval 5 the second saved step is 5."""
    trial = make_trial(_run({0: 2.0, 5: 20.0}), collections=GRADS)
    assert fires(PoorWeightInitialization(trial, ratio_steps="1")) is None
    assert fires(PoorWeightInitialization(trial, ratio_steps="2")) == 5


def test_ratio_steps_rejects_negative(make_trial: Callable[..., Any]) -> None:
    with pytest.raises(RuleParameterError, match="ratio_steps"):
        PoorWeightInitialization(make_trial(_run({0: 1.0}), collections=GRADS), ratio_steps="-1")
