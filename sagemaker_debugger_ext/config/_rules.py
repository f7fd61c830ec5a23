"""``Rule`` (Debugger rules) and ``ProfilerRule``, with the SDK's constructors and factories."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any

import attrs

from .._exceptions import ConfigStateError, ConfigValueError
from ._actions import check_actions, serialize_actions
from ._addresses import check_output_address
from ._checks import (
    check_int,
    check_optional_str,
    check_str,
    copy_optional_dict,
    type_error,
    value_error,
)
from ._collection import CollectionConfig
from ._images import DEFAULT_RULE_EVALUATOR_IMAGE, DETAILED_PROFILER_PREFIX
from ._profiler import DETAILED_PROFILER_INSTANCE_TYPE, DETAILED_PROFILER_VOLUME_SIZE_GB
from ._sdk_types import register_rule_classes

__all__ = ["ProfilerRule", "Rule", "RuleBase", "builtin_rule_names"]


def builtin_rule_names() -> frozenset[str]:
    """Names of smdebug_rulesconfig's built-in Debugger rules (from its ruleConfigs.json)."""
    text = (
        resources.files("smdebug_rulesconfig.debugger_rules")
        .joinpath("rule_config_jsons/ruleConfigs.json")
        .read_text(encoding="utf-8")
    )
    return frozenset(json.loads(text))


def _rule_params(value: Any) -> dict[str, Any] | None:
    return copy_optional_dict("rule_parameters", value)


def _name(value: Any) -> str:
    return check_str("name", value, allow_empty=False, max_len=256)


def _image_uri(value: Any) -> str:
    return check_str("image_uri", value, allow_empty=False, max_len=255)


def _instance_type(value: Any) -> str | None:
    return check_optional_str("instance_type", value)


def _local_path(value: Any) -> str | None:
    return check_optional_str("container_local_output_path", value, max_len=4096)


def _s3_path(value: Any) -> str | None:
    return check_output_address("s3_output_path", value)


def _volume(value: Any) -> int | None:
    return check_int("volume_size_in_gb", value, minimum=0)


def _collections(value: Any) -> list[CollectionConfig]:
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise type_error("collections_to_save", "a list of CollectionConfig", value)
    return [CollectionConfig.convert(item, field="collections_to_save[]") for item in value]


def _source_params(source: Any, rule_to_invoke: Any, other_trials: Any, rule_parameters: Any) -> dict[str, Any]:
    if bool(source) != bool(rule_to_invoke):
        msg = (
            "If you provide a source, you must also provide a rule to invoke (and vice versa): "
            f"got source={source!r}, rule_to_invoke={rule_to_invoke!r}"
        )
        raise ConfigValueError(msg, field="source" if not source else "rule_to_invoke", value=source or rule_to_invoke)
    check_optional_str("source", source or None)
    check_optional_str("rule_to_invoke", rule_to_invoke or None, max_len=256)
    params: dict[str, Any] = {}
    for index, path in enumerate(_other_trials(other_trials)):
        params[f"other_trial_{index}"] = path
    if source:
        params["source_s3_uri"] = source
    if rule_to_invoke:
        params["rule_to_invoke"] = rule_to_invoke
    params.update(_rule_params(rule_parameters) or {})
    return params


def _other_trials(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise type_error("other_trials_s3_input_paths", "a list of S3 URIs", value)
    paths = list(value)
    for path in paths:
        check_str("other_trials_s3_input_paths[]", path, allow_empty=False, max_len=256)
    return paths


def _action_key(actions: Any) -> Any:
    """Comparable form of an Action/ActionList (the SDK's action classes define no equality)."""
    if actions is None:
        return None
    if hasattr(actions, "actions"):
        return tuple(_action_key(a) for a in actions.actions)
    params = getattr(actions, "action_parameters", None)
    return (
        type(actions).__name__,
        tuple(sorted((params or {}).items())),
        getattr(actions, "use_default_training_job_prefix", None),
    )


def _same_actions(a: Any, b: Any) -> bool:
    return bool(_action_key(a) == _action_key(b))


@attrs.define
class RuleBase:
    """Fields shared by :class:`Rule` and :class:`ProfilerRule` (same order as the SDK)."""

    name: str = attrs.field(converter=_name)
    image_uri: str = attrs.field(converter=_image_uri)
    instance_type: str | None = attrs.field(converter=_instance_type)
    container_local_output_path: str | None = attrs.field(converter=_local_path)
    s3_output_path: str | None = attrs.field(converter=_s3_path)
    volume_size_in_gb: int | None = attrs.field(converter=_volume)
    rule_parameters: dict[str, Any] | None = attrs.field(converter=_rule_params)

    @property
    def is_builtin(self) -> bool:
        """True when the image is resolved per region at request time (built-in rules)."""
        return self.image_uri == DEFAULT_RULE_EVALUATOR_IMAGE

    @property
    def source(self) -> str | None:
        """The custom rule source (``source_s3_uri`` parameter), if any."""
        value = (self.rule_parameters or {}).get("source_s3_uri")
        return value if isinstance(value, str) else None


@attrs.define
class Rule(RuleBase):
    """A Debugger rule (``DebugRuleConfiguration``), as ``sagemaker.debugger.Rule``.

    Build it with :meth:`sagemaker` (built-in rules from :mod:`rule_configs`) or
    :meth:`custom` (your own rule source and image). ``collection_configs`` is the SDK's
    attribute name; the constructor argument is ``collections_to_save``.

    .. versionadded:: 0.1.0
    """

    collection_configs: list[CollectionConfig] = attrs.field(
        default=None, converter=_collections, alias="collections_to_save"
    )
    actions: Any = attrs.field(default=None, eq=attrs.cmp_using(eq=_same_actions))

    def __attrs_post_init__(self) -> None:
        check_actions("actions", self.actions)
        for key, value in (self.rule_parameters or {}).items():
            if not isinstance(value, str):
                raise type_error(
                    f"rule_parameters[{key!r}]", "a string (Debugger rule parameters are sent as strings)", value
                )

    @classmethod
    def sagemaker(
        cls,
        base_config: Any,
        name: str | None = None,
        container_local_output_path: str | None = None,
        s3_output_path: str | None = None,
        other_trials_s3_input_paths: list[str] | None = None,
        rule_parameters: dict[str, str] | None = None,
        collections_to_save: list[CollectionConfig] | None = None,
        actions: Any = None,
    ) -> Rule:
        """Build a built-in Debugger rule from ``rule_configs.<rule>()``.

        Raises:
            ConfigTypeError: ``base_config`` is not a built-in rule config.
            ConfigValueError: the rule name is not a known built-in rule.
            ConfigStateError: ``rule_parameters`` has ``rule_to_invoke``, or bad ``actions``.
        """
        rule_name = _builtin_name(base_config)
        user_params = _rule_params(rule_parameters)
        if user_params is not None and user_params.get("rule_to_invoke") is not None:
            msg = (
                f"'rule_parameters' must not contain 'rule_to_invoke' for the SageMaker built-in rule {rule_name!r} "
                f"(got {user_params['rule_to_invoke']!r}); remove it or use Rule.custom"
            )
            raise ConfigStateError(msg)
        check_actions("actions", actions)
        merged: dict[str, Any] = {
            f"other_trial_{i}": p for i, p in enumerate(_other_trials(other_trials_s3_input_paths))
        }
        merged.update(base_config["DebugRuleConfiguration"].get("RuleParameters", {}))
        merged.update(user_params or {})
        base_collections = [
            CollectionConfig(c.get("CollectionName"), c.get("CollectionParameters", {}))
            for c in base_config.get("CollectionConfigurations", [])
        ]
        return cls(
            name=name or rule_name,
            image_uri=DEFAULT_RULE_EVALUATOR_IMAGE,
            instance_type=None,
            container_local_output_path=container_local_output_path,
            s3_output_path=s3_output_path,
            volume_size_in_gb=None,
            rule_parameters=merged,
            collections_to_save=collections_to_save or base_collections,
            actions=actions,
        )

    @classmethod
    def custom(
        cls,
        name: str,
        image_uri: str,
        instance_type: str,
        volume_size_in_gb: int,
        source: str | None = None,
        rule_to_invoke: str | None = None,
        container_local_output_path: str | None = None,
        s3_output_path: str | None = None,
        other_trials_s3_input_paths: list[str] | None = None,
        rule_parameters: dict[str, str] | None = None,
        collections_to_save: list[CollectionConfig] | None = None,
        actions: Any = None,
    ) -> Rule:
        """Build a custom Debugger rule run by your ``image_uri`` (``source`` is a local path or S3 URI).

        Raises:
            ConfigValueError: exactly one of ``source`` / ``rule_to_invoke`` is given.
            ConfigStateError: bad ``actions``.
        """
        check_actions("actions", actions)
        params = _source_params(source, rule_to_invoke, other_trials_s3_input_paths, rule_parameters)
        return cls(
            name=name,
            image_uri=image_uri,
            instance_type=instance_type,
            container_local_output_path=container_local_output_path,
            s3_output_path=s3_output_path,
            volume_size_in_gb=volume_size_in_gb,
            rule_parameters=params,
            collections_to_save=collections_to_save or [],
            actions=actions,
        )

    def prepare_actions(self, training_job_name: str) -> None:
        """Set (or drop) the ``action_json`` rule parameter for ``training_job_name``, as the SDK does.

        SDK v2 estimators call this during ``fit()``. Unlike the SDK, the action objects are
        not modified and a bare ``Email``/``SMS`` action works.
        """
        if self.rule_parameters is None:
            self.rule_parameters = {}
        if self.actions is None:
            self.rule_parameters.pop("action_json", None)
            return
        self.rule_parameters["action_json"] = serialize_actions(self.actions, training_job_name)

    def to_debugger_rule_config_dict(self) -> dict[str, Any]:
        """Return this rule's ``DebugRuleConfiguration`` as the SDK builds it (no defaults applied)."""
        return _rule_dict(self, stringify=False)


def _builtin_name(base_config: Any) -> str:
    expected = "a built-in rule config such as rule_configs.vanishing_gradient()"
    if hasattr(base_config, "rule_name") and hasattr(base_config, "rule_parameters"):
        raise type_error("base_config", f"{expected}; profiler rules go to ProfilerRule.sagemaker", base_config)
    if not isinstance(base_config, Mapping) or not isinstance(base_config.get("DebugRuleConfiguration"), Mapping):
        raise type_error("base_config", expected, base_config)
    name = base_config["DebugRuleConfiguration"].get("RuleConfigurationName")
    known = builtin_rule_names()
    if name not in known:
        raise value_error("base_config RuleConfigurationName", f"one of {', '.join(sorted(known))}", name)
    return str(name)


def _rule_dict(rule: RuleBase, *, stringify: bool) -> dict[str, Any]:
    request: dict[str, Any] = {"RuleConfigurationName": rule.name, "RuleEvaluatorImage": rule.image_uri}
    optional = {
        "InstanceType": rule.instance_type,
        "VolumeSizeInGB": rule.volume_size_in_gb,
        "LocalPath": rule.container_local_output_path,
        "S3OutputPath": rule.s3_output_path,
        "RuleParameters": rule.rule_parameters,
    }
    for key, value in optional.items():
        if value:
            request[key] = value
    if "RuleParameters" in request:
        params = request["RuleParameters"]
        request["RuleParameters"] = {k: str(v) for k, v in params.items()} if stringify else dict(params)
    return request


@attrs.define
class ProfilerRule(RuleBase):
    """A profiler rule (``ProfilerRuleConfiguration``), as ``sagemaker.debugger.ProfilerRule``.

    .. versionadded:: 0.1.0
    """

    @classmethod
    def sagemaker(
        cls,
        base_config: Any,
        name: str | None = None,
        container_local_output_path: str | None = None,
        s3_output_path: str | None = None,
        instance_type: str | None = None,
        volume_size_in_gb: int | None = None,
    ) -> ProfilerRule:
        """Build a built-in profiler rule from ``rule_configs.<ProfilerRule>(...)`` (e.g. ``ProfilerReport()``).

        Raises:
            ConfigTypeError: ``base_config`` is not a profiler rule object.
        """
        if not (
            hasattr(base_config, "rule_name") and isinstance(getattr(base_config, "rule_parameters", None), Mapping)
        ):
            expected = "a profiler rule such as rule_configs.ProfilerReport(); Debugger rules go to Rule.sagemaker"
            raise type_error("base_config", expected, base_config)
        rule_name = name or base_config.rule_name
        if isinstance(rule_name, str) and rule_name.startswith(DETAILED_PROFILER_PREFIX):
            volume_size_in_gb = volume_size_in_gb or DETAILED_PROFILER_VOLUME_SIZE_GB
            instance_type = instance_type or DETAILED_PROFILER_INSTANCE_TYPE
        return cls(
            name=rule_name,
            image_uri=DEFAULT_RULE_EVALUATOR_IMAGE,
            instance_type=instance_type,
            container_local_output_path=container_local_output_path,
            s3_output_path=s3_output_path,
            volume_size_in_gb=volume_size_in_gb,
            rule_parameters=base_config.rule_parameters,
        )

    @classmethod
    def custom(
        cls,
        name: str,
        image_uri: str,
        instance_type: str,
        volume_size_in_gb: int,
        source: str | None = None,
        rule_to_invoke: str | None = None,
        container_local_output_path: str | None = None,
        s3_output_path: str | None = None,
        rule_parameters: dict[str, Any] | None = None,
    ) -> ProfilerRule:
        """Build a custom profiler rule run by your ``image_uri``.

        Raises:
            ConfigValueError: exactly one of ``source`` / ``rule_to_invoke`` is given.
        """
        params = _source_params(source, rule_to_invoke, None, rule_parameters)
        return cls(
            name=name,
            image_uri=image_uri,
            instance_type=instance_type,
            container_local_output_path=container_local_output_path,
            s3_output_path=s3_output_path,
            volume_size_in_gb=volume_size_in_gb,
            rule_parameters=params,
        )

    def to_profiler_rule_config_dict(self) -> dict[str, Any]:
        """Return this rule's ``ProfilerRuleConfiguration``; parameter values are ``str()``-ed as in the SDK."""
        return _rule_dict(self, stringify=True)


register_rule_classes(Rule, ProfilerRule)
