"""Rules over model inputs: CheckInputImages, NLPSequenceRatio."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._exceptions import RuleParameterError
from ...rule_contract._params import Kind, Param, non_negative, percent, positive
from .._result import RuleResult
from ._base import BuiltinRule

__all__ = ["CheckInputImages", "NLPSequenceRatio"]


class CheckInputImages(BuiltinRule):
    """Accumulates per-channel sums of the input images; once ``threshold_samples`` images
    were seen, fires when the absolute per-channel mean exceeds ``threshold_mean``
    (inputs are expected to be normalised to zero mean). The default ``regex`` names
    MXNet's input; PyTorch models save their input as ``<ModelClass>_input_0``."""

    DESCRIPTION = "after threshold_samples images, |per-channel mean| of the inputs > threshold_mean"
    PARAMETERS = (
        Param(
            name="threshold_mean", kind=Kind.FLOAT, default=0.2, doc="allowed |mean| per channel", check=non_negative
        ),
        Param(name="threshold_samples", kind=Kind.INT, default=500, doc="images needed before judging", check=positive),
        Param(name="regex", kind=Kind.STR_LIST, default=[".*hybridsequential0_input_0"], doc="the input tensor"),
        Param(name="channel", kind=Kind.INT, default=1, doc="axis of the colour channel", check=non_negative),
    )

    def __init__(
        self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any
    ) -> None:
        super().__init__(base_trial, action_str, other_trials, **parameters)
        self._sum: dict[str, np.ndarray] = {}
        self._count: dict[str, int] = {}
        self._images: dict[str, int] = {}

    def status_note(self) -> str | None:
        if self.steps_evaluated:
            return None
        pattern = ",".join(self.p["regex"])
        matched = self.select_tensors(regexes=self.p["regex"])
        if matched:
            return f"{self.rule_name} evaluated no step: fewer than threshold_samples={self.p['threshold_samples']} images of {', '.join(matched)} were saved"
        return (
            f"{self.rule_name} evaluated no step: no saved tensor matches regex {pattern!r}"
            " (the default names an MXNet input); for a PyTorch model set regex to '.*<ModelClass>_input_0'"
            " (e.g. '.*Net_input_0' for class Net) and save it in the 'input_image' collection with the same include_regex"
        )

    def evaluate(self, step: int) -> RuleResult:
        findings, seen = [], False
        axis = self.p["channel"]
        for name in self.select_tensors(regexes=self.p["regex"]):
            value = self.value_at(name, step)
            if value is None or value.ndim <= axis or value.ndim < 2:
                continue
            moved = np.moveaxis(value.astype(np.float64), axis, -1).reshape(-1, value.shape[axis])
            self._sum[name] = self._sum.get(name, 0.0) + moved.sum(axis=0)
            self._count[name] = self._count.get(name, 0) + moved.shape[0]
            self._images[name] = self._images.get(name, 0) + value.shape[0]
            if self._images[name] < self.p["threshold_samples"]:
                continue
            seen = True
            means = self._sum[name] / self._count[name]
            worst = int(np.argmax(np.abs(means)))
            if abs(means[worst]) > self.p["threshold_mean"]:
                findings.append(
                    self.finding(
                        step,
                        f"input {name}: mean of channel {worst} over {self._images[name]} images is {means[worst]:.4g}, |mean| > threshold_mean {self.p['threshold_mean']:g}",
                        tensor=name,
                        value=float(means[worst]),
                        threshold=self.p["threshold_mean"],
                    )
                )
        return RuleResult.from_findings(findings, seen=seen)


class NLPSequenceRatio(BuiltinRule):
    """Fires when the percentage of a token value (e.g. padding 0) in the input sequences
    of a step exceeds its threshold (``token_values`` and ``token_thresholds_percent`` pair
    up; one threshold applies to all values)."""

    DESCRIPTION = "percentage of given token ids in the input sequences > token_thresholds_percent"
    PARAMETERS = (
        Param(name="tensor_regex", kind=Kind.STR_LIST, default=[".*embedding0_input_0"], doc="input sequences"),
        Param(name="token_values", kind=Kind.FLOAT_LIST, default=[0.0], doc="token ids, comma-separated"),
        Param(
            name="token_thresholds_percent",
            kind=Kind.FLOAT_LIST,
            default=[50.0],
            doc="percent per token id, comma-separated",
        ),
    )

    def validate(self) -> None:
        values, thresholds = self.p["token_values"], self.p["token_thresholds_percent"]
        if len(thresholds) == 1 and len(values) > 1:
            self.params["token_thresholds_percent"] = thresholds * len(values)
        elif len(thresholds) != len(values):
            msg = f"{self.rule_name}: 'token_thresholds_percent' must have one value per token value ({len(values)}) (got {thresholds!r})"
            raise RuleParameterError(msg, rule_name=self.rule_name)
        for t in self.params["token_thresholds_percent"]:
            if percent(t):
                msg = f"{self.rule_name}: 'token_thresholds_percent' must be percentages between 0 and 100 (got {t!r})"
                raise RuleParameterError(msg, rule_name=self.rule_name)

    def evaluate(self, step: int) -> RuleResult:
        findings, seen = [], False
        for name in self.select_tensors(regexes=self.p["tensor_regex"]):
            value = self.value_at(name, step)
            if value is None or value.size == 0:
                continue
            seen = True
            for token, limit in zip(self.p["token_values"], self.p["token_thresholds_percent"], strict=True):
                pct = 100.0 * float(np.count_nonzero(value == token)) / value.size
                if pct > limit:
                    findings.append(
                        self.finding(
                            step,
                            f"token {token:g} is {pct:.1f}% of {name} > {limit:g}%",
                            tensor=name,
                            value=pct,
                            threshold=limit,
                        )
                    )
        return RuleResult.from_findings(findings, seen=seen)
