"""Shared machinery of the built-in rules: declared parameters, findings, tensor access."""

from __future__ import annotations

import abc
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ...exceptions import StepUnavailable, TensorUnavailable, TensorUnavailableForStep
from ...modes import ModeKeys
from ...rule_contract._params import Param, parse_parameters
from .._result import Finding, RuleResult, RuleStatus
from .._rule import Rule

__all__ = ["MAX_FINDINGS", "BuiltinRule"]

MAX_FINDINGS = 200  # kept in memory / the report; counts stay exact


class BuiltinRule(Rule):
    """A built-in rule: declared :attr:`PARAMETERS`, :meth:`evaluate` returning a RuleResult.

    Parameters arrive as keyword arguments (strings as SageMaker sends them, or Python
    values); unknown names and bad values raise ``RuleParameterError``.
    """

    PARAMETERS: ClassVar[tuple[Param, ...]] = ()
    DESCRIPTION: ClassVar[str] = ""
    NEEDS_OTHER_TRIALS: ClassVar[bool] = False

    def __init__(
        self,
        base_trial: Any,
        action_str: str | None = None,
        other_trials: Sequence[Any] | None = None,
        **parameters: Any,
    ) -> None:
        super().__init__(base_trial, action_str, other_trials)
        self.params: dict[str, Any] = parse_parameters(self.PARAMETERS, parameters, rule_name=self.rule_name)
        self.validate()
        self.findings: list[Finding] = []
        self.fired_steps: list[int] = []
        self.steps_evaluated = 0
        self.last_result: RuleResult | None = None
        self.report["RuleParameters"] = ", ".join(f"{k}:{v}" for k, v in self.params.items())

    # --- subclass API ---------------------------------------------------------------
    def validate(self) -> None:
        """Cross-parameter checks; raise RuleParameterError (called from ``__init__``)."""

    @abc.abstractmethod
    def evaluate(self, step: int) -> RuleResult:
        """Evaluate at global ``step``."""

    def finalize(self, output_dir: Path) -> None:
        """Called once after the last step (reports write their files here)."""

    def status_note(self) -> str | None:
        """StatusDetails of a run that ended NoIssuesFound: what was not evaluated, and why (None: nothing to say)."""
        if self.steps_evaluated:
            return None
        return f"{self.rule_name} evaluated no step: no saved step held the tensors it inspects (check the rule's collections and tensor_regex)"

    # --- compat bridge ----------------------------------------------------------------
    def invoke_at_step(self, step: int) -> bool:
        """smdebug entry point: evaluate and remember the findings."""
        return self._evaluate_step(step).fired

    def _evaluate_step(self, step: int) -> RuleResult:
        """:meth:`evaluate`, with the counts, findings and smdebug report kept up to date."""
        result = self.evaluate(step)
        self.last_result = result
        if result.status is not RuleStatus.INSUFFICIENT_DATA:
            self.steps_evaluated += 1
            self.report["Datapoints"] += 1
        if result.fired:
            self.fired_steps.append(step)
            self.report["RuleTriggered"] += 1
            self.report["Violations"] += len(result.findings) or 1
            room = MAX_FINDINGS - len(self.findings)
            if room > 0:
                self.findings.extend(result.findings[:room])
            if result.findings:
                self.report["Details"][str(step)] = result.findings[0].message
        return result

    def _end_of_rule(self) -> bool:
        return bool(self.last_result and self.last_result.end_of_rule)

    # --- helpers ------------------------------------------------------------------------
    @property
    def p(self) -> Mapping[str, Any]:
        """Shorthand for the parsed parameters."""
        return self.params

    def select_tensors(
        self,
        collection_names: Iterable[str] | None = None,
        regexes: Iterable[str] | None = None,
        *,
        default_all: bool = False,
        trial: Any = None,
    ) -> list[str]:
        """Union of the tensors of ``collection_names`` and those matching ``regexes``.

        With neither given: every tensor when ``default_all`` else none.
        """
        trial = self.base_trial if trial is None else trial
        collection_names = list(collection_names or [])
        regexes = list(regexes or [])
        if not collection_names and not regexes:
            return sorted(trial.tensor_names()) if default_all else []
        names: set[str] = set()
        known = set(trial.collections()) if collection_names else set()
        for c in collection_names:
            if c in known:
                names.update(trial.tensor_names(collection=c))
        for r in regexes:
            names.update(trial.tensor_names(regex=[r]))
        return sorted(names)

    def value_at(self, name: str, step: int, trial: Any = None) -> np.ndarray | None:
        """The saved raw value of ``name`` at global ``step``, or None when not saved."""
        trial = self.base_trial if trial is None else trial
        try:
            tensor = trial.tensor(name)
            if step not in tensor.steps():
                return None
            return np.asarray(tensor.value(step))
        except (TensorUnavailableForStep, TensorUnavailable, StepUnavailable):
            return None

    def steps_of(self, name: str, mode: ModeKeys = ModeKeys.GLOBAL, trial: Any = None) -> list[int]:
        """Saved steps of ``name`` in ``mode`` (global steps for GLOBAL)."""
        trial = self.base_trial if trial is None else trial
        try:
            return list(trial.tensor(name).steps(mode=mode))
        except TensorUnavailable:
            return []

    def mode_of(self, step: int) -> tuple[ModeKeys, int]:
        """(mode, mode_step) of global ``step``."""
        return ModeKeys(int(self.base_trial.mode(step))), int(self.base_trial.mode_step(step))

    def finding(self, step: int, message: str, **kw: Any) -> Finding:
        """Build a Finding at ``step`` with the step's mode filled in."""
        mode = kw.pop("mode", None)
        if mode is None:
            try:
                mode = self.mode_of(step)[0].name
            except (KeyError, ValueError, StepUnavailable):
                mode = None
        return Finding(step=step, message=message, mode=mode, **kw)
