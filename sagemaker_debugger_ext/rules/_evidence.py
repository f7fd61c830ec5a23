"""What a rule evaluated, said in its ``StatusDetails``: a verdict never hides an empty evaluation.

SageMaker's statuses stay as they are (``NoIssuesFound`` after evaluating nothing is what the
service says too), but the details say what was evaluated: steps per mode and the last step for
``NoIssuesFound``; why nothing was evaluated ("Not evaluated: ...", with the collection's save
interval, the job's last step and the fix); and the first step, tensor and value for
``IssuesFound``. Every display (the fit() summary, the CLI tables, the HTML report) shows a
rule whose details start with "Not evaluated" as not evaluated, never as healthy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from .._exceptions import DebuggerExtError
from ..exceptions import TensorUnavailableForStep
from ..modes import ModeKeys
from ..rule_contract._result import RuleResult, RuleStatus
from ..rule_contract._status import EvaluationStatus

__all__ = ["NOT_EVALUATED", "RULE_COLLECTIONS", "Evidence", "is_not_evaluated"]

NOT_EVALUATED = "Not evaluated"

# Built-in rule -> the collection it reads when its parameters name none (AWS developer guide).
RULE_COLLECTIONS: Mapping[str, str] = {
    "VanishingGradient": "gradients",
    "ExplodingTensor": "all",
    "WeightUpdateRatio": "weights",
    "LossNotDecreasing": "losses",
    "Overfit": "losses",
    "Overtraining": "losses",
    "DeadRelu": "relu_output",
    "PoorWeightInitialization": "relu_input",
    "SaturatedActivation": "all",
    "FeatureImportanceOverweight": "feature_importance",
    "TreeDepth": "trees",
    "ClassImbalance": "labels",
    "Confusion": "predictions",
}
_NEEDS_EVAL = frozenset({"Overfit", "Overtraining"})
# What a rule can use when a collection holds reductions only (else it needs whole tensors).
_FROM_REDUCTIONS = {
    "VanishingGradient": "the 'mean' abs reduction (abs_reductions=['mean'])",
    "ExplodingTensor": "any reduction (a NaN or inf in a tensor makes its max, min or norms non-finite)",
}


def is_not_evaluated(status: Mapping[str, Any]) -> bool:
    """Whether a ``DebugRuleEvaluationStatuses`` entry is a NoIssuesFound that evaluated nothing."""
    return status.get("RuleEvaluationStatus") == EvaluationStatus.NO_ISSUES_FOUND and str(
        status.get("StatusDetails", "")
    ).startswith(NOT_EVALUATED)


def _steps_text(steps: list[int], limit: int = 6) -> str:
    if not steps:
        return "none"
    shown = ", ".join(str(s) for s in steps[:limit])
    return f"{shown}, ... ({len(steps)} steps)" if len(steps) > limit else shown


class Evidence:
    """Counts the steps a rule really evaluated, per mode, while the runner invokes it."""

    def __init__(self, trial: Any, rule_name: str, rule_to_invoke: str, parameters: Mapping[str, Any]) -> None:
        self.trial = trial
        self.rule_name = rule_name
        self.rule_to_invoke = rule_to_invoke
        self.parameters = dict(parameters)
        self.by_mode: Counter[str] = Counter()
        self.steps: list[int] = []

    @property
    def evaluated(self) -> int:
        """Steps evaluated so far."""
        return sum(self.by_mode.values())

    def record(self, step: int, result: RuleResult) -> None:
        """Count ``step`` when the rule had data for it (its result is not INSUFFICIENT_DATA)."""
        if result.status is not RuleStatus.INSUFFICIENT_DATA:
            self._count(step)

    def _count(self, step: int) -> None:
        try:
            mode = self.trial.mode(step)
            name = getattr(mode, "name", str(mode))
        except DebuggerExtError:  # the mode is only a label here
            name = "GLOBAL"
        self.by_mode[name] += 1
        self.steps.append(step)

    # --- details --------------------------------------------------------------------------
    def issues_found(self, head: str, findings: list[Any]) -> str:
        """``head`` (the service's sentence) plus the first finding: step, tensor, value."""
        if not findings:
            return head
        first = findings[0]
        message = getattr(first, "message", None) or str(first)
        return f"{head}: {message}"

    def no_issues_found(self, note: str | None = None) -> str:
        """What was evaluated, or why nothing (or next to nothing) was ("Not evaluated: ...").

        ``note`` is the rule's own remark (what it ignored, what to set), appended.

        A rule whose only evidence is one or two steps at the very start of a long job (the
        first saved step of a collection that saves every 500 steps, in a 320-step job) is
        reported as not evaluated too: it has seen nothing of the training it judges.
        """
        last = _last_step(self.trial)
        if self.evaluated and not _only_the_start(self.steps, last, self._shortest_interval()):
            modes = ", ".join(f"{m} {n}" for m, n in sorted(self.by_mode.items()))
            text = f"No issues found: evaluated {self.evaluated} steps ({modes}), last step {max(self.steps)}."
            return f"{text} {note}." if note else text
        if self.evaluated:
            head = (f"only {self.evaluated} step(s) ({_steps_text(sorted(self.steps))}) had the data this rule needs, "
                    f"and the trial's saved steps end at {last}.")  # fmt: skip
        else:
            head = "0 steps had the data this rule needs."
        return f"{NOT_EVALUATED}: {head} " + " ".join(self._reasons() + ([f"{note}."] if note else []))

    def _shortest_interval(self) -> int | None:
        """The smallest save interval of the collections this rule reads (None when unknown)."""
        try:
            present = self.trial.collections()
        except DebuggerExtError:  # only used to judge the evidence
            return None
        found = [_interval(present[name]) for name in self._collections() if name in present]
        known = [i for i in found if i]
        return min(known) if known else None

    def _collections(self) -> list[str]:
        named = self.parameters.get("collection_names") or ""
        if isinstance(named, (list, tuple)):
            wanted = [str(c) for c in named]
        else:
            wanted = [c.strip() for c in str(named).split(",") if c.strip()]
        default = RULE_COLLECTIONS.get(self.rule_to_invoke)
        return wanted or ([default] if default else [])

    def _reasons(self) -> list[str]:
        trial = self.trial
        try:
            steps = list(trial.steps())
        except DebuggerExtError:  # the trial could not be read: say only that
            return ["The trial could not be read."]
        if not steps:
            return ["The trial holds no saved step."]
        reasons = []
        last = steps[-1]
        try:
            present = trial.collections()
        except DebuggerExtError:
            present = {}
        regex = self.parameters.get("tensor_regex")
        for name in self._collections():
            if name not in present:
                reasons.append(f"Collection {name!r} was not saved.")
                continue
            reasons.append(self._collection_reason(name, present[name], last))
        if regex and not self._collections():
            reasons.append(f"No saved tensor matched tensor_regex {regex!r} at a step the rule could use.")
        if self.rule_to_invoke in _NEEDS_EVAL and not _has_mode(trial, "EVAL"):
            reasons.append(
                f"{self.rule_to_invoke} compares TRAIN and EVAL data, and the trial has no EVAL step: the script "
                "never called hook.set_mode(modes.EVAL) for its validation pass."
            )
        if not reasons:
            reasons.append(f"The job's saved steps end at {last}.")
        return reasons

    def reductions_only(self) -> str | None:
        """Why nothing was evaluated when the rule's collections hold reductions, not tensors
        (what was saved, what the rule needs, the fix); None when whole tensors were saved."""
        if self.evaluated:
            return None
        for name in self._collections():
            saved = _reductions_of(self.trial, name)
            if saved:
                need = _FROM_REDUCTIONS.get(self.rule_to_invoke, "whole tensors")
                fix = f'CollectionConfig("{name}", {{"save_raw_tensor": "true"}})'
                return (f"Collection {name!r} saved only reductions ({', '.join(saved)}), not whole tensors; "
                        f"{self.rule_to_invoke} needs {need}. Save whole tensors with {fix} (or ReductionConfig("
                        f"save_raw_tensor=True) on the hook) for the steps this rule must judge.")  # fmt: skip
        return None

    def _collection_reason(self, name: str, coll: Any, last: int) -> str:
        reductions = self.reductions_only()
        if reductions is not None:
            return reductions
        interval = _interval(coll)
        saved: set[int] = set()
        try:
            for tname in self.trial.tensor_names(collection=name):
                saved.update(self.trial.tensor(tname).steps())
        except DebuggerExtError:  # the steps are only shown
            pass
        every = f"saves every {interval} steps" if interval else "was saved"
        fix = f'collections_to_save=[CollectionConfig("{name}", {{"save_interval": "10"}})]'
        return (
            f"Collection {name!r} {every} (saved at steps: {_steps_text(sorted(saved))}) and the job's last "
            f"saved step is {last}; save it more often, e.g. {fix}."
        )


def _reductions_of(trial: Any, collection: str) -> list[str]:
    """The reductions (``abs_max``, ``l2_norm``, ...) of the collection's first tensor at its
    last saved step when no whole tensor was saved there; else []."""
    try:
        names = trial.tensor_names(collection=collection)
        if not names:
            return []
        tensor = trial.tensor(names[0])
        step = tensor.steps()[-1]
        try:
            tensor.value(step)
            return []
        except TensorUnavailableForStep:
            pass
        keys = tensor.reduction_values(step)
    except (DebuggerExtError, IndexError):  # only used to judge the evidence (IndexError: no step)
        return []
    return sorted(f"{'abs_' if absolute else ''}{op}{'_norm' if op in ('l1', 'l2') else ''}" for op, absolute in keys)


def _last_step(trial: Any) -> int | None:
    try:
        steps = list(trial.steps())
    except DebuggerExtError:  # only used in a message
        return None
    return steps[-1] if steps else None


def _interval(coll: Any) -> int | None:
    """A collection's TRAIN (else GLOBAL) save interval, from its saved save_config."""
    config = getattr(coll, "save_config", None) or {}
    for mode in ("TRAIN", "GLOBAL"):
        entry = config.get(mode) if isinstance(config, Mapping) else None
        if isinstance(entry, Mapping) and entry.get("save_interval"):
            try:
                return int(entry["save_interval"])
            except (TypeError, ValueError):
                return None
    return None


def _only_the_start(steps: list[int], last: int | None, interval: int | None) -> bool:
    """Fewer than 3 evaluated steps, all at the very start of the job.

    Either within the first 10 % of a job of 20 steps or more, or in a job shorter than the
    collection's save interval (a collection saved every 500 steps keeps only its first step
    in a 320-step job, so the trial cannot even show how long the job ran).
    """
    if not steps or last is None or len(steps) >= 3:
        return False
    return (last >= 20 and max(steps) < 0.1 * last) or (interval is not None and interval > max(last, 1))


def _has_mode(trial: Any, mode_name: str) -> bool:
    try:
        return bool(trial.steps(mode=ModeKeys[mode_name]))
    except DebuggerExtError:
        return False
