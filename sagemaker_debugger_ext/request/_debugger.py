"""Assemble the Debugger/profiler part of CreateTrainingJob with SDK v2's defaulting rules.

Pure: inputs are never modified (new objects via ``attrs.evolve``), and the only I/O is
what the caller injects through ``source_uri`` (upload of a custom rule's local source).

Collection order (deterministic, unlike the SDK's hash-seed-dependent ``set``): the
collections of each Debugger rule in ``rules`` order, each rule's own order kept, then the
hook's ``collection_configs``; a collection equal (same name *and* parameters) to an
earlier one is dropped. Same-name collections with different parameters are all kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from .._exceptions import ConfigStateError, UnsupportedRegionError
from ..config._actions import serialize_actions
from ..config._collection import CollectionConfig
from ..config._hook import DebuggerHookConfig, TensorBoardOutputConfig
from ..config._images import (
    DETAILED_PROFILER_PREFIX,
    get_rule_container_image_uri,
    region_supports_debugger,
)
from ..config._profiler import ProfilerConfig
from ..config._rules import ProfilerRule, Rule, RuleBase

__all__ = ["DebuggerRequest", "build_debugger_request", "checkpointing_disables_hook", "merge_collections"]

SourceResolver = Callable[[RuleBase, str], str]


@attrs.frozen
class DebuggerRequest:
    """The Debugger keys of one CreateTrainingJob request, plus the effective config objects.

    ``hook_config`` is the effective hook (``False`` when no ``DebugHookConfig`` is sent),
    ``profiler_config`` the effective profiler config; path helpers derive from them.
    """

    debug_hook_config: dict[str, Any] | None
    debug_rule_configurations: list[dict[str, Any]]
    tensorboard_output_config: dict[str, Any] | None
    profiler_config: dict[str, Any]
    profiler_rule_configurations: list[dict[str, Any]]
    hook_config: DebuggerHookConfig | bool | None = None
    tensorboard_config: TensorBoardOutputConfig | None = None
    profiler_config_object: ProfilerConfig | None = None

    def to_request(self) -> dict[str, Any]:
        """The API keys as the SDK emits them (absent keys are left out)."""
        out: dict[str, Any] = {}
        if self.debug_rule_configurations:
            out["DebugRuleConfigurations"] = self.debug_rule_configurations
        if self.debug_hook_config is not None:
            out["DebugHookConfig"] = self.debug_hook_config
        if self.tensorboard_output_config is not None:
            out["TensorBoardOutputConfig"] = self.tensorboard_output_config
        if self.profiler_rule_configurations:
            out["ProfilerRuleConfigurations"] = self.profiler_rule_configurations
        out["ProfilerConfig"] = self.profiler_config
        return out

    def train_kwargs(self) -> dict[str, Any]:
        """The same values under ``sagemaker.Session.train``'s keyword names."""
        return {
            "debugger_rule_configs": self.debug_rule_configurations or None,
            "debugger_hook_config": self.debug_hook_config,
            "tensorboard_output_config": self.tensorboard_output_config,
            "profiler_rule_configs": self.profiler_rule_configurations or None,
            "profiler_config": self.profiler_config,
        }


def merge_collections(rules: Sequence[Rule], hook: DebuggerHookConfig | None) -> list[CollectionConfig]:
    """Union of the rules' and the hook's collections in the documented deterministic order."""
    merged: list[CollectionConfig] = []
    candidates = [c for rule in rules for c in rule.collection_configs]
    if hook:
        candidates.extend(hook.collection_configs or [])
    for collection in candidates:
        if collection not in merged:
            merged.append(collection)
    return merged


def checkpointing_disables_hook(
    *,
    framework_name: str | None,
    checkpoint_s3_uri: str | None,
    checkpoint_local_path: str | None,
    instance_count: Any,
    distribution: Any = None,
) -> bool:
    """SDK v2 ``Framework`` rule: checkpointing + distributed MXNet/PyTorch/TensorFlow turns the hook off.

    True when both checkpoint settings are given, the framework is mxnet, pytorch or
    tensorflow, and the job is distributed (``instance_count > 1``, a pipeline-variable
    count, or a ``distribution``).
    """
    if not (checkpoint_s3_uri and checkpoint_local_path) or framework_name not in {"mxnet", "pytorch", "tensorflow"}:
        return False
    if not isinstance(instance_count, int):
        return True  # a pipeline variable: the SDK disables the hook to allow any count
    return instance_count > 1 or distribution is not None


def _resolve_rule(rule: RuleBase, region: str, source_uri: SourceResolver | None) -> RuleBase:
    changes: dict[str, Any] = {}
    if rule.is_builtin:
        changes["image_uri"] = get_rule_container_image_uri(rule.name, region)
        if not rule.name.startswith(DETAILED_PROFILER_PREFIX):
            changes["instance_type"] = None
            changes["volume_size_in_gb"] = None
    source = rule.source
    if source is not None and not source.startswith("s3://") and source_uri is not None:
        params = dict(rule.rule_parameters or {})
        params["source_s3_uri"] = source_uri(rule, source)
        changes["rule_parameters"] = params
    return attrs.evolve(rule, **changes) if changes else rule


def _with_actions(rule: Rule, job_name: str) -> Rule:
    params = dict(rule.rule_parameters or {})
    if rule.actions is None:
        params.pop("action_json", None)
    else:
        params["action_json"] = serialize_actions(rule.actions, job_name)
    return attrs.evolve(rule, rule_parameters=params)


def _detailed_profiler_rule(params: Any, name: str) -> ProfilerRule:
    return ProfilerRule.sagemaker(
        _DetailedProfilerBase(),
        name=name,
        instance_type=params.instanceType,
        volume_size_in_gb=params.volumeSizeInGB,
    )


class _DetailedProfilerBase:
    rule_name = DETAILED_PROFILER_PREFIX

    def __init__(self) -> None:
        self.rule_parameters = {"rule_to_invoke": "DetailedProfilerProcessing"}


def build_debugger_request(
    *,
    rules: Sequence[RuleBase] | None,
    debugger_hook_config: DebuggerHookConfig | bool | dict[str, Any] | None,
    tensorboard_output_config: TensorBoardOutputConfig | None,
    profiler_config: ProfilerConfig | None,
    disable_profiler: bool,
    output_path: str,
    region: str,
    job_name: str,
    detailed_profiler_rule_name: str,
    source_uri: SourceResolver | None = None,
    hook_disabled_by_checkpointing: bool = False,
) -> DebuggerRequest:
    """Build the Debugger keys exactly as SDK v2's ``fit()`` would (see module docstring).

    Args:
        rules: Our ``Rule``/``ProfilerRule`` objects, or ``None`` (``[]`` turns off the
            default detailed-profiler rule, as in the SDK).
        debugger_hook_config: ``None`` (default hook), ``True``/``{}`` (same), ``False``
            (no hook) or a ``DebuggerHookConfig``.
        tensorboard_output_config: Optional TensorBoard config.
        profiler_config: Optional profiler config.
        disable_profiler: The estimator's resolved flag (already ``True`` for trn
            instances and unsupported regions).
        output_path: The estimator's output path (default for every ``S3OutputPath``).
        region: AWS region name (rule images, region support).
        job_name: Training job name (``StopTraining`` default prefix).
        detailed_profiler_rule_name: Name for the DetailedProfilerProcessingJobConfig rule
            added when ``profile_params`` is set and no ProfilerRule is given.
        source_uri: ``(rule, local_source) -> uri`` for custom rules with a local source;
            ``None`` leaves local sources as they are.
        hook_disabled_by_checkpointing: Drop the hook, as SDK v2 frameworks do for
            distributed jobs with checkpointing (see :func:`checkpointing_disables_hook`).

    Raises:
        UnsupportedRegionError: a rule image or a hook config in an unsupported region.
        ConfigStateError: ``disable_profiler`` conflicts with a profiler config or rule.
    """
    hook: Any = {} if debugger_hook_config is True else debugger_hook_config
    debugger_rules = [r for r in rules or [] if isinstance(r, Rule)]
    profiler_rules: list[ProfilerRule] = [r for r in rules or [] if isinstance(r, ProfilerRule)]

    # --- debugger (SDK: _prepare_debugger_for_training) ---------------------------------
    if debugger_rules and hook is None:
        hook = DebuggerHookConfig(s3_output_path=output_path)
    if isinstance(hook, DebuggerHookConfig) and not hook.s3_output_path:
        hook = attrs.evolve(hook, s3_output_path=output_path)
    rule_configs = []
    for rule in debugger_rules:
        resolved = _with_actions(_resolve_rule(rule, region, source_uri), job_name)  # type: ignore[arg-type]
        rule_configs.append(resolved.to_debugger_rule_config_dict())
    collections = merge_collections(debugger_rules, hook if isinstance(hook, DebuggerHookConfig) else None)
    if region_supports_debugger(region):
        if hook is None or hook == {}:
            hook = DebuggerHookConfig(s3_output_path=output_path)
    else:
        if hook:
            msg = (
                f"Current region does not support debugger but debugger hook config is set: "
                f"region {region!r} has no Debugger; pass debugger_hook_config=False or use another region"
            )
            raise UnsupportedRegionError(msg, field="debugger_hook_config", value=region)
        hook = False
    if hook_disabled_by_checkpointing and hook:
        hook = False
    hook_dict = None
    if isinstance(hook, DebuggerHookConfig):
        hook = attrs.evolve(hook, collection_configs=collections)
        hook_dict = hook._to_request_dict()

    # --- profiler (SDK: _prepare_profiler_for_training) ----------------------------------
    config = profiler_config
    if disable_profiler:
        if config is not None and not config.disable_profiler:
            msg = (
                "'profiler_config.disable_profiler' must be True when the estimator's disable_profiler is True "
                f"(got profiler_config={config!r})"
            )
            raise ConfigStateError(msg)
        if profiler_rules:
            names = [r.name for r in profiler_rules]
            msg = f"ProfilerRule cannot be set when disable_profiler is True (got profiler rules {names!r})"
            raise ConfigStateError(msg)
    elif region_supports_debugger(region):
        if config is None:
            config = ProfilerConfig(s3_output_path=output_path)
        if rules is None or (rules and not profiler_rules):
            profiler_rules = []
            if config.profile_params:
                profiler_rules.append(_detailed_profiler_rule(config.profile_params, detailed_profiler_rule_name))
    if config is not None and not config.s3_output_path:
        config = attrs.evolve(config, s3_output_path=output_path)
    profiler_rule_configs = [
        _resolve_rule(rule, region, source_uri).to_profiler_rule_config_dict()  # type: ignore[attr-defined]
        for rule in profiler_rules
    ]
    if config is None:
        config = ProfilerConfig(disable_profiler=True)

    tb = tensorboard_output_config
    return DebuggerRequest(
        debug_hook_config=hook_dict,
        debug_rule_configurations=rule_configs,
        tensorboard_output_config=tb._to_request_dict() if tb else None,
        profiler_config=config._to_request_dict(),
        profiler_rule_configurations=profiler_rule_configs,
        hook_config=hook,
        tensorboard_config=tb,
        profiler_config_object=config,
    )
