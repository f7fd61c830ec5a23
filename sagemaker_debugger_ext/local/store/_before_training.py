"""Checks of a CreateTrainingJob request that local mode runs before anything starts.

Everything that can be known before training is reported before training, all at once:
:func:`request_problems` returns one ``(field, message)`` pair per problem (each message
names the value and what is allowed) and :func:`request_warnings` the things that are
legal but almost certainly not meant. The checks read files (custom rule sources) but never
execute them, and make no network call.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..._exceptions import (
    ConfigValueError,
    HookConfigError,
    RuleParameterError,
    field_error_message,
)
from ...config._addresses import resolve_output_address
from ...config._hook_params import COLLECTION_KEYS, HOOK_KEYS
from ...hooks._json_config import parse_hook_config
from ...rules.builtin import BUILTIN_RULES

__all__ = ["output_addresses", "request_problems", "request_warnings"]

Problem = tuple[str, str]
LOCAL_INSTANCE_TYPES = ("local", "local_gpu")
_OTHER_TRIAL = re.compile(r"^other_trial_\d+$")
_RESERVED = ("rule_to_invoke", "source_s3_uri", "action_json")
_RULE_LISTS = ("DebugRuleConfigurations", "ProfilerRuleConfigurations")


def output_addresses(request: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(field, holder)`` for every dict of ``request`` holding an output ``S3OutputPath``."""
    for key in ("OutputDataConfig", "DebugHookConfig", "TensorBoardOutputConfig", "ProfilerConfig"):
        if isinstance(request.get(key), dict):
            yield f"{key}.S3OutputPath", request[key]
    for key in _RULE_LISTS:
        for index, cfg in enumerate(request.get(key) or []):
            if isinstance(cfg, dict):
                yield f"{key}[{index}].S3OutputPath", cfg


def _addresses(request: Mapping[str, Any]) -> list[Problem]:
    problems = []
    for field, holder in output_addresses(request):
        value = holder.get("S3OutputPath")
        if isinstance(value, str) and value:
            try:
                resolve_output_address(field, value)
            except ConfigValueError as exc:
                problems.append((field, str(exc)))
    return problems


def _instances(request: Mapping[str, Any], *, cloud_instance_types: bool = False) -> list[Problem]:
    resource = request.get("ResourceConfig") or {}
    problems = []
    count = resource.get("InstanceCount")
    if "InstanceCount" in resource and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        problems.append(("instance_count", field_error_message("instance_count", "an integer >= 1", count)))
    kind = resource.get("InstanceType")
    cloud = cloud_instance_types and isinstance(kind, str) and kind.startswith("ml.")
    if "InstanceType" in resource and kind not in LOCAL_INSTANCE_TYPES and not cloud:
        expected = "'local' or 'local_gpu' in local mode (the job runs on this machine; use a SageMaker session for ml.* instances)"
        problems.append(("instance_type", field_error_message("instance_type", expected, kind)))
    return problems


def _rule_names(request: Mapping[str, Any]) -> list[Problem]:
    seen: dict[str, str] = {}
    problems = []
    for key in _RULE_LISTS:
        for index, cfg in enumerate(request.get(key) or []):
            name = (cfg or {}).get("RuleConfigurationName")
            field = f"{key}[{index}].RuleConfigurationName"
            if name in seen:
                msg = field_error_message(
                    field, f"unique among the job's rules (also used by {seen[name]}; pass name=...)", name
                )
                problems.append((field, msg))
            else:
                seen[str(name)] = field
    return problems


def _rule_parameters(name: str, params: Mapping[str, Any]) -> dict[str, str]:
    return {
        str(k): "" if v is None else str(v)
        for k, v in params.items()
        if k not in _RESERVED and not _OTHER_TRIAL.match(str(k))
    }


def _did_you_mean(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _builtin_rule(field: str, rule: str, params: Mapping[str, str]) -> list[Problem]:
    declared = {p.name: p for p in getattr(BUILTIN_RULES[rule], "PARAMETERS", ())}
    problems = []
    for key, raw in params.items():
        where = f"{field}[{key!r}]"
        param = declared.get(key)
        if param is None:
            allowed = ", ".join(sorted(declared)) or "none"
            msg = f"{rule}: unknown parameter {key!r} (got {raw!r}){_did_you_mean(key, sorted(declared))}; allowed: {allowed}"
            problems.append((where, msg))
            continue
        try:
            param.convert(raw, rule)
        except RuleParameterError as exc:
            problems.append((where, str(exc)))
    return problems


def _source_path(source: str, base: Path) -> Path | None:
    parsed = urlparse(source)
    if parsed.scheme == "file":
        return base / (parsed.netloc + parsed.path if parsed.netloc not in ("", "localhost") else parsed.path)
    if parsed.scheme == "":
        return base / Path(source).expanduser()
    return None


def _init_arguments(cls: ast.ClassDef) -> set[str] | None:
    """Keyword names ``cls.__init__`` takes; ``None`` when it takes ``**kwargs`` or is inherited."""
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            if node.args.kwarg is not None:
                return None
            return {a.arg for a in (*node.args.args, *node.args.kwonlyargs)}
    return None


def _custom_rule(field: str, rule: str, source: str, params: Mapping[str, str], base: Path) -> list[Problem]:
    path = _source_path(source, base)
    if path is None:
        return []  # s3:// sources are fetched by the rule process
    where = f"{field}['source_s3_uri']"
    if not path.is_file():
        return [(where, field_error_message(where, "an existing Python file (the custom rule source)", source))]
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError as exc:
        return [(where, f"custom rule source {exc.filename}, line {exc.lineno}: SyntaxError: {exc.msg}")]
    except ValueError as exc:
        return [(where, f"custom rule source {path}: {exc}")]
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    if rule not in classes:
        msg = f"'rule_to_invoke' must name a class defined in {path} (got {rule!r}; classes there: {sorted(classes)})"
        return [(f"{field}['rule_to_invoke']", msg)]
    accepted = _init_arguments(classes[rule])
    if accepted is None:
        return []
    known = sorted(accepted - {"self", "base_trial", "other_trials", "action_str"})
    return [
        (
            f"{field}[{key!r}]",
            f"{rule}: unknown parameter {key!r} (got {value!r}){_did_you_mean(key, known)}; {rule}.__init__ takes {known}",
        )
        for key, value in params.items()
        if key not in accepted
    ]


def _rules(request: Mapping[str, Any], base: Path) -> list[Problem]:
    problems = []
    for index, cfg in enumerate(request.get("DebugRuleConfigurations") or []):
        field = f"DebugRuleConfigurations[{index}].RuleParameters"
        raw = (cfg or {}).get("RuleParameters") or {}
        name = str((cfg or {}).get("RuleConfigurationName"))
        rule = str(raw.get("rule_to_invoke") or name)
        params = _rule_parameters(name, raw)
        source = raw.get("source_s3_uri")
        if source:
            problems += _custom_rule(field, rule, str(source), params, base)
        elif rule in BUILTIN_RULES:
            problems += _builtin_rule(field, rule, params)
    return problems


def _hook(request: Mapping[str, Any]) -> list[Problem]:
    hook = request.get("DebugHookConfig")
    if not isinstance(hook, dict):
        return []
    problems = []

    def parse(field: str, config: dict[str, Any]) -> None:
        try:
            parse_hook_config(config)
        except HookConfigError as exc:
            problems.append((field, str(exc)))

    for key, value in (hook.get("HookParameters") or {}).items():
        if key in HOOK_KEYS:
            parse(f"DebugHookConfig.HookParameters[{key!r}]", {"HookParameters": {key: value}})
    for index, coll in enumerate(hook.get("CollectionConfigurations") or []):
        name = (coll or {}).get("CollectionName")
        for key, value in ((coll or {}).get("CollectionParameters") or {}).items():
            if key in COLLECTION_KEYS:
                one = {"CollectionConfigurations": [{"CollectionName": name, "CollectionParameters": {key: value}}]}
                parse(f"DebugHookConfig.CollectionConfigurations[{index}][{key!r}]", one)
    return problems


def _s3_uris(request: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    for field, holder in output_addresses(request):
        value = holder.get("S3OutputPath")
        if field.startswith("ProfilerConfig") and holder.get("DisableProfiler"):
            continue
        if isinstance(value, str) and value.startswith("s3://"):
            yield field, value
    for index, channel in enumerate(request.get("InputDataConfig") or []):
        uri = ((channel or {}).get("DataSource") or {}).get("S3DataSource", {}).get("S3Uri")
        if isinstance(uri, str) and uri.startswith("s3://"):
            yield f"InputDataConfig[{index}] (channel {channel.get('ChannelName')!r})", uri
    for index, cfg in enumerate(request.get("DebugRuleConfigurations") or []):
        source = ((cfg or {}).get("RuleParameters") or {}).get("source_s3_uri")
        if isinstance(source, str) and source.startswith("s3://"):
            yield f"DebugRuleConfigurations[{index}].RuleParameters['source_s3_uri']", source


def _credentials(request: Mapping[str, Any]) -> list[Problem]:
    uris = list(_s3_uris(request))
    if not uris:
        return []
    import boto3  # only for s3:// addresses: local-only jobs never import it

    try:
        usable = boto3.Session().get_credentials() is not None
    except Exception:  # noqa: BLE001 - a broken AWS config is as unusable as none
        usable = False
    if usable:
        return []
    why = (
        "usable AWS credentials for s3:// (none found: set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE), "
        "or a file:// URI or local folder"
    )
    return [(field, field_error_message(field, why, uri)) for field, uri in uris]


def request_problems(
    request: Mapping[str, Any], *, base_dir: str | Path | None = None, cloud_instance_types: bool = False
) -> list[Problem]:
    """Every problem of ``request`` that local mode can know before starting (empty: none).

    ``cloud_instance_types``: ``ml.*`` instance types are accepted too (``serve``: the job runs
    on this machine, the type is recorded).
    """
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    return [
        *_instances(request, cloud_instance_types=cloud_instance_types),
        *_addresses(request),
        *_rule_names(request),
        *_rules(request, base),
        *_hook(request),
        *_credentials(request),
    ]


def request_warnings(request: Mapping[str, Any]) -> list[str]:
    """Legal but almost certainly unintended settings."""
    out = []
    if request.get("DebugRuleConfigurations") and not request.get("DebugHookConfig"):
        names = [str(c.get("RuleConfigurationName")) for c in request["DebugRuleConfigurations"]]
        out.append(
            f"Debugger rules {names} will have no data: the Debugger hook is off (debugger_hook_config=False); "
            "remove debugger_hook_config=False or the rules"
        )
    return out
