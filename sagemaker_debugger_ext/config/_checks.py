"""Small validation helpers shared by the config objects (house-style messages)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .._exceptions import ConfigTypeError, ConfigValueError, field_error_message

__all__ = [
    "check_bool",
    "check_int",
    "check_number",
    "check_optional_str",
    "check_str",
    "check_str_map",
    "copy_optional_dict",
    "is_sdk_object",
    "type_error",
    "value_error",
]


def type_error(field: str, expected: str, value: Any) -> ConfigTypeError:
    """Build a :class:`ConfigTypeError` with the house-style message."""
    return ConfigTypeError(field_error_message(field, expected, value), field=field, value=value)


def value_error(field: str, expected: str, value: Any) -> ConfigValueError:
    """Build a :class:`ConfigValueError` with the house-style message."""
    return ConfigValueError(field_error_message(field, expected, value), field=field, value=value)


def check_str(field: str, value: Any, *, allow_empty: bool = True, max_len: int | None = None) -> str:
    """Return ``value`` if it is a string within the allowed length, else raise."""
    if not isinstance(value, str):
        raise type_error(field, "a string", value)
    if not allow_empty and not value:
        raise value_error(field, "a non-empty string", value)
    if max_len is not None and len(value) > max_len:
        raise value_error(field, f"a string of at most {max_len} characters", value)
    return value


def check_optional_str(field: str, value: Any, *, max_len: int | None = None) -> str | None:
    """Like :func:`check_str` but ``None`` passes."""
    if value is None:
        return None
    return check_str(field, value, max_len=max_len)


def check_bool(field: str, value: Any) -> bool:
    """Return ``value`` if it is a bool, else raise :class:`ConfigTypeError`."""
    if not isinstance(value, bool):
        raise type_error(field, "a bool", value)
    return value


def check_int(field: str, value: Any, *, minimum: int | None = None, optional: bool = True) -> int | None:
    """Check an (optional) integer that is not a bool and is at least ``minimum``."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise type_error(field, "an integer" if minimum is None else f"an integer >= {minimum}", value)
    if minimum is not None and value < minimum:
        raise value_error(field, f"an integer >= {minimum}", value)
    return value


def check_number(field: str, value: Any, *, exclusive_minimum: float, optional: bool = True) -> float | int | None:
    """Check an (optional) int/float strictly greater than ``exclusive_minimum``."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise type_error(field, f"a number > {exclusive_minimum:g}", value)
    if not value > exclusive_minimum:
        raise value_error(field, f"a number > {exclusive_minimum:g}", value)
    return value


def copy_optional_dict(field: str, value: Any) -> dict[str, Any] | None:
    """Return a shallow copy of a mapping with string keys (``None`` passes)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise type_error(field, "a dict", value)
    for key in value:
        if not isinstance(key, str):
            raise type_error(f"{field} key", "a string", key)
    return dict(value)


_KEY_RE = re.compile(r".{1,256}", re.DOTALL)


def check_str_map(field: str, value: Any, *, max_items: int, max_len: int = 256) -> dict[str, str] | None:
    """Check a string->string map such as hook or collection parameters (service limits)."""
    params = copy_optional_dict(field, value)
    if params is None:
        return None
    if len(params) > max_items:
        raise value_error(field, f"a dict of at most {max_items} entries", f"{len(params)} entries")
    for key, val in params.items():
        if not _KEY_RE.fullmatch(key):
            raise value_error(f"{field} key", f"a string of 1 to {max_len} characters", key)
        if not isinstance(val, str):
            raise type_error(f"{field}[{key!r}]", "a string", val)
        if len(val) > max_len:
            raise value_error(f"{field}[{key!r}]", f"a string of at most {max_len} characters", val)
    return params


def is_sdk_object(value: Any, class_name: str) -> bool:
    """True if ``value`` is an instance of ``sagemaker[.core].debugger``'s ``class_name`` (or a subclass).

    ``sagemaker`` is not imported: objects are recognised by their class name and module, so
    importing this package stays cheap.
    """
    for klass in type(value).__mro__:
        module = getattr(klass, "__module__", "") or ""
        if klass.__name__ == class_name and module.startswith(("sagemaker.debugger", "sagemaker.core.debugger")):
            return True
    return False
