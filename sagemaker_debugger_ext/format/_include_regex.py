"""A collection's ``include_regex``: the one check and the one matcher of both ``Collection`` classes.

The hook's collection (``hooks``) and the reader's (``trials``, ``trial.collection(name)``)
accept a regex through :func:`compile_include_regex`, so a bad one is refused the same way
(:class:`~sagemaker_debugger_ext.exceptions.HookConfigError` naming the collection), and a
name belongs to a collection when :func:`name_matches` says so: listed explicitly, or found
by one of its regexes with ``re.search``, as the collections file documents.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable

from .._exceptions import HookConfigError, field_error_message

__all__ = ["compile_include_regex", "include_items", "name_matches"]


def include_items(regex: object) -> list[object]:
    """The items of an ``include()`` argument: one string, or an iterable of them."""
    if isinstance(regex, str):
        return [regex]
    if isinstance(regex, Iterable):
        return list(regex)
    return [regex]


def compile_include_regex(collection: str, item: object, given: object = None) -> re.Pattern[str]:
    """Check and compile one include regex of ``collection``.

    Args:
        collection: The collection's name (named in the error).
        item: One regex.
        given: What the caller passed (a list holding ``item``), for the type error.

    Raises:
        HookConfigError: ``item`` is not a string, or not a valid regex.
    """
    if not isinstance(item, str):
        value = item if given is None else given
        msg = field_error_message("include_regex", "a string or a list of strings", value)
        raise HookConfigError(msg, field="include_regex", value=value)
    try:
        return re.compile(item)
    except re.error as exc:
        msg = field_error_message(f"{collection}.include_regex", f"a valid regex ({exc})", item)
        raise HookConfigError(msg, field="include_regex", value=item) from None


def name_matches(name: str, names: Container[str], patterns: Iterable[re.Pattern[str]]) -> bool:
    """Whether ``name`` is listed in ``names`` or found by one of ``patterns`` (``re.search``)."""
    return name in names or any(p.search(name) for p in patterns)
