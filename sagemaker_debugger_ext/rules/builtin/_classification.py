"""Rules over labels and predictions: ClassImbalance, Confusion."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from ...modes import ModeKeys
from ...rule_contract._params import Kind, Param, fraction, positive
from .._result import Finding, RuleResult
from ._base import BuiltinRule
from ._learning import LEARNING_WINDOW_PARAM, LearningGate
from ._noise import (
    LEARNING_Z,
    NOISE_PARAMS,
    check_noise_params,
    confidence_of,
    fell_beyond_noise,
    wilson_interval,
    z_value,
)
from ._series import ends_pass, pass_steps

__all__ = ["ClassImbalance", "Confusion", "class_ids"]


def class_ids(value: np.ndarray, argmax: bool = False) -> np.ndarray:
    """Integer class ids from labels or predictions.

    ``argmax`` (or a 2-D array with more than one column) takes the argmax of the last axis;
    non-integral floats in [0, 1] (binary probabilities) are thresholded at 0.5.
    """
    value = np.asarray(value)
    if argmax or (value.ndim >= 2 and value.shape[-1] > 1):
        return np.asarray(np.argmax(value, axis=-1)).ravel().astype(np.int64)
    flat = value.ravel()
    if np.issubdtype(flat.dtype, np.floating) and flat.size and not np.all(np.mod(flat, 1) == 0):
        if np.all((flat >= 0) & (flat <= 1)):
            return np.asarray(flat >= 0.5).astype(np.int64)
        return np.asarray(np.rint(flat), dtype=np.int64)
    return flat.astype(np.int64)


Window = collections.deque[tuple[dict[int, int], dict[int, int]]]  # per step: (labels, mispredicted) per class


def _samples(steps: list[tuple[dict[int, int], dict[int, int]]]) -> int:
    return sum(sum(counts.values()) for counts, _ in steps)


def _per_class(window: Window) -> tuple[dict[int, int], dict[int, int]]:
    """(labels, mispredicted) per class over a window of steps."""
    seen: dict[int, int] = {}
    wrong: dict[int, int] = {}
    for counts, mispredicted in window:
        for c, n in counts.items():
            seen[c] = seen.get(c, 0) + n
            wrong[c] = wrong.get(c, 0) + mispredicted.get(c, 0)
    return seen, wrong


class _LearningGated(BuiltinRule):
    """A class-level rule with ``learning_window`` (:mod:`._learning`): its gate, the check of its
    noise parameters and the gate's note in the status details."""

    def __init__(
        self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any
    ) -> None:
        super().__init__(base_trial, action_str, other_trials, **parameters)
        self._gate = LearningGate(self, self.p["learning_window"])

    def validate(self) -> None:
        check_noise_params(self.rule_name, self.p, "learning_window")

    def status_note(self) -> str | None:
        notes = [n for n in (super().status_note(), self._gate.note()) if n]
        return "; ".join(notes) or None


class ClassImbalance(_LearningGated):
    """Counts labels per class across steps; once ``samples`` labels were seen, fires when
    largest/smallest class count > ``threshold_imbalance``. Mispredictions are judged on a
    trained model: the first ``samples`` labels are the warm-up, then a class fires when
    its fraction of mispredictions among the most recent ``samples`` (or more, whole
    steps) labels > ``threshold_misprediction``.

    ``noise_aware`` (an extension, on in the recommended settings): a class's misprediction
    fraction fires only when the lower end of its Wilson score interval at ``confidence`` is
    above ``threshold_misprediction`` (a few hundred samples cannot tell 0.71 from 0.70), and
    not while the class is still being learned: when its misprediction fraction fell from the
    previous ``samples`` labels (the warm-up, at the first judgement) to the recent ones beyond
    sampling error (one-sided two-proportion z test at ``LEARNING_CONFIDENCE``, 0.95), the model
    is not trained on it yet (a slow learner's late class); a truly mispredicted class does not
    improve. ``learning_window`` (with ``noise_aware``; recommended 4): no class is judged while
    the model as a whole is still learning, its loss still falling beyond noise
    (:mod:`._learning`): a class whose turn has not come yet is mispredicted flat."""

    DESCRIPTION = "after `samples` labels: largest/smallest class count > threshold_imbalance, or a class's misprediction fraction > threshold_misprediction"
    PARAMETERS = (
        Param(
            name="threshold_imbalance",
            kind=Kind.FLOAT,
            default=10.0,
            doc="allowed largest/smallest class count",
            check=positive,
        ),
        Param(
            name="threshold_misprediction",
            kind=Kind.FLOAT,
            default=0.7,
            doc="allowed misprediction fraction per class",
            check=fraction,
        ),
        Param(name="samples", kind=Kind.INT, default=500, doc="labels needed before judging", check=positive),
        Param(name="argmax", kind=Kind.BOOL, default=False, doc="argmax the predictions (probability vectors)"),
        Param(name="labels_regex", kind=Kind.STR, default=".*labels", doc="the labels tensor"),
        Param(name="predictions_regex", kind=Kind.STR, default=".*predictions", doc="the predictions tensor"),
        *NOISE_PARAMS,
        LEARNING_WINDOW_PARAM,
    )

    def __init__(
        self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any
    ) -> None:
        super().__init__(base_trial, action_str, other_trials, **parameters)
        self._counts: dict[int, int] = {}
        self._recent: Window = collections.deque()
        self._previous: Window = collections.deque()  # the samples before the recent ones

    def evaluate(self, step: int) -> RuleResult:
        labels_names = self.select_tensors(regexes=[self.p["labels_regex"]])
        pred_names = self.select_tensors(regexes=[self.p["predictions_regex"]])
        labels = next((v for v in (self.value_at(n, step) for n in labels_names) if v is not None), None)
        if labels is None:
            return RuleResult.insufficient()
        y = class_ids(labels)
        preds = next((v for v in (self.value_at(n, step) for n in pred_names) if v is not None), None)
        p = class_ids(preds, self.p["argmax"]) if preds is not None else None
        if p is not None and p.shape != y.shape:
            p = None
        warm = sum(self._counts.values()) >= self.p["samples"]
        step_counts: dict[int, int] = {}
        step_wrong: dict[int, int] = {}
        for c, n in zip(*np.unique(y, return_counts=True), strict=True):
            self._counts[int(c)] = self._counts.get(int(c), 0) + int(n)
            step_counts[int(c)] = int(n)
            if p is not None:
                step_wrong[int(c)] = int(np.count_nonzero(p[y == c] != c))
        if p is not None:  # the warm-up's steps are the first judgement's previous window
            (self._recent if warm else self._previous).append((step_counts, step_wrong))
            while len(self._recent) > 1 and _samples(list(self._recent)[1:]) >= self.p["samples"]:
                self._previous.append(self._recent.popleft())
            while len(self._previous) > 1 and _samples(list(self._previous)[1:]) >= self.p["samples"]:
                self._previous.popleft()
        total = sum(self._counts.values())
        if total < self.p["samples"]:
            return RuleResult.insufficient()
        findings: list[Finding] = []
        big, small = max(self._counts, key=self._counts.get), min(self._counts, key=self._counts.get)  # type: ignore[arg-type]
        ratio = self._counts[big] / self._counts[small]
        if ratio > self.p["threshold_imbalance"]:
            findings.append(
                self.finding(
                    step,
                    f"class {big} has {self._counts[big]} samples, class {small} {self._counts[small]}: imbalance {ratio:.3g} > threshold_imbalance {self.p['threshold_imbalance']:g}",
                    tensor=labels_names[0] if labels_names else None,
                    value=ratio,
                    threshold=self.p["threshold_imbalance"],
                )
            )
        seen_n, wrong_n = _per_class(self._recent)
        before_n, before_wrong = _per_class(self._previous)
        if sum(seen_n.values()) >= self.p["samples"] and not self._gate.still_learning(step):
            z = z_value(self.p) if self.p["noise_aware"] else 0.0
            for c in sorted(seen_n):
                frac = wrong_n[c] / seen_n[c]
                low = wilson_interval(wrong_n[c], seen_n[c], z)[0] if z else frac
                before = (before_wrong.get(c, 0), before_n.get(c, 0))
                if z and fell_beyond_noise(before, (wrong_n[c], seen_n[c]), LEARNING_Z):
                    continue  # still being learned
                if low > self.p["threshold_misprediction"]:
                    beyond = f" (Wilson lower bound {low:.2f} at confidence {confidence_of(self.p):g})" if z else ""
                    findings.append(
                        self.finding(
                            step,
                            f"class {c}: {frac:.2f} of the last {seen_n[c]} samples mispredicted{beyond} > threshold_misprediction {self.p['threshold_misprediction']:g}",
                            tensor=pred_names[0] if pred_names else None,
                            value=frac,
                            threshold=self.p["threshold_misprediction"],
                        )
                    )
        return RuleResult.met(*findings) if findings else RuleResult.not_met()


class Confusion(_LearningGated):
    """Builds the confusion matrix ``C[label][prediction]`` of each step; for every predicted
    class i, fires when ``C[i][i] / sum_j C[j][i] < min_diag`` or an off-diagonal
    ``C[j][i] / sum_j C[j][i] > max_off_diag``. In EVAL mode the matrix holds the whole
    evaluation pass, judged at its end (a step's batch alone is noise). ``mode`` (an extension; AWS judges every
    step) restricts it to one mode's steps, e.g. EVAL: a trained model on held-out data (GLOBAL
    steps, as XGBoost saves, are always judged). ``noise_aware``: a share fires only when its
    Wilson interval at ``confidence`` lies wholly past the threshold. ``patience`` (an
    extension; 1, AWS: every judged matrix alone): a share fires only when it fails in
    ``patience`` consecutive judged matrices (a slow start is right again by the next pass; a
    confused class stays confused). With ``noise_aware``, a share that improved since the
    previous judged matrix beyond sampling error (one-sided two-proportion z test at
    ``LEARNING_CONFIDENCE``, 0.95) is still being learned: it neither fires nor counts toward
    ``patience``. ``learning_window`` (with ``noise_aware``; recommended 4): no matrix is judged
    while the model as a whole is still learning, its loss still falling beyond noise
    (:mod:`._learning`); such a matrix neither fires nor counts toward ``patience``."""

    DESCRIPTION = "per predicted class: diagonal share < min_diag or an off-diagonal share > max_off_diag"
    PARAMETERS = (
        Param(
            name="category_no",
            kind=Kind.INT,
            doc="number of classes (default: inferred)",
            check=lambda v: None if v >= 2 else ">= 2",
        ),
        Param(name="labels", kind=Kind.STR, default="labels", doc="labels tensor name"),
        Param(name="predictions", kind=Kind.STR, default="predictions", doc="predictions tensor name"),
        Param(name="labels_collection", kind=Kind.STR, default="labels", doc="collection holding the labels"),
        Param(
            name="predictions_collection",
            kind=Kind.STR,
            default="predictions",
            doc="collection holding the predictions",
        ),
        Param(name="min_diag", kind=Kind.FLOAT, default=0.9, doc="minimum diagonal share", check=fraction),
        Param(name="max_off_diag", kind=Kind.FLOAT, default=0.1, doc="maximum off-diagonal share", check=fraction),
        Param(
            name="mode",
            kind=Kind.STR,
            doc="judge only steps of this mode (and GLOBAL steps): EVAL, TRAIN or PREDICT (default: every step)",
            choices=("EVAL", "TRAIN", "PREDICT"),
        ),
        Param(
            name="patience",
            kind=Kind.INT,
            default=1,
            doc="consecutive judged matrices a share must fail before it fires (extension; 1: AWS)",
            check=positive,
        ),
        *NOISE_PARAMS,
        LEARNING_WINDOW_PARAM,
    )

    def __init__(
        self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any
    ) -> None:
        super().__init__(base_trial, action_str, other_trials, **parameters)
        self._failing: dict[tuple[int, int], int] = {}  # (label, predicted) -> consecutive judged matrices failed
        self._last: np.ndarray | None = None  # the previous judged matrix (noise_aware: is a share improving?)

    def _improving(self, matrix: np.ndarray, cell: tuple[int, int], noise_aware: float) -> bool:
        """Whether the failing share of ``cell`` (label, predicted) fell since the previous matrix beyond noise."""
        last = self._last
        if not noise_aware or last is None or last.shape != matrix.shape:
            return False
        j, i = cell

        def failing(m: np.ndarray) -> tuple[int, int]:  # (samples on the failing side, column total)
            col = int(m[:, i].sum())
            return (col - int(m[i, i]) if j == i else int(m[j, i])), col

        return fell_beyond_noise(failing(last), failing(matrix), LEARNING_Z)

    def _persists(self, failed: set[tuple[int, int]], cell: tuple[int, int]) -> bool:
        failed.add(cell)
        return self._failing.get(cell, 0) + 1 >= int(self.p["patience"])

    def _find(self, name: str, collection: str, step: int) -> tuple[str | None, np.ndarray | None]:
        names = set(self.base_trial.tensor_names())
        candidates = [name] if name in names else []
        candidates += self.select_tensors([collection]) + self.select_tensors(regexes=[name])
        for n in candidates:
            v = self.value_at(n, step)
            if v is not None:
                return n, v
        return None, None

    def evaluate(self, step: int) -> RuleResult:
        if self.p["mode"] and self.base_trial.mode(step) not in (ModeKeys.GLOBAL, ModeKeys[self.p["mode"].upper()]):
            return RuleResult.insufficient()
        steps = [step]
        if self.base_trial.mode(step) == ModeKeys.EVAL:  # one matrix per evaluation pass, at its end
            if not ends_pass(self.base_trial, step):
                return RuleResult.insufficient()
            steps = pass_steps(self.base_trial, step)
        ys, ps = [], []
        lname = pname = None
        for s in steps:
            ln, labels = self._find(self.p["labels"], self.p["labels_collection"], s)
            pn, preds = self._find(self.p["predictions"], self.p["predictions_collection"], s)
            if labels is None or preds is None:
                continue
            y, p = class_ids(labels), class_ids(preds)
            if y.shape == p.shape and y.size:
                ys.append(y)
                ps.append(p)
                lname, pname = ln, pn
        if not ys:
            return RuleResult.insufficient()
        y, p = np.concatenate(ys), np.concatenate(ps)
        k = self.p["category_no"] or int(max(y.max(), p.max())) + 1
        keep = (y >= 0) & (y < k) & (p >= 0) & (p < k)
        matrix = np.zeros((k, k), dtype=np.int64)
        np.add.at(matrix, (y[keep], p[keep]), 1)
        if self._gate.still_learning(step):  # no verdict while the model as a whole learns; the streaks start over
            self._failing, self._last = {}, matrix
            return RuleResult.not_met()
        findings: list[Finding] = []
        failed: set[tuple[int, int]] = set()
        z = z_value(self.p) if self.p["noise_aware"] else 0.0
        beyond = f" beyond sampling error (Wilson, confidence {confidence_of(self.p):g})" if z else ""
        if self.p["patience"] > 1:
            beyond += f" in {self.p['patience']} consecutive evaluations"
        for i in range(k):
            col = int(matrix[:, i].sum())
            if col == 0:
                continue
            diag = matrix[i, i] / col
            low_diag = (wilson_interval(int(matrix[i, i]), col, z)[1] if z else diag) < self.p["min_diag"]
            if low_diag and not self._improving(matrix, (i, i), z) and self._persists(failed, (i, i)):
                findings.append(
                    self.finding(
                        step,
                        f"predicted class {i}: diagonal share {diag:.3f} of {col} < min_diag {self.p['min_diag']:g}{beyond}",
                        tensor=pname,
                        value=float(diag),
                        threshold=self.p["min_diag"],
                    )
                )
            for j in range(k):
                share = matrix[j, i] / col
                off = wilson_interval(int(matrix[j, i]), col, z)[0] if z else share
                high = j != i and off > self.p["max_off_diag"]
                if high and not self._improving(matrix, (j, i), z) and self._persists(failed, (j, i)):
                    findings.append(
                        self.finding(
                            step,
                            f"predicted class {i}: share of label {j} is {share:.3f} of {col} > max_off_diag {self.p['max_off_diag']:g}{beyond}",
                            tensor=lname,
                            value=float(share),
                            threshold=self.p["max_off_diag"],
                        )
                    )
        self._failing = {cell: self._failing.get(cell, 0) + 1 for cell in failed}
        self._last = matrix
        return RuleResult.met(*findings) if findings else RuleResult.not_met()
