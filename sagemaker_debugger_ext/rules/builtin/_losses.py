"""Rules over scalar losses: LossNotDecreasing, Overfit (Overtraining: :mod:`._overtraining`).

Losses come in two shapes. Framework hooks save a loss per step in TRAIN and EVAL mode;
EVAL losses are judged per evaluation pass (the mean of its saved steps, at its last step,
see :mod:`._series`). XGBoost hooks (this package's and SageMaker's XGBoost container) save
``<channel>-<metric>`` values per boosting round in GLOBAL mode; ``train-<m>`` and
``validation-<m>`` are the training and validation losses when ``<m>`` is a loss metric.
"""

from __future__ import annotations

from typing import Any

from ...modes import ModeKeys
from ...rule_contract._params import Kind, Param, non_negative, positive
from .._result import Finding, RuleResult
from ._base import BuiltinRule
from ._noise import NOISE_PARAMS, check_noise_params, noise_sigma, window_drop, window_spread, z_value
from ._series import ends_pass, eval_passes, lower_is_better, mean, metric_kind, pass_steps

__all__ = ["LossNotDecreasing", "Overfit"]


def _scalar(value: Any) -> float | None:
    if value is None or value.size != 1:
        return None
    return float(value.reshape(()))


class _LossRule(BuiltinRule):
    def loss_names(self) -> list[str]:
        collections = list(self.p.get("collection_names") or [])
        if self.p.get("use_losses_collection", True):
            collections.append("losses")
        return self.select_tensors(collections, self.p.get("tensor_regex") or [])

    def loss_at(self, name: str, step: int) -> float | None:
        return _scalar(self.value_at(name, step))

    def mean_at(self, name: str, steps: list[int]) -> float | None:
        values = [v for v in (self.loss_at(name, s) for s in steps) if v is not None]
        return mean(values) if values else None

    def metric_names(self, candidates: list[str]) -> dict[str, tuple[str, str]]:
        """XGBoost loss metrics among ``candidates``: name -> ('training'|'validation', metric)."""
        return {n: k for n in candidates if (k := metric_kind(n)) and lower_is_better(k[1])}

    def metric_pairs(self, candidates: list[str]) -> list[tuple[str, str]]:
        """(train-<m>, validation-<m>) pairs of XGBoost loss metrics among ``candidates``."""
        kinds = self.metric_names(candidates)
        train = {m: n for n, (kind, m) in kinds.items() if kind == "training"}
        return sorted((train[m], n) for n, (kind, m) in kinds.items() if kind == "validation" and m in train)

    def xgboost_candidates(self) -> list[str]:
        return sorted(set(self.select_tensors(["losses", "metrics"])))

    def eval_pass(self, name: str, step: int) -> tuple[float, int] | None:
        """(mean loss, saved losses) of the evaluation pass ending at ``step``; None unless
        ``step`` ends a pass in which ``name`` was saved."""
        if not ends_pass(self.base_trial, step):
            return None
        values = [v for v in (self.loss_at(name, s) for s in pass_steps(self.base_trial, step)) if v is not None]
        return (mean(values), len(values)) if values else None

    def eval_pass_mean(self, name: str, step: int) -> float | None:
        """Mean loss of the evaluation pass ending at ``step`` (see :meth:`eval_pass`)."""
        found = self.eval_pass(name, step)
        return None if found is None else found[0]


class LossNotDecreasing(_LossRule):
    """Every ``num_steps`` (mode steps) compares the mean loss of the last ``num_steps``
    steps with the mean of the ``num_steps`` steps before the newest saved loss at least
    ``num_steps`` earlier; fires when it did not drop by ``diff_percent`` percent, or when it
    rose more than ``increase_threshold_percent`` percent above the best mean seen. With
    one saved loss per window this is the plain step-to-step comparison.

    Mode: ``mode`` if given; else, per loss tensor, the mode of its first saved step
    (TRAIN for a usual training loop, GLOBAL for XGBoost), fixed once. In EVAL mode each
    evaluation pass is one value (the mean of its saved steps).

    ``noise_aware`` (an extension, on in the recommended settings): both conditions must hold
    beyond the noise of the saved losses (:mod:`._noise`), and a stall fires only right after
    a decrease beyond noise (the loss stopped early) unless ``detect_plateau``: a plateau
    reached by slowing down is convergence."""

    DESCRIPTION = "every num_steps, the loss did not decrease by diff_percent % versus num_steps earlier"
    PARAMETERS = (
        Param(name="collection_names", kind=Kind.STR_LIST, doc="collections of scalar losses"),
        Param(name="tensor_regex", kind=Kind.STR_LIST, doc="regexes of scalar losses"),
        Param(name="use_losses_collection", kind=Kind.BOOL, default=True, doc="also use the 'losses' collection"),
        Param(name="num_steps", kind=Kind.INT, default=10, doc="minimum steps between compared losses", check=positive),
        Param(
            name="diff_percent",
            kind=Kind.FLOAT,
            default=0.1,
            doc="required decrease in percent",
            check=lambda v: None if 0 <= v < 100 else "0 <= diff_percent < 100",
        ),
        Param(
            name="increase_threshold_percent",
            kind=Kind.FLOAT,
            default=5.0,
            doc="allowed rise above the best loss, percent",
            check=non_negative,
        ),
        Param(
            name="mode",
            kind=Kind.STR,
            doc="EVAL, TRAIN or GLOBAL (default: mode of the loss's first saved step)",
            choices=("EVAL", "TRAIN", "GLOBAL"),
        ),
        *NOISE_PARAMS,
        Param(
            name="detect_plateau", kind=Kind.BOOL, doc="noise_aware: fire on any stall, also a plateau (default False)"
        ),
    )

    def __init__(
        self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any
    ) -> None:
        super().__init__(base_trial, action_str, other_trials, **parameters)
        self._modes: dict[str, ModeKeys] = {}
        self._last_eval: dict[str, int] = {}
        self._best: dict[str, float] = {}
        self._dropped: dict[str, int] = {}  # mode step of the last decrease beyond noise
        self._best_window: dict[str, tuple[float, int]] = {}

    def validate(self) -> None:
        check_noise_params(self.rule_name, self.p, "detect_plateau")

    def _mode_for(self, name: str, step: int) -> ModeKeys:
        """Fixed at the first step ``name`` is seen: the ``mode`` parameter or that step's mode."""
        if name not in self._modes:
            self._modes[name] = ModeKeys[self.p["mode"].upper()] if self.p["mode"] else self.mode_of(step)[0]
        return self._modes[name]

    def _points(self, name: str, mode: ModeKeys, step: int) -> list[tuple[int, float]]:
        """(mode step, value) of ``name`` up to global ``step``: per saved step, or per evaluation pass."""
        if mode is not ModeKeys.EVAL:
            steps = [g for g in self.steps_of(name) if g <= step and self.mode_of(g)[0] is mode]
            return [(self.mode_of(g)[1], v) for g in steps if (v := self.loss_at(name, g)) is not None]
        out = []
        for run in eval_passes(self.base_trial, step):
            m = self.mean_at(name, run)
            if m is not None:
                out.append((self.mode_of(run[-1])[1], m))
        return out

    def evaluate(self, step: int) -> RuleResult:
        mode, mode_step = self.mode_of(step)
        findings: list[Finding] = []
        seen = False
        n = self.p["num_steps"]
        for name in self.loss_names():
            if self.loss_at(name, step) is not None:
                self._mode_for(name, step)
            if self._modes.get(name) is not mode:
                continue
            last = self._last_eval.get(name)
            if last is not None and mode_step < last + n:
                continue
            if mode is ModeKeys.EVAL:
                now = self.eval_pass_mean(name, step)
                if now is None:
                    continue
                history = self._points(name, mode, step)
                current: list[float] = [now]
            else:
                if self.loss_at(name, step) is None:
                    continue
                history = self._points(name, mode, step)
                current = [v for m, v in history if m > mode_step - n]
                now = mean(current)
            older = [m for m, _ in history if m <= mode_step - n]
            if not older:
                continue
            base_end = older[-1]
            base_vals = [v for m, v in history if base_end - n < m <= base_end]
            if mode is ModeKeys.EVAL:
                base_vals = [v for m, v in history if m == base_end]
            base = mean(base_vals)
            seen = True
            self._last_eval[name] = mode_step
            if self.p["noise_aware"]:
                if found := self._judge_noisy(step, name, (mode, mode_step, base_end), base_vals, current, history):
                    findings.append(found)
                continue
            best = self._best.get(name)
            self._best[name] = now if best is None else min(best, now)
            what = "mean " if len(current) > 1 or len(base_vals) > 1 or mode is ModeKeys.EVAL else ""
            required = base - abs(base) * self.p["diff_percent"] / 100.0
            if now > required:
                findings.append(
                    self.finding(
                        step,
                        f"{what}loss {name} ({mode.name}) is {now:.5g} at step {mode_step}, not below {required:.5g} ({self.p['diff_percent']:g}% under {base:.5g} at step {base_end})",
                        tensor=name,
                        value=now,
                        threshold=required,
                    )
                )
            elif best is not None and now > best + abs(best) * self.p["increase_threshold_percent"] / 100.0:
                findings.append(
                    self.finding(
                        step,
                        f"{what}loss {name} ({mode.name}) rose to {now:.5g}, more than {self.p['increase_threshold_percent']:g}% above the best {best:.5g}",
                        tensor=name,
                        value=now,
                        threshold=best,
                    )
                )
        return RuleResult.from_findings(findings, seen=seen)

    def _judge_noisy(
        self,
        step: int,
        name: str,
        where: tuple[ModeKeys, int, int],
        base_vals: list[float],
        current: list[float],
        history: list[tuple[int, float]],
    ) -> Finding | None:
        """``noise_aware``: window means compared with their standard errors (see the class doc)."""
        mode, mode_step, base_end = where
        n, z = self.p["num_steps"], z_value(self.p)
        recent = [v for m, v in history if m > base_end - n]
        recent = [v for _, v in history[-max(len(recent), 4) :]]  # at least 4 saved values
        fell = window_drop(base_vals, current, recent)
        base, now, drop, se, sigma = mean(base_vals), mean(current), fell.drop, fell.se, fell.sigma
        required = abs(base) * self.p["diff_percent"] / 100.0
        # stalled: flat within noise or falling too little; a window mean above the previous one beyond noise is a
        # rise (judged below, against increase_threshold_percent), not a stop: after a fall it shows noise the
        # successive differences underrate (Keras' running-mean loss, smooth within an epoch, reset at the next)
        stalled = drop + z * se < required and drop >= -z * se
        # a window straddling the stop mixes both regimes: the stall shows within two windows
        abrupt = mode_step - self._dropped.get(name, -3 * n) <= 2 * n
        if fell.beyond(z, required):
            self._dropped[name] = mode_step
        best = self._best_window.get(name)
        if best is None or now < best[0]:
            self._best_window[name] = (now, len(current))
        if stalled and (abrupt or self.p["detect_plateau"]):
            after = "" if self.p["detect_plateau"] else f", within {2 * n} steps of a decrease beyond noise"
            return self.finding(
                step,
                f"mean loss {name} ({mode.name}) is {now:.5g} at step {mode_step}: decreased by {drop:.3g} ± {z * se:.2g} since step {base_end}, less than {self.p['diff_percent']:g}% of {base:.5g} beyond noise{after}",
                tensor=name,
                value=now,
                threshold=base - required,
            )
        if best is None:
            return None
        limit = best[0] + abs(best[0]) * self.p["increase_threshold_percent"] / 100.0
        # also the window means' own spread (as Overtraining's): sigma / sqrt(k) underrates a running-mean loss (Keras')
        k = len(current)
        spread = window_spread([v for _, v in history[-(5 * k - 1) :]], k, around_trend=True)
        rise_se = max(sigma * (1 / best[1] + 1 / k) ** 0.5, spread * 2**0.5)
        if now - limit <= z * rise_se:
            return None
        return self.finding(
            step,
            f"mean loss {name} ({mode.name}) rose to {now:.5g}, more than {self.p['increase_threshold_percent']:g}% above the best window mean {best[0]:.5g} beyond noise (± {z * rise_se:.2g})",
            tensor=name,
            value=now,
            threshold=limit,
        )


def _train_block(rule: BuiltinRule, name: str, eval_steps: list[int]) -> list[int]:
    """Saved TRAIN steps of ``name`` between the previous evaluation pass and ``eval_steps``."""
    steps = [s for s in rule.steps_of(name) if s < eval_steps[0]]
    block: list[int] = []
    for s in reversed(steps):
        mode = rule.mode_of(s)[0]
        if mode is ModeKeys.EVAL and block:
            break
        if mode is ModeKeys.TRAIN:
            block.append(s)
    return block[::-1]


class Overfit(_LossRule):
    """At the end of each evaluation pass (from ``start_step``), compares the pass's mean
    validation loss with the mean training loss of the training steps since the previous
    pass; fires when (val - train) / train > ``ratio_threshold`` for ``patience``
    evaluation passes in a row. XGBoost: ``validation-<m>`` is compared with ``train-<m>``
    at each saved boosting round (``<m>`` a loss metric such as ``logloss`` or ``rmse``).

    ``noise_aware`` (an extension, on in the recommended settings): when
    val - (1 + ratio_threshold) * train exceeds z of its standard errors (the pass's batches and
    the recent training losses; XGBoost: the recent rounds), see :mod:`._noise`, and the
    validation loss is above its best so far beyond noise (a gap that still generalises better
    every evaluation, as boosting's does, is not overfitting yet)."""

    DESCRIPTION = "(mean val loss - mean train loss) / mean train loss > ratio_threshold for patience evaluations"
    PARAMETERS = (
        Param(name="tensor_regex", kind=Kind.STR_LIST, doc="regexes of the loss (default: the 'losses' collection)"),
        Param(name="start_step", kind=Kind.INT, default=0, doc="first global step compared", check=non_negative),
        Param(
            name="patience", kind=Kind.INT, default=1, doc="consecutive evaluations over the threshold", check=positive
        ),
        Param(name="ratio_threshold", kind=Kind.FLOAT, default=0.1, doc="allowed relative gap", check=non_negative),
        *NOISE_PARAMS,
    )

    def __init__(
        self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any
    ) -> None:
        super().__init__(base_trial, action_str, other_trials, **parameters)
        self._count: dict[str, int] = {}
        self._recent: dict[str, list[float]] = {}
        self._best_val: dict[str, float] = {}

    def validate(self) -> None:
        check_noise_params(self.rule_name, self.p)

    def _noise(self, name: str, values: list[float], keep: int = 20) -> float:
        """Successive-difference noise of ``name``'s recent saved values (``values`` appended)."""
        recent = self._recent.setdefault(name, [])
        recent.extend(values)
        del recent[:-keep]
        return noise_sigma(recent) or 0.0

    def _margin(self, key: str, val: list[float], train: list[float], series: bool) -> tuple[float, float]:
        """``noise_aware``: (z standard errors of val - (1 + ratio_threshold) * train, the validation
        mean's standard error); (0, 0) for exact comparisons. ``series``: one value per round
        (XGBoost), its noise from the recent rounds; else the pass's batches and the recent
        training losses, over the square roots of their counts."""
        if not self.p["noise_aware"]:
            return 0.0, 0.0
        grow = 1 + self.p["ratio_threshold"]
        sv = self._noise(key + "/validation", val, 10) if series else noise_sigma(val) or 0.0
        st = self._noise(key + "/training", train, 10 if series else 20)
        se2 = sv * sv / len(val) + (grow * st) ** 2 / len(train)
        return z_value(self.p) * se2**0.5, sv / len(val) ** 0.5

    def loss_names(self) -> list[str]:
        if self.p["tensor_regex"]:
            return self.select_tensors(regexes=self.p["tensor_regex"])
        return self.select_tensors(["losses"])

    def _judge(
        self, step: int, key: str, val_mean: float, train_mean: float, noise: tuple[float, float]
    ) -> Finding | None:
        margin, val_se = noise
        ratio = (val_mean - train_mean) / train_mean
        over = val_mean - train_mean * (1 + self.p["ratio_threshold"]) > margin  # margin 0: ratio > threshold
        best = self._best_val.get(key)
        self._best_val[key] = val_mean if best is None else min(best, val_mean)
        if self.p["noise_aware"]:  # a gap harms once the validation loss rises above its best, beyond noise
            over = over and best is not None and val_mean - best > z_value(self.p) * val_se * 2**0.5
        self._count[key] = self._count.get(key, 0) + 1 if over else 0
        if self._count[key] < self.p["patience"]:
            return None
        return self.finding(
            step,
            f"{key}: validation loss {val_mean:.4g} vs training loss {train_mean:.4g}: ratio {ratio:.3g} > ratio_threshold {self.p['ratio_threshold']:g}"
            + (f" beyond noise (± {margin:.2g}), validation above its best {best:.4g}" if self.p["noise_aware"] else "")
            + f" for {self._count[key]} evaluation(s)",
            tensor=key,
            value=ratio,
            threshold=self.p["ratio_threshold"],
        )

    def evaluate(self, step: int) -> RuleResult:
        if step < self.p["start_step"]:
            return RuleResult.insufficient()
        findings: list[Finding] = []
        seen = False
        names = self.loss_names()
        candidates = names if self.p["tensor_regex"] else sorted(set(names) | set(self.xgboost_candidates()))
        pairs = self.metric_pairs(candidates)
        paired = {n for pair in pairs for n in pair}
        for train_name, val_name in pairs:  # XGBoost: one value per boosting round
            tr, val = self.loss_at(train_name, step), self.loss_at(val_name, step)
            if tr is None or val is None or tr <= 0:
                continue
            seen = True
            margin = self._margin(val_name, [val], [tr], series=True)
            if (found := self._judge(step, val_name, val, tr, margin)) is not None:
                findings.append(found)
        if self.mode_of(step)[0] is ModeKeys.EVAL:
            for name in (n for n in names if n not in paired):
                if self.eval_pass(name, step) is None:
                    continue
                run = pass_steps(self.base_trial, step)
                vals = [v for v in (self.loss_at(name, s) for s in run) if v is not None]
                trains = [v for v in (self.loss_at(name, s) for s in _train_block(self, name, run)) if v is not None]
                if not vals or not trains or mean(trains) <= 0:
                    continue
                seen = True
                margin = self._margin(name, vals, trains, series=False)
                if (found := self._judge(step, name, mean(vals), mean(trains), margin)) is not None:
                    findings.append(found)
        return RuleResult.from_findings(findings, seen=seen)
