"""DeadRelu, SaturatedActivation, CheckInputImages, NLPSequenceRatio."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sagemaker_debugger_ext.rules.builtin import (
    CheckInputImages,
    DeadRelu,
    NLPSequenceRatio,
    SaturatedActivation,
)

RNG = np.random.default_rng(2)


def test_dead_relu(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """Most units never active fires; a healthy layer does not."""
    healthy = np.maximum(RNG.standard_normal((32, 10)), 0).astype(np.float32)
    dead = healthy.copy()
    dead[:, :6] = 0.0
    trial = make_trial({0: {"layers.1_relu_output_0": healthy}, 1: {"layers.1_relu_output_0": dead}})
    assert fires(DeadRelu(trial)) == 1
    assert fires(DeadRelu(trial, threshold_layer="70")) is None


def test_saturated_activation(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """tanh inputs beyond ±9.5 for most units fire; sigmoid uses its own range."""
    ok = RNG.standard_normal((16, 8)).astype(np.float32)
    trial = make_trial(
        {
            0: {"l_tanh_input_0": ok, "s_sigmoid_input_0": ok},
            1: {"l_tanh_input_0": np.sign(ok) * 20 + ok, "s_sigmoid_input_0": ok},
        }
    )
    rule = SaturatedActivation(trial)
    assert fires(rule) == 1
    assert rule.findings[0].tensor == "l_tanh_input_0"
    sig = make_trial({0: {"s_sigmoid_input_0": np.abs(ok) + 10}})
    assert fires(SaturatedActivation(sig)) is None
    assert fires(SaturatedActivation(sig, threshold_sigmoid="(-5, 5)")) == 0


def test_check_input_images(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """Un-normalised images fire once threshold_samples images were seen."""
    raw = RNG.uniform(0, 1, (300, 3, 4, 4)).astype(np.float32)
    normalised = ((raw - 0.5) / 0.29).astype(np.float32)
    regex = ".*model_input_0"
    assert fires(CheckInputImages(make_trial({s: {"model_input_0": raw} for s in range(3)}), regex=regex)) == 1
    assert (
        fires(CheckInputImages(make_trial({s: {"model_input_0": normalised} for s in range(3)}), regex=regex)) is None
    )


def test_nlp_sequence_ratio(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """More than 50 % padding tokens (0) fires; token/threshold lists pair up."""
    short = np.array([[5, 6, 7, 0], [8, 9, 0, 0]])
    padded = np.array([[5, 0, 0, 0], [8, 0, 0, 0]])
    trial = make_trial({0: {"embedding0_input_0": short}, 1: {"embedding0_input_0": padded}})
    assert fires(NLPSequenceRatio(trial)) == 1
    assert fires(NLPSequenceRatio(trial, token_values="0,5", token_thresholds_percent="90,10")) == 0
