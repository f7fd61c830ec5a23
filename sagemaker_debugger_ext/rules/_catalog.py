"""Descriptions of the built-in rules for ``rules list`` and the docs."""

from __future__ import annotations

from typing import Any

from .builtin import BUILTIN_RULES, RECOMMENDED_RULE_PARAMETERS

__all__ = ["catalog", "format_default", "profiler_catalog"]


def format_default(value: Any) -> str:
    """Render a default the way a user would type it as a RuleParameters string."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (list, tuple)):
        return ",".join(format_default(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def catalog() -> list[dict[str, Any]]:
    """One dict per built-in rule: name, description, parameters (name, type, default, doc),
    recommended_parameters (``RECOMMENDED_RULE_PARAMETERS``; empty: its defaults are quiet)."""
    out = []
    for name, cls in BUILTIN_RULES.items():
        out.append(
            {
                "name": name,
                "description": cls.DESCRIPTION,
                "parameters": [
                    {"name": p.name, "type": p.kind.name.lower(), "default": format_default(p.default), "doc": p.doc}
                    for p in cls.PARAMETERS
                ],
                "needs_other_trials": cls.NEEDS_OTHER_TRIALS,
                "recommended_parameters": dict(RECOMMENDED_RULE_PARAMETERS.get(name, {})),
            }
        )
    return out


def profiler_catalog() -> list[dict[str, Any]]:
    """One dict per built-in profiler rule (``kind`` = ``"profiler"``), ProfilerReport last:
    name, description, parameters (name, type, default, doc); ProfilerReport takes any
    rule's parameter as ``<Rule>_<param>``."""
    from ..profiler.rules import PROFILER_RULES, ProfilerReport, ProfilerRule

    rules: list[tuple[str, type[ProfilerRule]]] = [
        *sorted(PROFILER_RULES.items()),
        (ProfilerReport.NAME, ProfilerReport),
    ]
    out = []
    for name, cls in rules:
        params = [
            {"name": p.name, "type": p.kind.name.lower(), "default": format_default(p.default), "doc": p.doc}
            for p in cls.PARAMS
        ]
        if cls is ProfilerReport:
            params = [
                {"name": "<Rule>_<param>", "type": "str", "default": "the rule's default",
                 "doc": "any parameter of the rules above, e.g. CPUBottleneck_threshold"},
            ]  # fmt: skip
        out.append({"name": name, "kind": "profiler", "description": cls.DESCRIPTION, "parameters": params,
                    "needs_other_trials": False, "recommended_parameters": {}})  # fmt: skip
    return out
