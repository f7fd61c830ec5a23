"""Custom rules: load the class ``rule_to_invoke`` from ``source_s3_uri`` and build it as
smdebug does (base trial first, then the rule parameters as keyword strings)."""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._exceptions import RuleNotFoundError, RuleParameterError
from ..storage import open_storage
from ._rule import Rule

__all__ = ["fetch_source", "instantiate_rule", "load_rule_class"]


def fetch_source(source: str, work_dir: Path) -> Path:
    """Local path of the rule source: ``file://``, a plain path, or ``s3://`` (downloaded)."""
    if source.startswith("s3://"):
        parent, _, name = source.rstrip("/").rpartition("/")
        data = open_storage(parent + "/").read(name)
        target = work_dir / (Path(name).name or "custom_rule.py")
        target.write_bytes(data)
        return target
    path = Path(source.removeprefix("file://")).expanduser()
    if not path.is_file():
        msg = f"'source_s3_uri' must point at a Python file (got {source!r}: no such file)"
        raise RuleNotFoundError(msg)
    return path


def load_rule_class(source: str, class_name: str, *, work_dir: Path | None = None) -> type:
    """Import ``source`` under a private module name and return its class ``class_name``.

    Raises:
        RuleNotFoundError: the file does not exist or has no such class.
    """
    work = Path(tempfile.mkdtemp(prefix="sdx-rule-")) if work_dir is None else work_dir
    path = fetch_source(source, work)
    module_name = "_sdx_custom_rule_" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        msg = f"'source_s3_uri' must be a Python file (got {source!r})"
        raise RuleNotFoundError(msg)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        found = sorted(
            n for n, v in vars(module).items() if isinstance(v, type) and issubclass(v, Rule) and v is not Rule
        )
        msg = f"'rule_to_invoke' must name a class in {path.name} (got {class_name!r}; rule classes there: {found})"
        raise RuleNotFoundError(msg, rule_name=class_name)
    return cls


def instantiate_rule(
    cls: type,
    base_trial: Any,
    parameters: Mapping[str, str],
    *,
    other_trials: Sequence[Any] | None = None,
    action_json: str | None = None,
) -> Any:
    """Call ``cls(base_trial, **parameters)`` the way smdebug's rule container does.

    ``other_trials`` and ``action_str`` are passed when the constructor accepts them.

    Raises:
        RuleParameterError: a parameter the constructor does not take, or a required one missing.
    """
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        sig = None
    kwargs: dict[str, Any] = dict(parameters)
    if sig is not None:
        accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
        names = [n for n in sig.parameters if n != "base_trial"]
        for key in parameters:
            if key not in sig.parameters and not accepts_any:
                msg = f"{cls.__name__}: unknown parameter {key!r} (got {parameters[key]!r}); {cls.__name__}{sig} takes {names}"
                raise RuleParameterError(msg, rule_name=cls.__name__)
        if other_trials and ("other_trials" in sig.parameters or accepts_any):
            kwargs["other_trials"] = list(other_trials)
        if action_json and "action_str" in sig.parameters:
            kwargs["action_str"] = action_json
        try:
            sig.bind(base_trial, **kwargs)
        except TypeError as exc:
            msg = f"{cls.__name__}: parameters do not fit {cls.__name__}{sig}: {exc}"
            raise RuleParameterError(msg, rule_name=cls.__name__) from None
    rule = cls(base_trial, **kwargs)
    if other_trials and not getattr(rule, "other_trials", None):
        rule.other_trials = list(other_trials)
    return rule
