"""Rules given on the command line (``--rule NAME[:k=v,...]``, ``--custom-rule FILE:CLASS[:k=v,...]``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._exceptions import ConfigValueError, field_error_message
from ..config import CollectionConfig, Rule, rule_configs
from ..rules.builtin._registry import rule_configs_name

__all__ = ["builtin_rule", "custom_rule", "parse_key_values"]

_ACTION_KEYS = ("action", "stop_training", "email", "sms")


def parse_key_values(text: str, *, field: str) -> dict[str, str]:
    """``a=1,b=x`` -> ``{"a": "1", "b": "x"}``."""
    out: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key:
            msg = field_error_message(field, "comma-separated key=value pairs", text)
            raise ConfigValueError(msg, field=field, value=text)
        out[key.strip()] = value.strip()
    return out


def _actions(params: dict[str, str]) -> Any:
    actions = []
    if params.pop("stop_training", "").lower() in ("1", "true", "yes") or params.get("action", "").lower() in (
        "stoptraining",
        "stop_training",
    ):
        actions.append(rule_configs.StopTraining())
    params.pop("action", None)
    if "email" in params:
        actions.append(rule_configs.Email(params.pop("email")))
    if "sms" in params:
        actions.append(rule_configs.SMS(params.pop("sms")))
    return rule_configs.ActionList(*actions) if actions else None


def builtin_rule(spec: str, *, save_interval: int | None = None) -> Any:
    """A built-in Debugger rule from ``NAME[:k=v,...]`` (``stop_training=true`` adds StopTraining)."""
    name, _, rest = spec.partition(":")
    params = parse_key_values(rest, field="--rule")
    factory = getattr(rule_configs, rule_configs_name(name), None)
    if factory is None or not callable(factory):
        msg = field_error_message("--rule", "a built-in rule name such as ExplodingTensor or LossNotDecreasing", name)
        raise ConfigValueError(msg, field="--rule", value=name)
    base = factory()
    actions = _actions(params)
    collections = None
    if save_interval is not None:
        collections = [
            CollectionConfig(
                c["CollectionName"], {**c.get("CollectionParameters", {}), "save_interval": str(save_interval)}
            )
            for c in base.get("CollectionConfigurations", [])
        ] or None
    return Rule.sagemaker(base, rule_parameters=params or None, actions=actions, collections_to_save=collections)


def custom_rule(spec: str) -> Any:
    """A custom rule from ``FILE.py:CLASS[:k=v,...]`` (its source is used in place)."""
    parts = spec.split(":", 2)
    if len(parts) < 2 or not parts[0].endswith(".py") or not Path(parts[0]).is_file():
        msg = field_error_message("--custom-rule", "FILE.py:CLASS[:k=v,...] with an existing FILE.py", spec)
        raise ConfigValueError(msg, field="--custom-rule", value=spec)
    params = parse_key_values(parts[2] if len(parts) > 2 else "", field="--custom-rule")
    actions = _actions(params)
    return Rule.custom(
        name=parts[1],
        image_uri="local",
        instance_type="ml.m5.xlarge",
        volume_size_in_gb=30,
        source=str(Path(parts[0]).resolve()),
        rule_to_invoke=parts[1],
        rule_parameters=params or None,
        actions=actions,
    )
