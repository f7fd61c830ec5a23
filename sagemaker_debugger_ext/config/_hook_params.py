"""Hook and collection parameters checked when the config object is built.

Values are parsed by the hook's own parser (:func:`..hooks._json_config.parse_hook_config`),
one key at a time, so a bad value is a :class:`ConfigValueError` at construction instead of
a failed training job; an unknown key gets a warning listing the known ones (the hook
ignores it, as smdebug did).
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Mapping
from typing import Any

from .._exceptions import ConfigValueError, HookConfigError

__all__ = ["check_collection_parameters", "check_hook_parameters"]

_SAVE_KEYS = ("save_interval", "save_steps", "start_step", "end_step")
_PREFIXES = ("", "train.", "eval.", "predict.", "global.")
_COMMON = ("reductions", "save_raw_tensor", "save_shape", "include_regex")
HOOK_KEYS = frozenset(
    [p + k for p in _PREFIXES for k in _SAVE_KEYS]
    + [*_COMMON, "save_all", "include_workers", "export_tensorboard", "tensorboard_dir"]
)
COLLECTION_KEYS = frozenset([p + k for p in _PREFIXES for k in _SAVE_KEYS] + [*_COMMON, "save_histogram"])


def _warn_unknown(field: str, key: str, known: frozenset[str]) -> None:
    close = difflib.get_close_matches(key, sorted(known), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    plain = sorted(k for k in known if "." not in k)
    warnings.warn(
        f"{field}: unknown key {key!r}{hint} is ignored by the hook; known keys: {', '.join(plain)} "
        "(save keys also with a train./eval./predict./global. prefix)",
        UserWarning,
        stacklevel=4,
    )


def _check(field: str, params: Mapping[str, str], known: frozenset[str], wrap: Any) -> None:
    # The hooks (and numpy) load only when a parameter is checked: `import sagemaker_debugger_ext` stays light.
    from ..hooks._json_config import parse_hook_config

    for key, value in params.items():
        if key not in known:
            _warn_unknown(field, key, known)
            continue
        try:
            parse_hook_config(wrap({key: value}))
        except HookConfigError as exc:
            msg = f"{field}[{key!r}]: {exc}"
            raise ConfigValueError(msg, field=f"{field}[{key!r}]", value=value) from None


def check_hook_parameters(field: str, params: Mapping[str, str] | None) -> None:
    """Raise ConfigValueError for a bad hook parameter value; warn on unknown keys."""
    if params:
        _check(field, params, HOOK_KEYS, lambda one: {"HookParameters": one})


def check_collection_parameters(field: str, name: str, params: Mapping[str, str] | None) -> None:
    """Raise ConfigValueError for a bad collection parameter value; warn on unknown keys."""
    if params:
        _check(
            field,
            params,
            COLLECTION_KEYS,
            lambda one: {"CollectionConfigurations": [{"CollectionName": name, "CollectionParameters": one}]},
        )
