"""``invoke_rule``: smdebug's loop over global steps, with its exact semantics."""

from __future__ import annotations

import logging
from typing import Any

from ..exceptions import (
    NoMoreProfilerData,
    RuleEvaluationConditionMet,
    StepNotYetAvailable,
    StepUnavailable,
    TensorUnavailable,
    TensorUnavailableForStep,
)

__all__ = ["invoke_rule"]

_log = logging.getLogger(__name__)


def invoke_rule(
    rule_obj: Any, start_step: int | None = 0, end_step: int | None = None, raise_eval_cond: bool = False
) -> None:
    """Invoke ``rule_obj`` at every global step from ``start_step`` up to ``end_step`` (exclusive).

    Steps whose tensors were not saved are skipped; while training runs the loop keeps
    waiting for the next step (as smdebug, which blocks). When the rule's condition is met the
    loop logs and continues, unless ``raise_eval_cond`` is true (the exception propagates)
    or the exception says ``end_of_rule``. With ``end_step=None`` the loop ends when the
    trial raises ``NoMoreData`` past the last step of a finished training job, which
    propagates to the caller as in smdebug.

    Args:
        rule_obj: A :class:`~sagemaker_debugger_ext.rules.Rule` instance.
        start_step: First global step (``None`` means 0).
        end_step: Stop before this global step; ``None`` runs until training ends.
        raise_eval_cond: Re-raise ``RuleEvaluationConditionMet``.

    Raises:
        RuleEvaluationConditionMet: when ``raise_eval_cond`` and the condition is met.
        NoMoreData: past the end of a finished job when ``end_step`` is None.
    """
    step = 0 if start_step is None else int(start_step)
    name = type(rule_obj).__name__
    _log.info("Started execution of rule %s at step %d", name, step)
    while end_step is None or step < end_step:
        try:
            rule_obj.invoke(step)
        except (TensorUnavailableForStep, StepUnavailable, TensorUnavailable) as exc:
            _log.debug("%s", exc)
        except StepNotYetAvailable:
            continue  # still training: keep waiting for this step, as smdebug blocks
        except RuleEvaluationConditionMet as exc:
            if raise_eval_cond:
                raise
            _log.debug("%s", exc)
            if getattr(exc, "end_of_rule", False):
                break
        except NoMoreProfilerData as exc:
            _log.info("No more profiler data for rule %s: %s", name, exc)
            break
        step += 1
    _log.info("Ended execution of rule %s at end_step %d", name, step - 1)
