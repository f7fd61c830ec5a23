"""Compatibility alias of ``smdebug.rules.rule_invoker``."""

from __future__ import annotations

from ._invoker import invoke_rule

__all__ = ["invoke_rule"]
