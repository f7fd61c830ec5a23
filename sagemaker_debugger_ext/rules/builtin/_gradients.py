"""Rules over gradients and weights: VanishingGradient, WeightUpdateRatio,
PoorWeightInitialization."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...exceptions import TensorUnavailable, TensorUnavailableForStep
from ...modes import ModeKeys
from ...rule_contract._params import Kind, Param, non_negative, positive
from .._result import Finding, RuleResult
from ._base import BuiltinRule

__all__ = ["PoorWeightInitialization", "VanishingGradient", "WeightUpdateRatio"]


def _gradient_names(rule: BuiltinRule) -> list[str]:
    names = rule.select_tensors(["gradients"])
    return names or rule.select_tensors(regexes=["^gradient"])


def _sibling_weight(name: str) -> str | None:
    """``gradient/<layer>.weight`` for ``gradient/<layer>.bias`` (None for other names)."""
    head, sep, tail = name.rpartition("bias")
    return f"{head}weight{tail}" if sep and not tail.strip("_0123456789") else None


class VanishingGradient(BuiltinRule):
    """Fires when the mean absolute value of a gradient drops below ``threshold``.

    A bias gradient below ``threshold`` while the same layer's weight gradient is above it
    is zero by construction, not vanishing: the layer's output gradient sums to zero over
    the batch, as it does for a bias followed by BatchNorm (PyTorch's ``Linear``/``Conv``
    have ``bias=True`` by default). Such biases are ignored and named in the status details."""

    DESCRIPTION = "mean(|gradient|) of a gradient tensor is below threshold"
    PARAMETERS = (
        Param(
            name="threshold",
            kind=Kind.FLOAT,
            default=1e-7,
            doc="vanishing level of mean |gradient|",
            check=non_negative,
        ),
    )

    def __init__(
        self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any
    ) -> None:
        super().__init__(base_trial, action_str, other_trials, **parameters)
        self.zero_by_construction: set[str] = set()

    def _abs_mean(self, name: str, step: int) -> float | None:
        value = self.value_at(name, step)
        if value is not None:
            return float(np.mean(np.abs(value.astype(np.float64)))) if value.size else None
        try:
            tensor = self.base_trial.tensor(name)
            if step not in tensor.steps():
                return None
            return float(tensor.reduction_value(step, "mean", abs=True))
        except (TensorUnavailableForStep, TensorUnavailable):
            return None

    def status_note(self) -> str | None:
        note = super().status_note()
        if not self.zero_by_construction:
            return note
        ignored = f"ignored bias gradients that are zero by construction (their layer's weight gradient is not vanishing; e.g. a bias before BatchNorm): {', '.join(sorted(self.zero_by_construction))}"
        return f"{note}; {ignored}" if note else ignored

    def evaluate(self, step: int) -> RuleResult:
        findings, seen = [], False
        names = _gradient_names(self)
        known = set(names)
        for name in names:
            m = self._abs_mean(name, step)
            if m is None:
                continue
            seen = True
            if not m < self.p["threshold"]:  # a NaN mean is ExplodingTensor's finding, not a vanishing gradient
                continue
            sibling = _sibling_weight(name)
            if sibling in known and (w := self._abs_mean(sibling, step)) is not None and w >= self.p["threshold"]:
                self.zero_by_construction.add(name)
                continue
            findings.append(
                self.finding(
                    step,
                    f"mean |{name}| = {m:.3g} < threshold {self.p['threshold']:g}",
                    tensor=name,
                    value=m,
                    threshold=self.p["threshold"],
                )
            )
        return RuleResult.from_findings(findings, seen=seen)


class WeightUpdateRatio(BuiltinRule):
    """Fires when ||W_s - W_prev|| / (||W_prev|| + epsilon) is above ``large_threshold`` or
    below ``small_threshold`` (Frobenius norms; ``prev`` = the previous saved step, at
    least ``s - num_steps`` when ``num_steps`` is set; TRAIN steps when weights were saved
    in TRAIN mode, else GLOBAL)."""

    DESCRIPTION = "||W_s - W_prev|| / (||W_prev|| + epsilon) is above large_threshold or below small_threshold"
    PARAMETERS = (
        Param(
            name="num_steps",
            kind=Kind.INT,
            doc="max distance to the previous saved step (default: previous saved step)",
            check=positive,
        ),
        Param(
            name="large_threshold", kind=Kind.FLOAT, default=10.0, doc="ratio above which it fires", check=non_negative
        ),
        Param(
            name="small_threshold", kind=Kind.FLOAT, default=1e-8, doc="ratio below which it fires", check=non_negative
        ),
        Param(name="epsilon", kind=Kind.FLOAT, default=1e-9, doc="added to the denominator", check=non_negative),
    )

    def evaluate(self, step: int) -> RuleResult:
        mode, _ = self.mode_of(step)
        findings, seen = [], False
        for name in self.select_tensors(["weights"]) or self.select_tensors(regexes=[r"^(?!gradient).*weight"]):
            train_steps = self.steps_of(name, ModeKeys.TRAIN)
            wanted = ModeKeys.TRAIN if train_steps else ModeKeys.GLOBAL
            if wanted is ModeKeys.TRAIN and mode is not ModeKeys.TRAIN:
                continue
            steps = [
                s
                for s in self.steps_of(name)
                if s < step and (wanted is ModeKeys.GLOBAL or self.mode_of(s)[0] is ModeKeys.TRAIN)
            ]
            if not steps:
                continue
            prev = steps[-1]
            if self.p["num_steps"] is not None:
                distance = self.mode_of(step)[1] - self.mode_of(prev)[1] if wanted is ModeKeys.TRAIN else step - prev
                if distance > self.p["num_steps"]:
                    continue
            now, before = self.value_at(name, step), self.value_at(name, prev)
            if now is None or before is None or now.shape != before.shape:
                continue
            seen = True
            delta = np.linalg.norm((now.astype(np.float64) - before.astype(np.float64)).ravel())
            ratio = float(delta / (np.linalg.norm(before.astype(np.float64).ravel()) + self.p["epsilon"]))
            if ratio > self.p["large_threshold"]:
                findings.append(
                    self.finding(
                        step,
                        f"update ratio of {name} between steps {prev} and {step} is {ratio:.3g} > large_threshold {self.p['large_threshold']:g}",
                        tensor=name,
                        value=ratio,
                        threshold=self.p["large_threshold"],
                    )
                )
            elif ratio < self.p["small_threshold"]:
                findings.append(
                    self.finding(
                        step,
                        f"update ratio of {name} between steps {prev} and {step} is {ratio:.3g} < small_threshold {self.p['small_threshold']:g}",
                        tensor=name,
                        value=ratio,
                        threshold=self.p["small_threshold"],
                    )
                )
        return RuleResult.from_findings(findings, seen=seen)


class PoorWeightInitialization(BuiltinRule):
    """During the first ``steps`` steps, fires when (a) max/min variance of activation
    inputs across layers exceeds ``threshold``, (b) the 95th-5th percentile spread of all
    gradients pooled is below ``distribution_range``, or (c) the loss has not improved for
    ``patience`` saved steps. ``ratio_steps`` (extension, 0 = AWS: every step) judges the
    variance ratio on the first ``ratio_steps`` saved steps only: the initialisation is the
    state before training moves the weights, and early weight growth is not a poor init."""

    DESCRIPTION = "first `steps` steps: activation-input variance ratio across layers > threshold, gradient p95-p5 < distribution_range, or loss flat for patience steps"
    PARAMETERS = (
        Param(
            name="activation_inputs_regex",
            kind=Kind.STR_LIST,
            default=[".*relu_input"],
            doc="activation inputs compared across layers",
        ),
        Param(
            name="threshold", kind=Kind.FLOAT, default=10.0, doc="max/min variance ratio across layers", check=positive
        ),
        Param(
            name="distribution_range",
            kind=Kind.FLOAT,
            default=0.001,
            doc="minimum p95-p5 spread of gradients",
            check=non_negative,
        ),
        Param(name="patience", kind=Kind.INT, default=5, doc="steps without loss improvement", check=positive),
        Param(name="steps", kind=Kind.INT, default=10, doc="how many initial steps are analysed", check=positive),
        Param(
            name="ratio_steps",
            kind=Kind.INT,
            default=0,
            doc="judge the variance ratio on the first N saved steps only (0: every analysed step, AWS)",
            check=non_negative,
        ),
    )

    def evaluate(self, step: int) -> RuleResult:
        mode, mode_step = self.mode_of(step)
        if mode not in (ModeKeys.TRAIN, ModeKeys.GLOBAL) or mode_step >= self.p["steps"]:
            return RuleResult.insufficient()
        findings: list[Finding] = []
        seen = False
        variances = {}
        act_names = self.select_tensors(["relu_input"], self.p["activation_inputs_regex"])  # + by module class
        if self.p["ratio_steps"] and not self._among_first_saved(act_names, step, mode):
            act_names = []
        for name in act_names:
            v = self.value_at(name, step)
            if v is not None and v.size > 1:
                variances[name] = float(np.var(v.astype(np.float64)))
        if len(variances) >= 2:
            seen = True
            hi, lo = max(variances, key=variances.get), min(variances, key=variances.get)  # type: ignore[arg-type]
            ratio = variances[hi] / variances[lo] if variances[lo] > 0 else float("inf")
            if ratio > self.p["threshold"]:
                findings.append(
                    self.finding(
                        step,
                        f"activation-input variance ratio {hi}/{lo} = {ratio:.3g} > threshold {self.p['threshold']:g}",
                        tensor=hi,
                        value=ratio,
                        threshold=self.p["threshold"],
                    )
                )
        grads = [
            g.astype(np.float64).ravel()
            for g in (self.value_at(n, step) for n in _gradient_names(self))
            if g is not None
        ]
        if grads:
            seen = True
            pooled = np.concatenate(grads)
            spread = float(np.percentile(pooled, 95) - np.percentile(pooled, 5))
            if spread < self.p["distribution_range"]:
                findings.append(
                    self.finding(
                        step,
                        f"gradient p95-p5 spread {spread:.3g} < distribution_range {self.p['distribution_range']:g}",
                        tensor="gradients",
                        value=spread,
                        threshold=self.p["distribution_range"],
                    )
                )
        loss_finding = self._flat_loss(step, mode)
        if loss_finding is not None:
            seen = True
            if isinstance(loss_finding, Finding):
                findings.append(loss_finding)
        return RuleResult.from_findings(findings, seen=seen)

    def _among_first_saved(self, names: list[str], step: int, mode: ModeKeys) -> bool:
        """Whether ``step`` is one of the first ``ratio_steps`` steps of ``mode`` that saved activation inputs."""
        saved = sorted({s for n in names for s in self.steps_of(n) if self.mode_of(s)[0] is mode})
        return step in saved[: self.p["ratio_steps"]]

    def _flat_loss(self, step: int, mode: ModeKeys) -> Finding | bool | None:
        patience = self.p["patience"]
        for name in self.select_tensors(["losses"]):
            gsteps = [s for s in self.steps_of(name) if s <= step and self.mode_of(s)[0] is mode]
            if len(gsteps) <= patience or gsteps[-1] != step:
                continue
            window = gsteps[-(patience + 1) :]
            vals = [self.value_at(name, s) for s in window]
            if any(v is None or v.size != 1 for v in vals):
                continue
            base, recent = float(vals[0].item()), [float(v.item()) for v in vals[1:]]  # type: ignore[union-attr]
            if min(recent) >= base:
                return self.finding(
                    step,
                    f"loss {name} did not improve for {patience} steps ({base:.4g} -> min {min(recent):.4g})",
                    tensor=name,
                    value=min(recent),
                    threshold=base,
                )
            return True
        return None
