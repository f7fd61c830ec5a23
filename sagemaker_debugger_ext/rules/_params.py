"""Rule parameters: the one ``Param`` machinery, shared with the profiler rules.

It lives in :mod:`sagemaker_debugger_ext._rule_params` (below both ``rules`` and
``profiler`` in the layers); this module keeps the import path the built-in rules use.
"""

from __future__ import annotations

from .._rule_params import Kind, Param, fraction, non_negative, parse_parameters, percent, positive, to_str_list

__all__ = [
    "Kind",
    "Param",
    "fraction",
    "non_negative",
    "parse_parameters",
    "percent",
    "positive",
    "to_str_list",
]
