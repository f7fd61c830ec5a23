"""Overtraining: the training or validation loss stopped reaching new optima."""

from __future__ import annotations

from typing import Any

from ...modes import ModeKeys
from ...rule_contract._params import Kind, Param, non_negative, positive
from .._result import RuleResult
from ._losses import _LossRule
from ._noise import NOISE_PARAMS, check_noise_params, noise_sigma, window_spread, z_value
from ._running_mean import EpochNoise, epoch_length, epoch_noise, window_variance
from ._series import mean

__all__ = ["Overtraining"]

HISTORY = 256  # saved training losses kept to tell a running mean (several epochs) and measure its noise


class Overtraining(_LossRule):
    """Fires when the training loss has not reached a new optimum (improved by more than
    ``delta``) for ``patience_train`` saved TRAIN steps, or the validation loss for
    ``patience_validation`` saved EVAL steps. The training loss at a step is the mean of
    the last ``patience_train`` saved TRAIN losses (one lucky batch does not set an optimum
    that no later batch can beat); the validation loss is the mean of each evaluation pass,
    judged at the pass's end (the weights do not change inside a pass). XGBoost:
    ``train-<m>`` and ``validation-<m>`` loss metrics, one value per boosting round.

    ``noise_aware`` (an extension, on in the recommended settings): the patience counts
    steps whose loss is worse than its best *beyond noise* (the standard errors of both, from
    successive differences of the saved losses, see :mod:`._noise`); a value within noise of
    the best is as good as the best. A noisy plateau is convergence; a loss that rises, or
    stops changing at all (noise 0), still fires."""

    DESCRIPTION = (
        "training loss not improved by delta for patience_train steps, or validation loss for patience_validation steps"
    )
    PARAMETERS = (
        Param(name="patience_train", kind=Kind.INT, default=5, doc="TRAIN steps without a new optimum", check=positive),
        Param(
            name="patience_validation",
            kind=Kind.INT,
            default=10,
            doc="EVAL steps without a new optimum",
            check=positive,
        ),
        Param(
            name="delta", kind=Kind.FLOAT, default=0.01, doc="minimum improvement for a new optimum", check=non_negative
        ),
        *NOISE_PARAMS,
    )

    def __init__(
        self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any
    ) -> None:
        super().__init__(base_trial, action_str, other_trials, **parameters)
        self._best: dict[tuple[str, str], float] = {}
        self._since: dict[tuple[str, str], int] = {}
        self._train_window: dict[str, list[float]] = {}
        self._series: dict[str, list[float]] = {}
        self._raw: dict[str, list[float]] = {}  # the last five windows of saved training losses
        # noise_aware, a training loss logged as the running mean over the epoch (:mod:`._running_mean`):
        self._history: dict[str, tuple[list[int], list[float]]] = {}  # the last HISTORY (mode step, loss)
        self._saved: dict[str, int] = {}  # saved training losses so far
        self._epoch: dict[str, int | None] = {}  # steps per epoch; None: plain batch losses
        self._noise: dict[str, EpochNoise] = {}  # as measured at the latest window
        self._window_steps: dict[str, list[int]] = {}  # mode steps of the window's losses
        self._best_steps: dict[tuple[str, str], list[int]] = {}  # ... of the best window's

    def validate(self) -> None:
        check_noise_params(self.rule_name, self.p)

    def _series_se(self, name: str, value: float) -> float:
        """Noise of one judged value (a validation pass mean, a boosting round's metric): from its recent series."""
        series = self._series.setdefault(name, [])
        series.append(value)
        del series[: -max(self.p["patience_validation"], 4)]
        return noise_sigma(series) or 0.0

    def loss_names(self) -> list[str]:
        return self.select_tensors(["losses"])

    def _train_se(self, name: str, window: list[float]) -> float:
        """Noise of the smoothed training loss: the larger of the batch noise over sqrt(window) and
        the spread of window means over the last four windows (:func:`._noise.window_spread`: a
        loss logged as a running mean over the epoch, as Keras logs it, is smooth from save to
        save yet differs from epoch to epoch)."""
        k = len(window)
        if (p := self._epoch.get(name)) is not None:  # its own noise model: see _track
            noise = self._noise[name] = epoch_noise(*self._history[name], p, recent=5 * k)
            return float(window_variance(self._window_steps[name], noise) ** 0.5)
        raw = self._raw.setdefault(name, [])
        raw.extend(window if not raw else window[-1:])
        del raw[: -5 * k + 1]
        iid = (noise_sigma(window) or 0.0) / k**0.5
        return float(max(iid, window_spread(raw, k)))

    def _track(self, name: str, mode_step: int, value: float) -> None:
        """Keep the training loss's recent history; noise_aware: tell whether it is a running mean over the
        epoch (:func:`._running_mean.epoch_length`), at 8, 16, 32, ... saved losses (over the last HISTORY)."""
        steps, values = self._history.setdefault(name, ([], []))
        steps.append(mode_step)
        values.append(value)
        del steps[:-HISTORY], values[:-HISTORY]
        window = self._window_steps.setdefault(name, [])
        window.append(mode_step)
        del window[: -self.p["patience_train"]]
        saved = self._saved[name] = self._saved.get(name, 0) + 1
        # at 8, 16, 32, ...: a search weighs every length up to the saved span (0.25 s saved every 100 steps)
        if self.p["noise_aware"] and saved >= 8 and saved & (saved - 1) == 0:
            self._epoch[name] = epoch_length(steps, values)

    def _values(self, step: int) -> list[tuple[str, str, float, int, float]]:
        """(tensor, 'training'|'validation', value, saved steps it stands for, its standard error) judged at ``step``."""
        names = self.loss_names()
        metrics = self.metric_names(sorted(set(names) | set(self.xgboost_candidates())))
        out = []
        for name, (kind, _) in metrics.items():
            if (v := self.loss_at(name, step)) is not None:
                out.append((name, kind, v, 1, self._series_se(name, v)))
        mode = self.mode_of(step)[0]
        for name in (n for n in names if n not in metrics):
            v = self.loss_at(name, step)
            if mode is ModeKeys.TRAIN and v is not None:
                window = self._train_window.setdefault(name, [])
                window.append(v)
                del window[: -self.p["patience_train"]]
                self._track(name, self.mode_of(step)[1], v)
                if len(window) == self.p["patience_train"]:
                    out.append((name, "training", mean(window), 1, self._train_se(name, window)))
            elif mode is ModeKeys.EVAL and (found := self.eval_pass(name, step)) is not None:
                out.append((name, "validation", found[0], found[1], self._series_se(name, found[0])))
        return out

    def evaluate(self, step: int) -> RuleResult:
        findings, seen = [], False
        z = z_value(self.p) if self.p["noise_aware"] else 0.0
        for name, which, now, weight, se in self._values(step):
            patience = self.p["patience_train"] if which == "training" else self.p["patience_validation"]
            seen = True
            key = (name, which)
            best = self._best.get(key)
            if best is None or now < best - self.p["delta"]:
                self._best[key], self._since[key] = now, 0
                if which == "training":
                    self._best_steps[key] = list(self._window_steps.get(name, []))
                continue
            margin = (
                z * se * 2**0.5
            )  # the noise as measured now, for both values: the best's own era may have been noisier
            if which == "training" and self._epoch.get(name) is not None:
                margin = z * (se**2 + window_variance(self._best_steps[key], self._noise[name])) ** 0.5
            if margin > 0 and now - best <= margin:  # noise_aware: within noise of the best
                self._since[key] = 0
                continue
            self._since[key] += weight
            if self._since[key] >= patience:
                findings.append(
                    self.finding(
                        step,
                        f"{which} loss {name} ({now:.5g}) has not improved by more than {self.p['delta']:g} below its best {best:.5g}"
                        + (f", worse beyond noise (± {margin:.2g})," if self.p["noise_aware"] else "")
                        + f" for {self._since[key]} steps (patience {patience})",
                        tensor=name,
                        value=now,
                        threshold=best - self.p["delta"],
                    )
                )
        return RuleResult.from_findings(findings, seen=seen)
