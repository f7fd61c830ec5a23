"""When a collection is saved: ``SaveConfigMode`` (one mode) and ``SaveConfig`` (all modes).

Semantics are smdebug 1.0.34's (docs/hook.md): a mode step ``s`` is saved when it is
listed in ``save_steps`` (always, even outside the range), or when
``start_step <= s < end_step`` and ``s % save_interval == 0`` (the interval is aligned to
step 0, not to ``start_step``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .._exceptions import HookConfigError, field_error_message
from ..modes import ModeKeys

__all__ = [
    "DEFAULT_SAVE_INTERVAL",
    "MODE_PREFIXES",
    "SAVE_KEYS",
    "SaveConfig",
    "SaveConfigMode",
    "parse_int",
    "parse_mode_dicts",
    "parse_save_steps",
    "save_config_from_mode_dicts",
]

DEFAULT_SAVE_INTERVAL = 500
SAVE_KEYS = ("save_interval", "save_steps", "start_step", "end_step")
MODE_PREFIXES: dict[ModeKeys, str] = {
    ModeKeys.TRAIN: "train.",
    ModeKeys.EVAL: "eval.",
    ModeKeys.PREDICT: "predict.",
    ModeKeys.GLOBAL: "global.",
}


def parse_int(field: str, value: Any, *, minimum: int | None = None) -> int:
    """Parse an int given as int or as a decimal string (SageMaker sends strings).

    Raises:
        HookConfigError: naming ``field`` when the value is not an integer or is too small.
    """
    expected = "an integer" if minimum is None else f"an integer >= {minimum}"
    if isinstance(value, bool):
        raise HookConfigError(field_error_message(field, expected, value), field=field, value=value)
    if isinstance(value, int):
        out = value
    elif isinstance(value, str):
        try:
            out = int(value.strip())
        except ValueError:
            raise HookConfigError(field_error_message(field, expected, value), field=field, value=value) from None
    else:
        raise HookConfigError(field_error_message(field, expected, value), field=field, value=value)
    if minimum is not None and out < minimum:
        raise HookConfigError(field_error_message(field, expected, value), field=field, value=value)
    return out


def parse_save_steps(field: str, value: Any) -> tuple[int, ...]:
    """Parse ``save_steps``: a comma-separated string (``"1,2"``) or an iterable of ints."""
    if value is None:
        return ()
    if isinstance(value, str):
        items: Iterable[Any] = [v for v in value.split(",") if v.strip()]
    elif isinstance(value, Iterable):
        items = value
    else:
        raise HookConfigError(
            field_error_message(field, "a comma-separated list of integers", value),
            field=field,
            value=value,
        )
    return tuple(parse_int(field, v, minimum=0) for v in items)


def _interval(value: Any) -> int:
    return parse_int("save_interval", DEFAULT_SAVE_INTERVAL if value is None else value, minimum=1)


def _start(value: Any) -> int:
    return parse_int("start_step", 0 if value is None else value, minimum=0)


def _end(value: Any) -> int | None:
    return None if value is None else parse_int("end_step", value, minimum=0)


def _steps(value: Any) -> tuple[int, ...]:
    return parse_save_steps("save_steps", value)


@attrs.frozen(kw_only=False)
class SaveConfigMode:
    """The save schedule of one mode (smdebug's ``SaveConfigMode``).

    Args:
        save_interval: save every ``save_interval`` mode steps (default 500).
        start_step: first mode step of the interval range (inclusive, default 0).
        end_step: end of the interval range (exclusive); None means no end.
        save_steps: mode steps always saved, in addition to the interval.

    Raises:
        HookConfigError: a value is not an integer, or ``save_interval`` < 1.

    .. versionadded:: 0.1.0
    """

    save_interval: int = attrs.field(default=None, converter=_interval)
    start_step: int = attrs.field(default=None, converter=_start)
    end_step: int | None = attrs.field(default=None, converter=_end)
    save_steps: tuple[int, ...] = attrs.field(default=None, converter=_steps)

    def should_save_step(self, step: int) -> bool:
        """Whether mode step ``step`` is saved."""
        if step in self.save_steps:
            return True
        if step < self.start_step or (self.end_step is not None and step >= self.end_step):
            return False
        return step % self.save_interval == 0

    def next_save_step(self, after: int) -> int | None:
        """The first mode step after ``after`` that :meth:`should_save_step` accepts (None:
        none does)."""
        candidates = [step for step in self.save_steps if step > after]
        first = max(after + 1, self.start_step)
        first += -first % self.save_interval
        if self.end_step is None or first < self.end_step:
            candidates.append(first)
        return min(candidates, default=None)

    def to_json_dict(self) -> dict[str, Any]:
        """The dict smdebug writes in the collections JSON."""
        return {
            "save_interval": self.save_interval,
            "save_steps": list(self.save_steps),
            "start_step": self.start_step,
            "end_step": self.end_step,
        }

    @classmethod
    def from_dict(cls, params: Mapping[str, Any], defaults: Mapping[str, Any] | None = None) -> SaveConfigMode:
        """Build from a dict holding some of the four keys; missing ones come from ``defaults``."""
        merged = {**(defaults or {}), **{k: v for k, v in params.items() if k in SAVE_KEYS}}
        return cls(
            save_interval=merged.get("save_interval"),
            start_step=merged.get("start_step"),
            end_step=merged.get("end_step"),
            save_steps=merged.get("save_steps"),
        )


class SaveConfig:
    """A :class:`SaveConfigMode` per mode (smdebug's ``SaveConfig``).

    ``SaveConfig(save_interval=10)`` applies the same schedule to every mode;
    ``SaveConfig(mode_save_configs={modes.TRAIN: SaveConfigMode(save_interval=5)})`` sets some
    modes and leaves the others to the hook's default (filled in by :meth:`merged_with`).

    .. versionadded:: 0.1.0
    """

    __slots__ = ("_modes",)

    def __init__(
        self,
        mode_save_configs: Mapping[ModeKeys, SaveConfigMode | None] | None = None,
        save_interval: int | str | None = None,
        start_step: int | str | None = None,
        end_step: int | str | None = None,
        save_steps: Iterable[int] | str | None = None,
    ) -> None:
        modes: dict[ModeKeys, SaveConfigMode | None]
        if mode_save_configs is None:
            one = SaveConfigMode(save_interval, start_step, end_step, save_steps)
            modes = dict.fromkeys(ModeKeys, one)
        else:
            modes = dict.fromkeys(ModeKeys)
            for mode, cfg in mode_save_configs.items():
                if not isinstance(mode, ModeKeys) or not (cfg is None or isinstance(cfg, SaveConfigMode)):
                    raise HookConfigError(
                        field_error_message(
                            "mode_save_configs", "a dict of ModeKeys -> SaveConfigMode", dict(mode_save_configs)
                        ),
                        field="mode_save_configs",
                    )
                modes[mode] = cfg
        self._modes = modes

    def get_save_config(self, mode: ModeKeys) -> SaveConfigMode:
        """The schedule of ``mode`` (the default schedule where the mode was left unset)."""
        cfg = self._modes[ModeKeys(mode)]
        return cfg if cfg is not None else SaveConfigMode()

    def is_complete(self) -> bool:
        """Whether every mode has an explicit schedule."""
        return all(v is not None for v in self._modes.values())

    def merged_with(self, default: SaveConfig) -> SaveConfig:
        """A copy where modes left unset take ``default``'s schedule."""
        return SaveConfig({m: (v if v is not None else default.get_save_config(m)) for m, v in self._modes.items()})

    def should_save_step(self, mode: ModeKeys, step: int) -> bool:
        """Whether mode step ``step`` of ``mode`` is saved."""
        return self.get_save_config(mode).should_save_step(step)

    def to_json_dict(self) -> dict[str, Any]:
        """``{"TRAIN": {...}, "EVAL": {...}, "PREDICT": {...}, "GLOBAL": {...}}``."""
        return {m.name: self.get_save_config(m).to_json_dict() for m in ModeKeys}

    @classmethod
    def parse(cls, obj: SaveConfig | SaveConfigMode | Mapping[ModeKeys, SaveConfigMode] | None) -> SaveConfig:
        """Accept what smdebug's hooks accept for ``save_config``."""
        if obj is None:
            return cls()
        if isinstance(obj, SaveConfig):
            return obj
        if isinstance(obj, SaveConfigMode):
            return cls(dict.fromkeys(ModeKeys, obj))
        if isinstance(obj, Mapping):
            return cls(obj)
        raise HookConfigError(
            field_error_message("save_config", "a SaveConfig, SaveConfigMode or dict", obj),
            field="save_config",
            value=obj,
        )

    @classmethod
    def from_dict(cls, params: Mapping[Any, Mapping[str, Any] | None] | None) -> SaveConfig:
        """Build from :meth:`to_json_dict` output (keys: mode names or :class:`ModeKeys`), as smdebug."""
        if params is None:
            return cls()
        if not isinstance(params, Mapping):
            raise HookConfigError(
                field_error_message("save_config", "a dict of mode -> dict", params), field="save_config"
            )
        modes: dict[ModeKeys, SaveConfigMode | None] = {}
        for key, value in params.items():
            try:
                mode = key if isinstance(key, ModeKeys) else ModeKeys[str(key)]
            except KeyError:
                msg = field_error_message("save_config", "keys among TRAIN, EVAL, PREDICT, GLOBAL", key)
                raise HookConfigError(msg, field="save_config", value=key) from None
            modes[mode] = None if value is None else SaveConfigMode.from_dict(value)
        return cls(modes)

    @classmethod
    def from_json(cls, text: str) -> SaveConfig:
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(json.loads(text))

    def to_json(self) -> str:
        """:meth:`to_json_dict` as a JSON string."""
        return json.dumps(self.to_json_dict())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SaveConfig):
            return NotImplemented
        return all(self.get_save_config(m) == other.get_save_config(m) for m in ModeKeys)

    def __hash__(self) -> int:
        return hash(tuple(self.get_save_config(m) for m in ModeKeys))

    def __repr__(self) -> str:
        return f"SaveConfig({ {m.name: self._modes[m] for m in ModeKeys} })"


def _parse_value(field: str, key: str, value: Any) -> Any:
    if key == "save_steps":
        return parse_save_steps(field, value)
    if key == "save_interval":
        return parse_int(field, value, minimum=1)
    if key == "end_step" and value is None:
        return None
    return parse_int(field, value, minimum=0)


def parse_mode_dicts(
    params: Mapping[str, Any],
    *,
    where: str,
    base: Mapping[ModeKeys, Mapping[str, Any]] | None = None,
) -> dict[ModeKeys, dict[str, Any]]:
    """Split flat JSON parameters into one save-key dict per mode, with smdebug's merge order.

    For each mode: the un-prefixed keys, overridden by the mode-prefixed ones
    (``train.save_interval``), and that result overriding ``base`` (the hook's per-mode
    dicts, when parsing a collection) key by key.

    Args:
        params: ``HookParameters`` or ``CollectionParameters`` (string or typed values).
        where: how to name the dict in errors, e.g. ``"HookParameters"``.
        base: per-mode dicts to inherit from.

    Raises:
        HookConfigError: naming the full key (``HookParameters['eval.save_interval']``).
    """
    plain = {k: _parse_value(f"{where}[{k!r}]", k, v) for k, v in params.items() if k in SAVE_KEYS}
    out: dict[ModeKeys, dict[str, Any]] = {}
    for mode, prefix in MODE_PREFIXES.items():
        own = dict(plain)
        for key in SAVE_KEYS:
            full = prefix + key
            if full in params:
                own[key] = _parse_value(f"{where}[{full!r}]", key, params[full])
        out[mode] = {**(base[mode] if base else {}), **own}
    return out


def save_config_from_mode_dicts(
    mode_dicts: Mapping[ModeKeys, Mapping[str, Any]], defaults: Mapping[str, Any] | None = None
) -> SaveConfig:
    """Build a complete :class:`SaveConfig` from :func:`parse_mode_dicts` output."""
    return SaveConfig({m: SaveConfigMode.from_dict(d, defaults) for m, d in mode_dicts.items()})
