"""Warnings before training when a Debugger rule cannot see enough.

From the CreateTrainingJob request alone (nothing runs, nothing is imported from the script):

- a rule's collection saves less often than the hook's ``save_interval`` (the rule configs'
  ``CollectionConfig(..., {"save_interval": "500"})`` overrides the hook's interval, as
  smdebug does);
- the collection's interval is longer than the job can reach, when a hyperparameter says how
  many steps it runs (``steps``, ``max_steps``, ``num_steps``, ``train_steps``,
  ``iterations``, ``num_round``), else when it is 100 steps or more;
- Overfit and Overtraining compare TRAIN and EVAL data, and the entry script (a local file)
  has no sign of an evaluation phase: none of ``modes.EVAL`` (or ``EVAL``), ``evaluate(``,
  ``validation_data``, ``eval_dataset``, ``val_dataloader``, ``validation_step`` in its code
  (comments and strings are not read).

Each warning names the rule, the collection and the fix.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...rules._evidence import RULE_COLLECTIONS

__all__ = ["rule_coverage_warnings"]

_STEP_HYPERPARAMETERS = ("max_steps", "steps", "num_steps", "train_steps", "iterations", "num_round")
_EVAL_SIGNS = re.compile(
    r"modes\.EVAL|ModeKeys\.EVAL|\bEVAL\b|evaluate\(|validation_data|eval_dataset|val_dataloader|validation_step"
)
_NEEDS_EVAL = ("Overfit", "Overtraining")
_LONG_INTERVAL = 100


def _int(value: Any) -> int | None:
    text = str(value).strip().strip('"')
    return int(text) if text.isdigit() else None


def _job_steps(hyperparameters: Mapping[str, Any]) -> tuple[str, int] | None:
    for name in _STEP_HYPERPARAMETERS:
        for key in (name, name.replace("_", "-")):
            if key in hyperparameters and (steps := _int(hyperparameters[key])) is not None:
                return key, steps
    return None


def _fix(collection: str) -> str:
    return f'collections_to_save=[CollectionConfig("{collection}", {{"save_interval": "10"}})]'


def rule_coverage_warnings(request: Mapping[str, Any], script: Path | None = None) -> list[str]:
    """What each Debugger rule of ``request`` will likely not see; ``script`` is the entry
    point's local file when known."""
    hook = request.get("DebugHookConfig") or {}
    rules = request.get("DebugRuleConfigurations") or []
    if not hook or not rules:
        return []
    hook_interval = _int((hook.get("HookParameters") or {}).get("save_interval"))
    intervals = {
        str(c.get("CollectionName")): _int((c.get("CollectionParameters") or {}).get("save_interval"))
        for c in hook.get("CollectionConfigurations") or []
        if isinstance(c, Mapping)
    }
    hyperparameters = request.get("HyperParameters") or {}
    job = _job_steps(hyperparameters)
    source = _read(script)
    out = []
    for cfg in rules:
        params = cfg.get("RuleParameters") or {}
        rule = str(params.get("rule_to_invoke") or cfg.get("RuleConfigurationName"))
        name = str(cfg.get("RuleConfigurationName") or rule)
        named = [c.strip() for c in str(params.get("collection_names") or "").split(",") if c.strip()]
        collections = named or ([RULE_COLLECTIONS[rule]] if rule in RULE_COLLECTIONS else [])
        for coll in collections:
            interval = intervals.get(coll)
            if interval is None:
                continue
            if job is not None and interval > job[1]:
                out.append(f"Rule {name}: collection {coll!r} saves every {interval} steps and the job runs about "
                           f"{job[1]} steps ({job[0]}={job[1]}), so the rule will see at most its first step. "
                           f"Fix: {_fix(coll)}")  # fmt: skip
            elif hook_interval is not None and interval > hook_interval:
                out.append(f"Rule {name}: collection {coll!r} saves every {interval} steps, which overrides the hook's "
                           f"save_interval {hook_interval} for it; a job shorter than {interval} steps gives the rule "
                           f"one step at most. Fix: {_fix(coll)}")  # fmt: skip
            elif job is None and interval >= _LONG_INTERVAL:
                out.append(f"Rule {name}: collection {coll!r} saves every {interval} steps; a job shorter than that "
                           f"gives the rule one step at most. Fix: {_fix(coll)}")  # fmt: skip
        if rule in _NEEDS_EVAL and source is not None and not _EVAL_SIGNS.search(source):
            out.append(f"Rule {name} compares TRAIN and EVAL losses, and the entry script shows no evaluation phase "
                       "(no set_mode(modes.EVAL), evaluate(...), validation data): the rule will have no EVAL data. "
                       "Fix: call hook.set_mode(modes.EVAL) around the validation loop (Keras: validation_data=..., "
                       f"Trainer: eval_dataset=...), and save its losses: {_fix('losses')}")  # fmt: skip
    return out


def _read(script: Path | None) -> str | None:
    if script is None or not script.is_file():
        return None
    try:
        text = script.read_text(errors="replace")
    except OSError:
        return None
    if script.suffix != ".py":
        return text
    try:  # the code only: a docstring saying "never calls set_mode(EVAL)" is no evaluation phase
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        return " ".join(t.string for t in tokens if t.type not in (tokenize.STRING, tokenize.COMMENT))
    except (tokenize.TokenError, SyntaxError):
        return text
