"""Noise-aware definitions of the loss and classification rules (``noise_aware=True``).

AWS's definitions compare single numbers: a window mean with another, a loss with its best,
a misprediction fraction with a threshold. On healthy training those numbers carry the run's
own noise (batch-to-batch loss noise, a lucky minimum, a few hundred samples), so an exact
comparison fires by chance. With ``noise_aware=True`` a condition fires only when it holds
beyond that noise at the rule's ``confidence``, the noise being measured from the saved data:

- a window of saved losses has mean ``m`` and standard error ``sigma * sqrt(1/k)``, ``sigma``
  estimated from successive differences of the saved losses (a trend barely inflates it,
  a frozen loss gives 0), see :func:`noise_sigma`;
- a misprediction fraction ``w / n`` is judged by its Wilson score interval
  (:func:`wilson_interval`).

AWS's defaults keep AWS's semantics (``noise_aware`` defaults to False); the recommended
settings (``RECOMMENDED_RULE_PARAMETERS``) turn it on. Reasoning: ``docs/rules.md``,
"Noise-aware definitions".
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import Any

from ..._exceptions import RuleParameterError
from ..._rule_params import Kind, Param

__all__ = [
    "DEFAULT_CONFIDENCE",
    "NOISE_PARAMS",
    "check_noise_params",
    "confidence_of",
    "noise_sigma",
    "wilson_interval",
    "z_value",
]

DEFAULT_CONFIDENCE = 0.999


def _confidence_range(value: float) -> str | None:
    return None if 0.5 < value < 1 else "a probability between 0.5 and 1 (exclusive), e.g. 0.999"


NOISE_PARAMS = (
    Param(
        name="noise_aware",
        kind=Kind.BOOL,
        default=False,
        doc="fire only beyond the run's measured noise (extension; False: AWS's exact comparisons)",
    ),
    Param(
        name="confidence",
        kind=Kind.FLOAT,
        doc=f"one-sided confidence of noise_aware comparisons (default {DEFAULT_CONFIDENCE:g})",
        check=_confidence_range,
    ),
)


def check_noise_params(rule_name: str, params: Mapping[str, Any], *dependent: str) -> None:
    """Raise RuleParameterError when ``confidence`` (or another of ``dependent``) is set without ``noise_aware``."""
    if params["noise_aware"]:
        return
    for name in ("confidence", *dependent):
        if params.get(name) is not None:
            msg = f"{rule_name}: {name!r} applies only with noise_aware=True (got {name}={params[name]!r}, noise_aware=False)"
            raise RuleParameterError(msg, rule_name=rule_name)


def confidence_of(params: Mapping[str, Any]) -> float:
    """The rule's ``confidence`` (``DEFAULT_CONFIDENCE`` when not set)."""
    confidence = params.get("confidence")
    return DEFAULT_CONFIDENCE if confidence is None else float(confidence)


def z_value(params: Mapping[str, Any]) -> float:
    """The one-sided normal quantile of the rule's ``confidence``."""
    return NormalDist().inv_cdf(confidence_of(params))


def noise_sigma(*series: Sequence[float]) -> float | None:
    """Noise (standard deviation) of saved values, from successive differences within each series.

    ``sqrt(sum(diff**2) / (2 * number of diffs))``: for independent noise around a slowly
    moving mean each difference has variance ``2 sigma**2`` (a trend adds only its small
    per-save change); identical values give 0. None when no series has two values.
    """
    diffs = [b - a for s in series for a, b in itertools.pairwise(s)]
    if not diffs:
        return None
    return math.sqrt(sum(d * d for d in diffs) / (2 * len(diffs)))


def wilson_interval(successes: int, n: int, z: float) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion ``successes / n`` at normal quantile ``z``."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)
