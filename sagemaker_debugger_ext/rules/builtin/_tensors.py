"""Rules over arbitrary tensors: ExplodingTensor, AllZero, TensorVariance, UnchangedTensor,
SimilarAcrossRuns."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ..._exceptions import RuleParameterError
from ...exceptions import StepUnavailable, TensorUnavailable, TensorUnavailableForStep
from ...modes import ModeKeys
from ...rule_contract._params import Kind, Param, non_negative, percent
from .._result import Finding, RuleResult
from ._base import BuiltinRule

__all__ = ["AllZero", "ExplodingTensor", "SimilarAcrossRuns", "TensorVariance", "UnchangedTensor"]

_COLLECTIONS = Param(name="collection_names", kind=Kind.STR_LIST, doc="collections whose tensors are inspected")
_REGEX = Param(name="tensor_regex", kind=Kind.STR_LIST, doc="regexes of tensor names to inspect")


class _SelectedTensorsRule(BuiltinRule):
    """A rule over ``collection_names`` ∪ ``tensor_regex`` tensors."""

    REQUIRE_SELECTION = False
    DEFAULT_ALL = True

    def validate(self) -> None:
        if self.REQUIRE_SELECTION and not (self.p["collection_names"] or self.p["tensor_regex"]):
            msg = f"{self.rule_name}: one of 'collection_names' or 'tensor_regex' must be given (got neither)"
            raise RuleParameterError(msg, rule_name=self.rule_name)

    def selected(self, trial: Any = None) -> list[str]:
        return self.select_tensors(
            self.p["collection_names"], self.p["tensor_regex"], default_all=self.DEFAULT_ALL, trial=trial
        )

    def check(self, step: int, name: str, value: np.ndarray) -> Finding | None:
        raise NotImplementedError

    def evaluate(self, step: int) -> RuleResult:
        findings: list[Finding] = []
        seen = False
        for name in self.selected():
            value = self.value_at(name, step)
            if value is None:
                continue
            seen = True
            found = self.check(step, name, value)
            if found is not None:
                findings.append(found)
        return RuleResult.from_findings(findings, seen=seen)


class ExplodingTensor(_SelectedTensorsRule):
    """Fires when a tensor holds NaN (or ±inf unless ``only_nan``).

    The findings of a step are ordered as the training computed the tensors, so the first
    one (the one StatusDetails and the report name) is where the NaN came from: the
    forward pass first (parameters, module inputs/outputs and losses, in the order the hook
    wrote them in the step), then the backward pass (``gradient/...``, in the order autograd
    produced them), then everything else (scalars). Only saved tensors can be blamed.
    Without a selection every tensor is inspected except XGBoost's ``trees/Split``, NaN by
    construction at leaves.
    """

    DESCRIPTION = "a tensor has non-finite values: NaN, or ±inf unless only_nan"
    PARAMETERS = (
        _COLLECTIONS,
        _REGEX,
        Param(name="only_nan", kind=Kind.BOOL, default=False, doc="only NaN counts (not ±inf)"),
    )

    NAN_BY_CONSTRUCTION = "trees/Split"  # XGBoost's tree table: leaves have no split value

    def __init__(
        self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any
    ) -> None:
        super().__init__(base_trial, action_str, other_trials, **parameters)
        self._reduced: set[str] = set()  # tensors judged by their reductions (no raw value saved)

    def selected(self, trial: Any = None) -> list[str]:
        names = super().selected(trial)
        if self.p["tensor_regex"] or self.p["collection_names"]:
            return names
        return [n for n in names if n != self.NAN_BY_CONSTRUCTION]

    def status_note(self) -> str | None:
        note = super().status_note()
        if (
            self.p["tensor_regex"]
            or self.p["collection_names"]
            or not self.base_trial.has_tensor(self.NAN_BY_CONSTRUCTION)
        ):
            return note
        ignored = f"ignored {self.NAN_BY_CONSTRUCTION} (NaN by construction: XGBoost leaves have no split value)"
        return f"{note}; {ignored}" if note else ignored

    def value_at(self, name: str, step: int, trial: Any = None) -> np.ndarray | None:
        """The raw value; for a tensor saved as reductions only (big models), its reductions:
        a NaN or inf anywhere in a tensor makes its max/min/mean/norms non-finite."""
        value = super().value_at(name, step, trial)
        if value is not None:
            return value
        try:
            tensor = (self.base_trial if trial is None else trial).tensor(name)
            if step not in tensor.steps():
                return None
            reduced = tensor.reduction_values(step)
        except (TensorUnavailableForStep, TensorUnavailable, StepUnavailable):
            return None
        if not reduced:
            return None
        self._reduced.add(name)
        return np.asarray([np.asarray(v, dtype=np.float64).ravel()[0] for v in reduced.values()])

    def check(self, step: int, name: str, value: np.ndarray) -> Finding | None:
        if not np.issubdtype(value.dtype, np.inexact):
            return None
        if name in self._reduced and not np.isfinite(value).all():
            bad = "NaN" if np.isnan(value).any() else "inf"
            if bad == "inf" and self.p["only_nan"]:
                return None
            return self.finding(step, f"tensor {name} (saved as reductions only) has {bad} reductions at step {step}",
                                tensor=name, value=int(np.count_nonzero(~np.isfinite(value))),
                                threshold="0 non-finite values")  # fmt: skip
        n_nan = int(np.count_nonzero(np.isnan(value)))
        n_inf = 0 if self.p["only_nan"] else int(np.count_nonzero(np.isinf(value)))
        if n_nan + n_inf == 0:
            return None
        what = f"{n_nan} NaN" + ("" if self.p["only_nan"] else f" and {n_inf} inf")
        return self.finding(
            step,
            f"tensor {name} has {what} value(s) out of {value.size} at step {step}",
            tensor=name,
            value=n_nan + n_inf,
            threshold="0 non-finite values",
        )

    def evaluate(self, step: int) -> RuleResult:
        result = super().evaluate(step)
        if len(result.findings) < 2:
            return result
        ordered = sorted(result.findings, key=lambda f: self._computed_order(f.tensor or "", step))
        first = ordered[0]
        lead = attrs.evolve(first, message=f"first of {len(ordered)} non-finite tensors in computation order "
                            f"(forward, then backward): {first.message}")  # fmt: skip
        return RuleResult.met(lead, *ordered[1:])

    def _computed_order(self, name: str, step: int) -> tuple[int, float]:
        """(phase, position in the step's file): forward (0), backward (1), scalars and the rest (2)."""
        phase = 1 if name.startswith("gradient/") else 2 if name.startswith("scalar/") else 0
        try:
            location = self.base_trial.tensor(name)._location(step, ModeKeys.GLOBAL, None)
        except (KeyError, LookupError, TensorUnavailable, TensorUnavailableForStep, StepUnavailable):
            location = None
        return phase, float(location[1]) if location is not None else float("inf")


class AllZero(_SelectedTensorsRule):
    """Fires when at least ``threshold`` percent of a tensor's values are zero."""

    DESCRIPTION = "at least threshold % of a tensor's values are zero"
    REQUIRE_SELECTION = True
    PARAMETERS = (
        _COLLECTIONS,
        _REGEX,
        Param(name="threshold", kind=Kind.FLOAT, default=100.0, doc="percent of zeros that fires", check=percent),
    )

    def check(self, step: int, name: str, value: np.ndarray) -> Finding | None:
        if value.size == 0:
            return None
        pct = 100.0 * float(np.count_nonzero(value == 0)) / value.size
        if pct < self.p["threshold"]:
            return None
        return self.finding(
            step,
            f"{pct:.1f}% of tensor {name} is zero at step {step}",
            tensor=name,
            value=pct,
            threshold=self.p["threshold"],
        )


class TensorVariance(_SelectedTensorsRule):
    """Fires when a tensor's variance is above ``max_threshold`` or below ``min_threshold``.
    Without a threshold, or without ``collection_names``/``tensor_regex``, there is nothing
    to compare: the rule evaluates no step and its status details say what to set."""

    DESCRIPTION = "a tensor's variance is above max_threshold or below min_threshold"
    DEFAULT_ALL = False
    PARAMETERS = (
        _COLLECTIONS,
        _REGEX,
        Param(name="max_threshold", kind=Kind.FLOAT, doc="upper bound of the variance"),
        Param(name="min_threshold", kind=Kind.FLOAT, doc="lower bound of the variance"),
    )

    def status_note(self) -> str | None:
        missing = []
        if not (self.p["collection_names"] or self.p["tensor_regex"]):
            missing.append(
                "'collection_names' or 'tensor_regex' (the tensors to inspect, e.g. collection_names=weights)"
            )
        if self.p["max_threshold"] is None and self.p["min_threshold"] is None:
            missing.append("'max_threshold' and/or 'min_threshold' (bounds of the variance, e.g. max_threshold=10)")
        if missing:
            return f"{self.rule_name} evaluated nothing: set " + " and ".join(missing)
        return super().status_note()

    def evaluate(self, step: int) -> RuleResult:
        if self.p["max_threshold"] is None and self.p["min_threshold"] is None:
            return RuleResult.insufficient()
        return super().evaluate(step)

    def check(self, step: int, name: str, value: np.ndarray) -> Finding | None:
        if value.size == 0 or not np.issubdtype(value.dtype, np.number):
            return None
        var = float(np.var(value.astype(np.float64)))
        hi, lo = self.p["max_threshold"], self.p["min_threshold"]
        if hi is not None and var > hi:
            return self.finding(
                step, f"variance of {name} is {var:.4g} > max_threshold {hi}", tensor=name, value=var, threshold=hi
            )
        if lo is not None and var < lo:
            return self.finding(
                step, f"variance of {name} is {var:.4g} < min_threshold {lo}", tensor=name, value=var, threshold=lo
            )
        return None


class UnchangedTensor(_SelectedTensorsRule):
    """Fires when a tensor's last ``num_steps`` saved values are all ``np.allclose``. Only
    steps in which training could change the tensor are compared: TRAIN steps when the
    tensor was saved in TRAIN mode (EVAL and PREDICT steps never change weights), else
    every saved step."""

    DESCRIPTION = "a tensor did not change (np.allclose) over its last num_steps saved steps"
    REQUIRE_SELECTION = True
    PARAMETERS = (
        _COLLECTIONS,
        _REGEX,
        Param(
            name="num_steps",
            kind=Kind.INT,
            default=3,
            doc="saved steps compared",
            check=lambda v: None if v >= 2 else ">= 2",
        ),
        Param(name="rtol", kind=Kind.FLOAT, default=1e-05, doc="np.allclose rtol", check=non_negative),
        Param(name="atol", kind=Kind.FLOAT, default=1e-08, doc="np.allclose atol", check=non_negative),
        Param(name="equal_nan", kind=Kind.BOOL, default=False, doc="NaNs compare equal"),
    )

    def _comparable_steps(self, name: str, step: int) -> list[int] | None:
        """Saved steps of ``name`` up to ``step`` that training could change; None if ``step`` is not one."""
        if self.steps_of(name, ModeKeys.TRAIN):
            if self.mode_of(step)[0] is not ModeKeys.TRAIN:
                return None
            return [s for s in self.steps_of(name) if s <= step and self.mode_of(s)[0] is ModeKeys.TRAIN]
        return [s for s in self.steps_of(name) if s <= step]

    def evaluate(self, step: int) -> RuleResult:
        if self.mode_of(step)[0] in (ModeKeys.EVAL, ModeKeys.PREDICT):
            return RuleResult.insufficient()
        return super().evaluate(step)

    def check(self, step: int, name: str, value: np.ndarray) -> Finding | None:
        comparable = self._comparable_steps(name, step)
        if comparable is None:
            return None
        steps = comparable[-self.p["num_steps"] :]
        if len(steps) < self.p["num_steps"]:
            return None
        for other in steps[:-1]:
            old = self.value_at(name, other)
            if old is None or old.shape != value.shape:
                return None
            if not np.allclose(old, value, rtol=self.p["rtol"], atol=self.p["atol"], equal_nan=self.p["equal_nan"]):
                return None
        return self.finding(
            step,
            f"tensor {name} unchanged over steps {steps}",
            tensor=name,
            value=f"unchanged over {len(steps)} saved steps",
            threshold=f"rtol={self.p['rtol']}, atol={self.p['atol']}",
        )


class SimilarAcrossRuns(_SelectedTensorsRule):
    """Fires when a tensor differs between the base trial and another trial at the same step."""

    DESCRIPTION = "a tensor differs between the base trial and other_trial at the same step"
    NEEDS_OTHER_TRIALS = True
    PARAMETERS = (_COLLECTIONS, _REGEX)

    def validate(self) -> None:
        if not self.other_trials:
            msg = f"{self.rule_name}: 'other_trials' must name at least one other trial (rule parameter 'other_trial_0') (got none)"
            raise RuleParameterError(msg, rule_name=self.rule_name)

    def check(self, step: int, name: str, value: np.ndarray) -> Finding | None:
        for i, other in enumerate(self.other_trials or []):
            if name not in set(other.tensor_names()):
                continue
            theirs = self.value_at(name, step, trial=other)
            if theirs is None:
                continue
            same = theirs.shape == value.shape and np.allclose(value, theirs, equal_nan=True)
            if not same:
                diff = (
                    float(np.max(np.abs(value.astype(np.float64) - theirs.astype(np.float64))))
                    if theirs.shape == value.shape
                    else "shape"
                )
                return self.finding(
                    step,
                    f"tensor {name} differs from other trial {i} at step {step} (max |diff| {diff})",
                    tensor=name,
                    value=diff,
                    threshold="np.allclose(rtol=1e-05, atol=1e-08)",
                )
        return None
