"""Noise-aware definitions of the loss and classification rules (``noise_aware=True``).

AWS's definitions compare single numbers: a window mean with another, a loss with its best,
a misprediction fraction with a threshold. On healthy training those numbers carry the run's
own noise (batch-to-batch loss noise, a lucky minimum, a few hundred samples), so an exact
comparison fires by chance. With ``noise_aware=True`` a condition fires only when it holds
beyond that noise at the rule's ``confidence``, the noise being measured from the saved data:

- a window of saved losses has mean ``m`` and standard error ``sigma * sqrt(1/k)``, ``sigma``
  estimated from successive differences of the saved losses (a trend barely inflates it,
  a frozen loss gives 0), see :func:`noise_sigma`; where the saved losses are not independent
  (Keras logs the running mean over the epoch), at least the spread of the window means
  themselves (:func:`window_spread`);
- a misprediction fraction ``w / n`` is judged by its Wilson score interval
  (:func:`wilson_interval`);
- a rate that must be *below* a small threshold (a ReLU unit active in fewer than 1 % of the
  samples) by the exact one-sided binomial test (:func:`below_rate_beyond_noise`): the normal
  approximation and Wilson's bound are poor at counts near 0.

AWS's defaults keep AWS's semantics (``noise_aware`` defaults to False); the recommended
settings (``RECOMMENDED_RULE_PARAMETERS``) turn it on. Reasoning: ``docs/rules.md``,
"Noise-aware definitions".
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from ..._exceptions import RuleParameterError
from ...rule_contract._params import Kind, Param

__all__ = [
    "DEFAULT_CONFIDENCE",
    "NOISE_PARAMS",
    "WindowDrop",
    "below_rate_beyond_noise",
    "check_noise_params",
    "confidence_of",
    "noise_sigma",
    "samples_to_tell",
    "wilson_interval",
    "window_drop",
    "window_spread",
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


@dataclass(frozen=True)
class WindowDrop:
    """How much a window mean of saved losses fell below the window before it, with its noise."""

    drop: float  # mean of the earlier window - mean of the later one
    se: float  # standard error of ``drop``
    sigma: float  # noise of one saved value

    def beyond(self, z: float, required: float = 0.0) -> bool:
        """Whether the mean fell by more than ``required`` beyond noise: ``drop - z * se > required``."""
        return self.drop - z * self.se > required


def window_drop(base: Sequence[float], current: Sequence[float], recent: Sequence[float]) -> WindowDrop:
    """The drop from the mean of ``base`` to the mean of ``current`` and its standard error.

    ``sigma`` is :func:`noise_sigma` of ``recent`` (the saved values the two windows span); the
    means' standard errors are ``sigma / sqrt(len)``, so ``se = sigma * sqrt(1/len(base) +
    1/len(current))``. The one test of "the loss fell beyond noise" of the noise-aware
    definitions: LossNotDecreasing's windows and the class-level rules' ``learning_window``.
    """
    sigma = noise_sigma(recent) or 0.0
    drop = sum(base) / len(base) - sum(current) / len(current)
    return WindowDrop(drop, sigma * math.sqrt(1 / len(base) + 1 / len(current)), sigma)


def window_spread(values: Sequence[float], k: int, *, around_trend: bool = False) -> float:
    """Noise (robust standard deviation) of the mean of ``k`` consecutive saved values, measured on such means.

    The means of every ``k`` consecutive ``values`` (one per saved step), differenced ``k`` apart
    (back-to-back windows): ``1.4826 * median(|d|) / sqrt(2)``. Unlike ``noise_sigma(values) /
    sqrt(k)`` it holds for values that are not independent: a loss logged as a running mean over
    the epoch (as Keras logs it) is smooth from save to save, so its successive differences are
    small, yet its window means differ from epoch to epoch by the epoch's sampled batches. The
    median ignores the few differences a decline or a stop puts in the history. ``around_trend``:
    the differences' spread around their median instead (a steady trend moves every difference
    alike: it is not noise, and a rise must not hide in it). 0 with fewer than ``2 * k`` values.
    """
    if k <= 0 or len(values) < 2 * k:
        return 0.0
    means = [sum(values[i : i + k]) / k for i in range(len(values) - k + 1)]
    lagged = [b - a for a, b in zip(means, means[k:], strict=False)]
    centre = statistics.median(lagged) if around_trend else 0.0
    return 1.4826 * statistics.median(abs(d - centre) for d in lagged) / 2**0.5


def wilson_interval(successes: int, n: int, z: float) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion ``successes / n`` at normal quantile ``z``."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


# Evidence that a model is still learning defers a finding at this one-sided confidence: less than
# a finding needs (``confidence``, 0.999), since deferring costs one window and a false alarm the
# user's trust. A truly bad class does not improve, so it is deferred 5 % of the time by chance.
LEARNING_CONFIDENCE = 0.95
LEARNING_Z = NormalDist().inv_cdf(LEARNING_CONFIDENCE)


def fell_beyond_noise(earlier: tuple[int, int], later: tuple[int, int], z: float) -> bool:
    """Whether a proportion (successes, n) fell from ``earlier`` to ``later`` beyond sampling error.

    The one-sided two-proportion z test with the pooled proportion: ``(p1 - p2) / se > z``.
    False when either sample is empty or both proportions are 0 or 1.
    """
    (k1, n1), (k2, n2) = earlier, later
    if n1 <= 0 or n2 <= 0:
        return False
    pooled = (k1 + k2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    return se > 0 and (k1 / n1 - k2 / n2) / se > z


def samples_to_tell(rate: float, confidence: float) -> float:
    """Fewest samples in which 0 successes show a success rate below ``rate`` at ``confidence``.

    ``(1 - rate) ** n < 1 - confidence``; ``inf`` when ``rate <= 0`` (nothing is below 0), 1
    when ``rate >= 1``.
    """
    if rate <= 0:
        return math.inf
    if rate >= 1:
        return 1.0
    return math.floor(math.log(1 - confidence) / math.log1p(-rate)) + 1.0


def below_rate_beyond_noise(successes: np.ndarray, n: int, rate: float, confidence: float) -> np.ndarray:
    """Per element of ``successes`` (counts out of ``n``): is the success rate below ``rate`` beyond noise?

    The exact one-sided binomial test: ``P(X <= successes | n, rate) < 1 - confidence`` (X ~
    Binomial(n, rate)), i.e. the Clopper-Pearson upper bound at ``confidence`` is below ``rate``.
    Only counts under ``n * rate`` can pass, so the CDF is summed up to that count.
    """
    k = np.asarray(successes, dtype=np.int64)
    out = np.zeros(k.shape, dtype=bool)
    if n <= 0 or rate <= 0:
        return out
    if rate >= 1:
        return k < n
    top = min(n, math.ceil(n * rate))
    j = np.arange(top + 1)
    log_pmf = (
        math.lgamma(n + 1)
        - np.array([math.lgamma(x + 1) + math.lgamma(n - x + 1) for x in j])
        + j * math.log(rate)
        + (n - j) * math.log1p(-rate)
    )
    cdf = np.cumsum(np.exp(log_pmf))
    small = k <= top
    out[small] = cdf[k[small]] < 1 - confidence
    return out
