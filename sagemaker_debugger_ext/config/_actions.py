"""Rule actions: validation and the ``action_json`` rule parameter, computed without mutation.

The SDK calls ``actions.update_training_job_prefix_if_not_specified(job)`` on the user's
object at fit time (mutating it) and crashes on a bare ``Email``/``SMS``. Here the string is
computed from a copy of each action's parameters, and any single action is accepted.
"""

from __future__ import annotations

from typing import Any

import smdebug_rulesconfig
from smdebug_rulesconfig.actions.actions import Action, ActionList, StopTraining

from .._exceptions import ConfigStateError, field_error_message

__all__ = ["check_actions", "serialize_actions"]


def check_actions(field: str, actions: Any) -> Any:
    """Return ``actions`` if it is ``None``, an ``Action`` or an ``ActionList``.

    Raises:
        ConfigStateError: (a ``RuntimeError``, like the SDK) for anything else.
    """
    if actions is None or smdebug_rulesconfig.is_valid_action_object(actions):
        return actions
    msg = field_error_message(field, "an Action or an ActionList from rule_configs (StopTraining, Email, SMS)", actions)
    raise ConfigStateError(msg)


def _one(action: Action, job_name: str) -> str:
    params = dict(action.action_parameters)
    if isinstance(action, StopTraining) and getattr(action, "use_default_training_job_prefix", False):
        params["training_job_prefix"] = job_name
    return "{" + ", ".join(f'\\"{key}\\": \\"{value}\\"' for key, value in params.items()) + "}"


def serialize_actions(actions: Any, job_name: str) -> str:
    """Return the ``action_json`` value the SDK would send for ``actions`` and ``job_name``.

    A ``StopTraining`` without a prefix gets ``training_job_prefix=job_name`` (after ``name``,
    as in the SDK). The user's action objects are not modified.
    """
    if isinstance(actions, ActionList):
        return "[" + ", ".join(_one(action, job_name) for action in actions.actions) + "]"
    return _one(actions, job_name)
