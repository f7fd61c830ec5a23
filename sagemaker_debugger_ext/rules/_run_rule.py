"""Run one rule against a trial, as a rule container does: status file, report, actions.

This is one of the package's process boundaries: any exception of the rule (built-in or
custom) becomes the ``Error`` status with the last line of its traceback.
"""

from __future__ import annotations

import logging
import re
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from .._exceptions import RuleNotFoundError, StorageNotFoundError
from ..exceptions import (
    NoMoreData,
    NoMoreProfilerData,
    RuleEvaluationConditionMet,
    StepNotYetAvailable,
    StepUnavailable,
    TensorUnavailable,
    TensorUnavailableForStep,
)
from ..profiler.rules._cli import run_rule as run_profiler_rule
from ..profiler.rules._registry import PROFILER_RULES, ProfilerReport
from ..rule_contract._result import RuleResult
from ..rule_contract._status import write_status
from ..trials import create_trial
from ._actions import Actions, parse_action_json
from ._custom import instantiate_rule, load_rule_class
from ._evidence import Evidence
from ._report import write_report
from ._result import EvaluationStatus
from .builtin import BUILTIN_RULES, BuiltinRule

__all__ = ["PROFILER_RULE_NAMES", "RunOutcome", "RunRequest", "run_rule", "split_parameters"]

_log = logging.getLogger(__name__)

# Every profiler rule name, from the one registry (ProfilerReport runs them all).
PROFILER_RULE_NAMES = frozenset({*PROFILER_RULES, ProfilerReport.NAME})
_OTHER_TRIAL = re.compile(r"^other_trial_(\d+)$")


@attrs.frozen(kw_only=True)
class RunRequest:
    """Everything one rule process needs (the flags of ``python -m sagemaker_debugger_ext.rules run``)."""

    trial_path: str
    rule_name: str
    parameters: Mapping[str, str] = attrs.field(factory=dict)
    output_dir: Path = attrs.field(converter=Path)
    status_file: Path | None = attrs.field(default=None, converter=attrs.converters.optional(Path))
    stop_file: Path | None = attrs.field(default=None, converter=attrs.converters.optional(Path))
    start_step: int = 0
    end_step: int | None = None
    poll_interval: float | None = None
    region: str | None = None
    trial_wait_s: float | None = None  # None: wait for the trial folder as long as needed


@attrs.frozen(kw_only=True)
class RunOutcome:
    """Final status of a rule process."""

    status: EvaluationStatus
    details: str
    fired_steps: tuple[int, ...] = ()


@attrs.frozen(kw_only=True)
class SplitParameters:
    """RuleParameters sorted by role."""

    rule_to_invoke: str
    source: str | None
    action_json: str | None
    other_trials: tuple[str, ...]
    rule_parameters: dict[str, str]


def split_parameters(rule_name: str, parameters: Mapping[str, str]) -> SplitParameters:
    """Separate ``rule_to_invoke``, ``source_s3_uri``, ``action_json`` and ``other_trial_<i>``."""
    params = {str(k): "" if v is None else str(v) for k, v in parameters.items()}
    others = sorted((int(m.group(1)), params.pop(k)) for k in list(params) if (m := _OTHER_TRIAL.match(k)))
    return SplitParameters(
        rule_to_invoke=params.pop("rule_to_invoke", "") or rule_name,
        source=params.pop("source_s3_uri", None) or None,
        action_json=params.pop("action_json", None) or None,
        other_trials=tuple(path for _, path in others),
        rule_parameters=params,
    )


def _last_line(exc: BaseException) -> str:
    return traceback.format_exception_only(type(exc), exc)[-1].strip()


def _met_details(rule_name: str, step: int) -> str:
    return f"RuleEvaluationConditionMet: Evaluation of the rule {rule_name} at step {step} resulted in the condition being met"


_WAIT_FOREVER_S = 10.0 * 365 * 24 * 3600  # a rule waits as long as training runs


def _open_trial(path: str, name: str, poll_interval: float | None, wait_s: float | None = 0.0) -> Any:
    """create_trial, waiting (``wait_s``; None = no limit) for a folder the job has not created yet."""
    kwargs: dict[str, Any] = {"wait_timeout_s": _WAIT_FOREVER_S}
    if poll_interval is not None:
        kwargs["poll_interval_s"] = poll_interval
    deadline = None if wait_s is None else time.monotonic() + wait_s
    while True:
        try:
            return create_trial(path, name=name, **kwargs)
        except StorageNotFoundError:
            if deadline is not None and time.monotonic() >= deadline:
                raise
            time.sleep(poll_interval or 1.0)


def _build_rule(req: RunRequest, split: SplitParameters, base: Any, others: list[Any]) -> Any:
    if split.source:
        custom = load_rule_class(split.source, split.rule_to_invoke)
        return instantiate_rule(custom, base, split.rule_parameters, other_trials=others, action_json=split.action_json)
    cls = BUILTIN_RULES.get(split.rule_to_invoke)
    if cls is None:
        msg = (
            f"'rule_to_invoke' must be a built-in rule (got {split.rule_to_invoke!r}); "
            f"built-ins: {', '.join(sorted(BUILTIN_RULES))}; custom rules also need 'source_s3_uri'"
        )
        raise RuleNotFoundError(msg, rule_name=split.rule_to_invoke)
    return cls(base, other_trials=others or None, **split.rule_parameters)


def _result_at(rule: Any, step: int) -> RuleResult:
    """A built-in rule's RuleResult at ``step``; a user's smdebug-style rule speaks through
    ``invoke`` and ``RuleEvaluationConditionMet``, translated here (its only translation)."""
    if isinstance(rule, BuiltinRule):
        return rule.result_at(step)
    try:
        rule.invoke(step)
    except RuleEvaluationConditionMet as exc:
        return RuleResult.met(end_of_rule=bool(getattr(exc, "end_of_rule", False)))
    return RuleResult.not_met()


def run_rule(req: RunRequest, *, on_status: Callable[[EvaluationStatus, str], None] | None = None) -> RunOutcome:
    """Evaluate one rule from ``req.start_step`` until training ends (or ``req.end_step``).

    Writes the status file (InProgress → IssuesFound as soon as it fires → final), the
    report files into ``req.output_dir`` and runs the actions on the first firing.
    """

    def status(s: EvaluationStatus, details: str) -> None:
        if req.status_file is not None:
            write_status(req.status_file, s, details)
        if on_status is not None:
            on_status(s, details)

    status(EvaluationStatus.IN_PROGRESS, "")
    split = split_parameters(req.rule_name, req.parameters)
    if split.source is None and split.rule_to_invoke in PROFILER_RULE_NAMES:
        return _run_profiler_rule(req, split, status)
    fired: list[int] = []
    rule: Any = None
    outcome = RunOutcome(status=EvaluationStatus.ERROR, details="rule process ended early")
    try:
        specs = parse_action_json(split.action_json)
        base = _open_trial(req.trial_path, "base_trial", req.poll_interval, req.trial_wait_s)
        others = [_open_trial(p, f"other_trial_{i}", req.poll_interval) for i, p in enumerate(split.other_trials)]
        rule = _build_rule(req, split, base, others)
        evidence = Evidence(
            base,
            req.rule_name,
            split.rule_to_invoke,
            rule.params if isinstance(rule, BuiltinRule) else split.rule_parameters,
        )
        if req.poll_interval is not None and hasattr(rule, "poll_interval"):
            rule.poll_interval = req.poll_interval
        existing = getattr(getattr(rule, "_actions", None), "specs", ())
        rule._actions = Actions(
            (*specs, *[s for s in existing if s not in specs]),
            rule_name=req.rule_name,
            stop_file=req.stop_file,
            region=req.region,
        )
        step = req.start_step
        while req.end_step is None or step < req.end_step:
            try:
                result = _result_at(rule, step)
            except (TensorUnavailableForStep, StepUnavailable, TensorUnavailable) as exc:
                _log.debug("%s", exc)
                step += 1
                continue
            except StepNotYetAvailable:
                continue  # the trial's wait ran out while training still runs: wait again
            except (NoMoreData, NoMoreProfilerData) as exc:
                last = getattr(exc, "last_step", None)
                _log.info(
                    "all saved steps evaluated: training has ended%s",
                    f" (last saved step {last})" if last is not None else "",
                )
                break
            evidence.record(step, result)
            if result.fired:
                fired.append(step)
                if len(fired) == 1:
                    details = evidence.issues_found(
                        _met_details(req.rule_name, step), list(getattr(rule, "findings", ()))
                    )
                    status(EvaluationStatus.ISSUES_FOUND, details)
                    _write_report(req, split, rule, fired, EvaluationStatus.ISSUES_FOUND, details)
                if result.end_of_rule:
                    break
            step += 1
        if isinstance(rule, BuiltinRule):
            rule.finalize(req.output_dir)
        if fired:
            details = evidence.issues_found(_met_details(req.rule_name, fired[0]), list(getattr(rule, "findings", ())))
            outcome = RunOutcome(status=EvaluationStatus.ISSUES_FOUND, details=details, fired_steps=tuple(fired))
        else:
            note = rule.status_note() if isinstance(rule, BuiltinRule) else None
            if note is not None and note == BuiltinRule.status_note(rule):
                note = None  # the generic "evaluated no step": the evidence says it, with the reason
            reductions_only = evidence.reductions_only()
            if reductions_only is not None:  # the data is there, in a form this rule cannot judge
                outcome = RunOutcome(status=EvaluationStatus.ERROR, details=reductions_only, fired_steps=())
            else:
                outcome = RunOutcome(status=EvaluationStatus.NO_ISSUES_FOUND, details=evidence.no_issues_found(note),
                                     fired_steps=())  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - process boundary: any failure is the Error status
        _log.debug("rule failed", exc_info=True)
        outcome = RunOutcome(status=EvaluationStatus.ERROR, details=_last_line(exc), fired_steps=tuple(fired))
    status(outcome.status, outcome.details)
    _write_report(req, split, rule, fired, outcome.status, outcome.details)
    return outcome


def _run_profiler_rule(
    req: RunRequest, split: SplitParameters, status: Callable[[EvaluationStatus, str], None]
) -> RunOutcome:
    """A profiler rule over a ``profiler-output`` folder, in this process, through the same status writer."""
    last = [EvaluationStatus.ERROR, "rule process ended early"]

    def on_status(s: EvaluationStatus, details: str) -> None:
        last[:] = [s, details]
        status(s, details)

    params = {**split.rule_parameters, "rule_to_invoke": split.rule_to_invoke}
    poll_s = 0.5 if req.poll_interval is None else req.poll_interval
    run_profiler_rule(req.trial_path, req.rule_name, params, req.output_dir, None, poll_s=poll_s, on_status=on_status)
    outcome = RunOutcome(status=EvaluationStatus(last[0]), details=str(last[1]))
    _write_report(req, split, None, [], outcome.status, outcome.details)
    return outcome


def _write_report(
    req: RunRequest, split: SplitParameters, rule: Any, fired: list[int], s: EvaluationStatus, details: str
) -> None:
    builtin = isinstance(rule, BuiltinRule)
    params: Mapping[str, Any] = rule.params if builtin else split.rule_parameters
    actions = getattr(getattr(rule, "_actions", None), "log", [])
    write_report(
        req.output_dir,
        rule_configuration_name=req.rule_name,
        rule_to_invoke=split.rule_to_invoke,
        status=s,
        status_details=details,
        parameters=params,
        fired_steps=fired,
        findings=list(rule.findings) if builtin else [],
        steps_evaluated=rule.steps_evaluated if builtin else None,
        actions=list(actions),
        smdebug_report=getattr(rule, "report", None),
    )
