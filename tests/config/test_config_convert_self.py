"""Each config class converts the SDK's object itself; the config package has no hidden import cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from sagemaker import debugger as sdk

import sagemaker_debugger_ext.config as config_pkg
from sagemaker_debugger_ext.config import (
    CollectionConfig,
    DebuggerHookConfig,
    FrameworkProfile,
    ProfilerConfig,
    TensorBoardOutputConfig,
)
from sagemaker_debugger_ext.config._profiler import Profiler

CONFIG_DIR = Path(config_pkg.__file__).parent
# Function-level imports kept on purpose: the hook's parameter parser (the training side, loaded only
# when hook parameters are checked).
ALLOWED_LATE_IMPORTS = {("_hook_params.py", "..hooks._json_config")}


def test_no_function_level_imports_inside_config() -> None:
    """config modules import each other at module level (a cycle would fail at import, not hide)."""
    late = set()
    for path in CONFIG_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.ImportFrom):
                        late.add((path.name, "." * inner.level + (inner.module or "")))
    assert late <= ALLOWED_LATE_IMPORTS


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (CollectionConfig, sdk.CollectionConfig("weights", {"save_interval": "5"})),
        (
            DebuggerHookConfig,
            sdk.DebuggerHookConfig(s3_output_path="s3://b/p", collection_configs=[sdk.CollectionConfig("losses")]),
        ),
        (TensorBoardOutputConfig, sdk.TensorBoardOutputConfig("s3://b/tb")),
        (ProfilerConfig, sdk.ProfilerConfig(system_monitor_interval_millis=500)),
        (Profiler, sdk.Profiler(cpu_profiling_duration=60)),
    ],
    ids=lambda v: getattr(v, "__name__", type(v).__name__),
)
def test_class_converts_sdk_object(ours: type, theirs: object) -> None:
    """``Cls.convert(sdk_obj)`` is ours, with the SDK object's request fragment, and returns ours unchanged."""
    converted = ours.convert(theirs, field="x")
    assert type(converted) is ours
    if hasattr(theirs, "_to_request_dict"):
        assert converted._to_request_dict() == theirs._to_request_dict()
    assert ours.convert(converted, field="x") is converted


def test_framework_profile_converts_to_fixed_parameters() -> None:
    """An SDK FrameworkProfile's parameters are kept as they are."""
    converted = FrameworkProfile.convert(sdk.FrameworkProfile(num_steps=3), field="framework_profile_params")
    assert converted.profiling_parameters == sdk.FrameworkProfile(num_steps=3).profiling_parameters


def test_convert_refuses_other_objects_naming_the_field() -> None:
    """Anything else is a TypeError naming the field."""
    with pytest.raises(TypeError, match="'debugger_hook_config'"):
        DebuggerHookConfig.convert(object())
    with pytest.raises(TypeError, match="'c'"):
        CollectionConfig.convert("weights", field="c")
