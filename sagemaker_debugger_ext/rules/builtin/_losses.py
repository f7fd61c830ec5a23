"""Rules over scalar losses: LossNotDecreasing, Overfit, Overtraining."""

from __future__ import annotations

from typing import Any

from ..._modes import ModeKeys
from .._params import Kind, Param, non_negative, positive
from .._result import Finding, RuleResult
from ._base import BuiltinRule

__all__ = ["LossNotDecreasing", "Overfit", "Overtraining"]

_MODE_ORDER = (ModeKeys.EVAL, ModeKeys.TRAIN, ModeKeys.GLOBAL)


def _scalar(value: Any) -> float | None:
    if value is None or value.size != 1:
        return None
    return float(value.reshape(()))


class _LossRule(BuiltinRule):
    def loss_names(self) -> list[str]:
        collections = list(self.p.get("collection_names") or [])
        if self.p.get("use_losses_collection", True):
            collections.append("losses")
        names = self.select_tensors(collections, self.p.get("tensor_regex") or [])
        return names

    def loss_at(self, name: str, step: int) -> float | None:
        return _scalar(self.value_at(name, step))


class LossNotDecreasing(_LossRule):
    """Every ``num_steps`` (mode steps) compares a scalar loss with the newest saved loss at
    least ``num_steps`` earlier; fires when it did not drop by ``diff_percent`` percent, or
    when it rose more than ``increase_threshold_percent`` percent above the best loss seen.
    Mode: ``mode`` if given, else EVAL, then TRAIN, then GLOBAL (the first with data)."""

    DESCRIPTION = "every num_steps, the loss did not decrease by diff_percent % versus num_steps earlier"
    PARAMETERS = (
        Param(name="collection_names", kind=Kind.STR_LIST, doc="collections of scalar losses"),
        Param(name="tensor_regex", kind=Kind.STR_LIST, doc="regexes of scalar losses"),
        Param(name="use_losses_collection", kind=Kind.BOOL, default=True, doc="also use the 'losses' collection"),
        Param(name="num_steps", kind=Kind.INT, default=10, doc="minimum steps between compared losses", check=positive),
        Param(name="diff_percent", kind=Kind.FLOAT, default=0.1, doc="required decrease in percent", check=lambda v: None if 0 <= v < 100 else "0 <= diff_percent < 100"),
        Param(name="increase_threshold_percent", kind=Kind.FLOAT, default=5.0, doc="allowed rise above the best loss, percent", check=non_negative),
        Param(name="mode", kind=Kind.STR, doc="EVAL, TRAIN or GLOBAL (default: first with data)", choices=("EVAL", "TRAIN", "GLOBAL")),
    )

    def __init__(self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any) -> None:
        super().__init__(base_trial, action_str, other_trials, **parameters)
        self._last_eval: dict[tuple[str, ModeKeys], int] = {}
        self._best: dict[tuple[str, ModeKeys], float] = {}

    def _wanted_mode(self, name: str) -> ModeKeys | None:
        if self.p["mode"]:
            return ModeKeys[self.p["mode"].upper()]
        for mode in _MODE_ORDER:
            if self.steps_of(name, mode):
                return mode
        return None

    def evaluate(self, step: int) -> RuleResult:
        mode, mode_step = self.mode_of(step)
        findings: list[Finding] = []
        seen = False
        for name in self.loss_names():
            if self._wanted_mode(name) is not mode:
                continue
            now = self.loss_at(name, step)
            if now is None:
                continue
            key = (name, mode)
            best = self._best.get(key)
            self._best[key] = now if best is None else min(best, now)
            tensor = self.base_trial.tensor(name)
            earlier = [s for s in tensor.steps(mode=mode) if s <= mode_step - self.p["num_steps"]]
            last = self._last_eval.get(key)
            if not earlier or (last is not None and mode_step < last + self.p["num_steps"]):
                continue
            base = _scalar(tensor.value(earlier[-1], mode=mode))
            if base is None:
                continue
            seen = True
            self._last_eval[key] = mode_step
            required = base - abs(base) * self.p["diff_percent"] / 100.0
            if now > required:
                findings.append(self.finding(step, f"loss {name} ({mode.name}) is {now:.5g} at step {mode_step}, not below {required:.5g} ({self.p['diff_percent']:g}% under {base:.5g} at step {earlier[-1]})", tensor=name, value=now, threshold=required))
            elif best is not None and now > best + abs(best) * self.p["increase_threshold_percent"] / 100.0:
                findings.append(self.finding(step, f"loss {name} ({mode.name}) rose to {now:.5g}, more than {self.p['increase_threshold_percent']:g}% above the best {best:.5g}", tensor=name, value=now, threshold=best))
        if findings:
            return RuleResult.met(*findings)
        return RuleResult.not_met() if seen else RuleResult.insufficient()


_TRAIN_PREFIXES = ("train",)
_VAL_PREFIXES = ("validation", "valid", "val", "eval", "test")


def _metric_kind(name: str) -> tuple[str, str] | None:
    """('training'|'validation', metric) for XGBoost-style names like ``validation-logloss``."""
    head, sep, metric = name.rpartition("/")[-1].partition("-")
    if not sep:
        return None
    if head.lower() in _TRAIN_PREFIXES:
        return "training", metric
    if head.lower() in _VAL_PREFIXES:
        return "validation", metric
    return None


def _blocks(rule: BuiltinRule, name: str, step: int) -> tuple[list[int], list[int]]:
    """(EVAL run ending at ``step``, the TRAIN run just before it), as global steps."""
    steps = [s for s in rule.steps_of(name) if s <= step]
    modes = [rule.mode_of(s)[0] for s in steps]
    i = len(steps) - 1
    evals: list[int] = []
    while i >= 0 and modes[i] is ModeKeys.EVAL:
        evals.append(steps[i])
        i -= 1
    trains: list[int] = []
    while i >= 0 and modes[i] is not ModeKeys.TRAIN:
        i -= 1
    while i >= 0 and modes[i] is ModeKeys.TRAIN:
        trains.append(steps[i])
        i -= 1
    return evals[::-1], trains[::-1]


class Overfit(_LossRule):
    """At each EVAL step (from ``start_step``), compares the mean validation loss of the
    current evaluation with the mean training loss of the training steps just before it;
    fires when (val - train) / train > ``ratio_threshold`` for ``patience`` evaluations in
    a row. Without losses (XGBoost), ``validation-<m>`` is compared with ``train-<m>`` at
    each saved step."""

    DESCRIPTION = "(mean val loss - mean train loss) / mean train loss > ratio_threshold for patience evaluations"
    PARAMETERS = (
        Param(name="tensor_regex", kind=Kind.STR_LIST, doc="regexes of the loss (default: the 'losses' collection)"),
        Param(name="start_step", kind=Kind.INT, default=0, doc="first global step compared", check=non_negative),
        Param(name="patience", kind=Kind.INT, default=1, doc="consecutive evaluations over the threshold", check=positive),
        Param(name="ratio_threshold", kind=Kind.FLOAT, default=0.1, doc="allowed relative gap", check=non_negative),
    )

    def __init__(self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any) -> None:
        super().__init__(base_trial, action_str, other_trials, **parameters)
        self._count: dict[str, int] = {}

    def loss_names(self) -> list[str]:
        if self.p["tensor_regex"]:
            return self.select_tensors(regexes=self.p["tensor_regex"])
        return self.select_tensors(["losses"])

    def _metric_pairs(self) -> list[tuple[str, str]]:
        kinds = {n: k for n in self.select_tensors(["metrics"]) if (k := _metric_kind(n))}
        train = {m: n for n, (kind, m) in kinds.items() if kind == "training"}
        return [(train[m], n) for n, (kind, m) in kinds.items() if kind == "validation" and m in train]

    def _judge(self, step: int, key: str, val_mean: float, train_mean: float) -> Finding | None:
        ratio = (val_mean - train_mean) / train_mean
        self._count[key] = self._count.get(key, 0) + 1 if ratio > self.p["ratio_threshold"] else 0
        if self._count[key] < self.p["patience"]:
            return None
        return self.finding(step, f"{key}: validation loss {val_mean:.4g} vs training loss {train_mean:.4g}: ratio {ratio:.3g} > ratio_threshold {self.p['ratio_threshold']:g} for {self._count[key]} evaluation(s)", tensor=key, value=ratio, threshold=self.p["ratio_threshold"])

    def evaluate(self, step: int) -> RuleResult:
        if step < self.p["start_step"]:
            return RuleResult.insufficient()
        if not self.loss_names() and not self.p["tensor_regex"]:  # XGBoost: train-*/validation-* metrics
            findings, seen = [], False
            for train_name, val_name in self._metric_pairs():
                tr, val = self.loss_at(train_name, step), self.loss_at(val_name, step)
                if tr is None or val is None or tr <= 0:
                    continue
                seen = True
                found = self._judge(step, val_name, val, tr)
                if found is not None:
                    findings.append(found)
            if findings:
                return RuleResult.met(*findings)
            return RuleResult.not_met() if seen else RuleResult.insufficient()
        if self.mode_of(step)[0] is not ModeKeys.EVAL:
            return RuleResult.insufficient()
        findings, seen = [], False
        for name in self.loss_names():
            evals, trains = _blocks(self, name, step)
            if not evals or evals[-1] != step or not trains:
                continue
            val = [v for v in (self.loss_at(name, s) for s in evals) if v is not None]
            tr = [v for v in (self.loss_at(name, s) for s in trains) if v is not None]
            if not val or not tr or sum(tr) <= 0:
                continue
            seen = True
            found = self._judge(step, name, sum(val) / len(val), sum(tr) / len(tr))
            if found is not None:
                findings.append(found)
        if findings:
            return RuleResult.met(*findings)
        return RuleResult.not_met() if seen else RuleResult.insufficient()


class Overtraining(_LossRule):
    """Fires when the training loss has not reached a new optimum (improved by more than
    ``delta``) for ``patience_train`` TRAIN steps, or the validation loss for
    ``patience_validation`` EVAL steps. Without a ``losses`` collection (XGBoost) the
    ``train-*`` and ``validation-*`` metrics are the training and validation losses."""

    DESCRIPTION = "training loss not improved by delta for patience_train steps, or validation loss for patience_validation steps"
    PARAMETERS = (
        Param(name="patience_train", kind=Kind.INT, default=5, doc="TRAIN steps without a new optimum", check=positive),
        Param(name="patience_validation", kind=Kind.INT, default=10, doc="EVAL steps without a new optimum", check=positive),
        Param(name="delta", kind=Kind.FLOAT, default=0.01, doc="minimum improvement for a new optimum", check=non_negative),
    )

    def __init__(self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any) -> None:
        super().__init__(base_trial, action_str, other_trials, **parameters)
        self._best: dict[tuple[str, str], float] = {}
        self._since: dict[tuple[str, str], int] = {}

    def loss_names(self) -> list[str]:
        return self.select_tensors(["losses"])

    def _series(self, step: int) -> list[tuple[str, str]]:
        """(tensor, 'training'|'validation') judged at ``step``: losses by mode, else XGBoost metrics by name."""
        names = self.loss_names()
        if names:
            kind = {ModeKeys.TRAIN: "training", ModeKeys.EVAL: "validation"}.get(self.mode_of(step)[0])
            return [(n, kind) for n in names] if kind else []
        return [(n, k[0]) for n in self.select_tensors(["metrics"]) if (k := _metric_kind(n))]

    def evaluate(self, step: int) -> RuleResult:
        findings, seen = [], False
        for name, which in self._series(step):
            patience = self.p["patience_train"] if which == "training" else self.p["patience_validation"]
            now = self.loss_at(name, step)
            if now is None:
                continue
            seen = True
            key = (name, which)
            best = self._best.get(key)
            if best is None or now < best - self.p["delta"]:
                self._best[key], self._since[key] = now, 0
                continue
            self._since[key] += 1
            if self._since[key] >= patience:
                findings.append(self.finding(step, f"{which} loss {name} has not improved by more than {self.p['delta']:g} below its best {best:.5g} for {self._since[key]} steps (patience {patience})", tensor=name, value=now, threshold=best - self.p["delta"]))
        if findings:
            return RuleResult.met(*findings)
        return RuleResult.not_met() if seen else RuleResult.insufficient()
