"""Rules over activations: DeadRelu, SaturatedActivation."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from ..._exceptions import RuleParameterError
from ...rule_contract._params import Kind, Param, percent
from .._result import Finding, RuleResult
from ._base import BuiltinRule
from ._noise import NOISE_PARAMS, below_rate_beyond_noise, check_noise_params, confidence_of, samples_to_tell

__all__ = ["DeadRelu", "SaturatedActivation"]


def _per_unit(value: np.ndarray) -> np.ndarray:
    """(samples, units): batch on axis 0, every other element is a unit."""
    if value.ndim <= 1:
        return value.reshape(-1, 1) if value.ndim == 1 else value.reshape(1, 1)
    return value.reshape(value.shape[0], -1)


def _layer_fraction(active: np.ndarray, threshold_inactivity: float) -> tuple[float, int]:
    """Percent of units active in fewer than ``threshold_inactivity`` % of samples."""
    activity = 100.0 * active.mean(axis=0)
    dead = int(np.count_nonzero(activity < threshold_inactivity))
    return 100.0 * dead / max(activity.size, 1), dead


class DeadRelu(BuiltinRule):
    """A ReLU unit is dead when it is active (> 0) in fewer than ``threshold_inactivity``
    percent of the samples of a step; fires when more than ``threshold_layer`` percent of a
    layer's units are dead.

    ``noise_aware`` (an extension, on in the recommended settings): a unit is dead only when its
    activity is below ``threshold_inactivity`` beyond sampling error, by the exact binomial test
    at ``confidence`` over the samples of the most recent saved steps of the layer (whole steps,
    enough samples for a unit never active to pass the test: 688 at 1 %, confidence 0.999). A
    batch of 32 cannot tell a unit active in 3 % of the samples (0 of 32 a third of the time)
    from a dead one; a dead unit gets no gradient and stays inactive step after step."""

    DESCRIPTION = "more than threshold_layer % of a layer's ReLUs are active in < threshold_inactivity % of samples"
    PARAMETERS = (
        Param(name="tensor_regex", kind=Kind.STR_LIST, default=[".*relu_output"], doc="ReLU outputs"),
        Param(
            name="threshold_inactivity",
            kind=Kind.FLOAT,
            default=1.0,
            doc="activity percent below which a unit is dead",
            check=percent,
        ),
        Param(
            name="threshold_layer", kind=Kind.FLOAT, default=50.0, doc="percent of dead units that fires", check=percent
        ),
        *NOISE_PARAMS,
    )

    def __init__(
        self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any
    ) -> None:
        super().__init__(base_trial, action_str, other_trials, **parameters)
        # noise_aware: per layer, (active count per unit, samples) of its most recent saved steps
        self._recent: dict[str, collections.deque[tuple[np.ndarray, int]]] = {}

    def validate(self) -> None:
        check_noise_params(self.rule_name, self.p)

    def _dead_beyond_noise(self, name: str, active: np.ndarray) -> tuple[float, int, int] | None:
        """(percent dead, dead units, samples) over the layer's recent steps; None until enough samples."""
        rate, confidence = self.p["threshold_inactivity"] / 100.0, confidence_of(self.p)
        needed = samples_to_tell(rate, confidence)
        recent = self._recent.setdefault(name, collections.deque())
        if recent and recent[-1][0].shape != active.shape[1:]:
            recent.clear()  # the layer changed shape: start over
        recent.append((active.sum(axis=0), active.shape[0]))
        while len(recent) > 1 and sum(n for _, n in list(recent)[1:]) >= needed:
            recent.popleft()
        samples = sum(n for _, n in recent)
        if samples < needed:
            return None
        counts = np.sum([c for c, _ in recent], axis=0)
        dead = int(np.count_nonzero(below_rate_beyond_noise(counts, samples, rate, confidence)))
        return 100.0 * dead / max(counts.size, 1), dead, samples

    def evaluate(self, step: int) -> RuleResult:
        findings, seen = [], False
        # + the ReLU tensors the PyTorch hook recorded by module class (smdebug names: "1_output_0")
        for name in self.select_tensors(["relu_output"], self.p["tensor_regex"]):
            value = self.value_at(name, step)
            if value is None or value.size == 0:
                continue
            active = _per_unit(value) > 0
            if self.p["noise_aware"]:
                judged = self._dead_beyond_noise(name, active)
                if judged is None:
                    continue
                pct, dead, samples = judged
                how = f" beyond sampling error (active in < {self.p['threshold_inactivity']:g}% of the last {samples} samples, binomial test at confidence {confidence_of(self.p):g})"
            else:
                pct, dead = _layer_fraction(active, self.p["threshold_inactivity"])
                how = ""
            seen = True
            if pct > self.p["threshold_layer"]:
                findings.append(
                    self.finding(
                        step,
                        f"{pct:.1f}% of the units of {name} are dead ({dead} units){how} > threshold_layer {self.p['threshold_layer']:g}%",
                        tensor=name,
                        value=pct,
                        threshold=self.p["threshold_layer"],
                    )
                )
        return RuleResult.from_findings(findings, seen=seen)


class SaturatedActivation(BuiltinRule):
    """A tanh/sigmoid unit is saturated when its input lies inside the non-saturated range
    ``(threshold_<fn>_min, threshold_<fn>_max)`` in fewer than ``threshold_inactivity`` percent
    of the samples; fires when more than ``threshold_layer`` percent of a layer's units are
    saturated. The function is taken from the collection the hook recorded the tensor in
    (``tanh_input`` / ``sigmoid_input``, by module class), else from the tensor name."""

    DESCRIPTION = "more than threshold_layer % of a tanh/sigmoid layer's inputs are saturated"
    PARAMETERS = (
        Param(name="collection_names", kind=Kind.STR_LIST, doc="collections of activation inputs"),
        Param(
            name="tensor_regex",
            kind=Kind.STR_LIST,
            default=[".*tanh_input", ".*sigmoid_input"],
            doc="activation inputs",
        ),
        Param(name="threshold_tanh_min", kind=Kind.FLOAT, default=-9.4999, doc="tanh input below this is saturated"),
        Param(name="threshold_tanh_max", kind=Kind.FLOAT, default=9.4999, doc="tanh input above this is saturated"),
        Param(
            name="threshold_sigmoid_min", kind=Kind.FLOAT, default=-23.0, doc="sigmoid input below this is saturated"
        ),
        Param(
            name="threshold_sigmoid_max", kind=Kind.FLOAT, default=16.99999, doc="sigmoid input above this is saturated"
        ),
        Param(
            name="threshold_inactivity",
            kind=Kind.FLOAT,
            default=1.0,
            doc="activity percent below which a unit is saturated",
            check=percent,
        ),
        Param(
            name="threshold_layer",
            kind=Kind.FLOAT,
            default=50.0,
            doc="percent of saturated units that fires",
            check=percent,
        ),
    )

    def __init__(
        self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any
    ) -> None:
        # The AWS guide also documents tuple forms threshold_tanh="(-9.4999, 9.4999)".
        for fn in ("tanh", "sigmoid"):
            pair = parameters.pop(f"threshold_{fn}", None)
            if pair is not None:
                parts = str(pair).strip("()[] ").split(",") if isinstance(pair, str) else list(pair)
                if len(parts) != 2:
                    msg = f"SaturatedActivation: 'threshold_{fn}' must be a pair (min, max) (got {pair!r})"
                    raise RuleParameterError(msg, rule_name=type(self).__name__)
                parameters.setdefault(f"threshold_{fn}_min", parts[0])
                parameters.setdefault(f"threshold_{fn}_max", parts[1])
        super().__init__(base_trial, action_str, other_trials, **parameters)

    def evaluate(self, step: int) -> RuleResult:
        findings: list[Finding] = []
        seen = False
        by_class = {fn: set(self.select_tensors([f"{fn}_input"])) for fn in ("tanh", "sigmoid")}
        collections = [*(self.p["collection_names"] or ()), "tanh_input", "sigmoid_input"]
        for name in self.select_tensors(collections, self.p["tensor_regex"]):
            fn = next((f for f, names in by_class.items() if name in names), None)
            fn = fn or ("sigmoid" if "sigmoid" in name.lower() else "tanh" if "tanh" in name.lower() else None)
            value = self.value_at(name, step)
            if fn is None or value is None or value.size == 0:
                continue
            seen = True
            lo, hi = self.p[f"threshold_{fn}_min"], self.p[f"threshold_{fn}_max"]
            units = _per_unit(value.astype(np.float64))
            pct, n = _layer_fraction((units > lo) & (units < hi), self.p["threshold_inactivity"])
            if pct > self.p["threshold_layer"]:
                findings.append(
                    self.finding(
                        step,
                        f"{pct:.1f}% of the {fn} units of {name} are saturated ({n} units, inputs outside ({lo:g}, {hi:g})) > threshold_layer {self.p['threshold_layer']:g}%",
                        tensor=name,
                        value=pct,
                        threshold=self.p["threshold_layer"],
                    )
                )
        return RuleResult.from_findings(findings, seen=seen)
