"""The curated public API: ``__all__`` is sorted, complete, and importing has no side effects."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import sagemaker_debugger_ext
from sagemaker_debugger_ext import _exceptions, exceptions

REPO = Path(__file__).resolve().parent.parent

EXPECTED_PUBLIC = {
    "CollectionConfig",
    "DataloaderProfilingConfig",
    "DebuggerHookConfig",
    "DetailedProfilingConfig",
    "Estimator",
    "FrameworkProfile",
    "HorovodProfilingConfig",
    "LocalSession",
    "Profiler",
    "ProfilerConfig",
    "ProfilerRule",
    "PythonProfiler",
    "PythonProfilingConfig",
    "ReductionConfig",
    "Rule",
    "SMDataParallelProfilingConfig",
    "SaveConfig",
    "SaveConfigMode",
    "TensorBoardOutputConfig",
    "cProfileTimer",
    "get_rule_container_image_uri",
    "modes",
    "rule_configs",
}

# The package's exception tree (_exceptions.py) plus smdebug 1.0.34's exception classes.
EXPECTED_EXCEPTIONS = {
    "ConfigStateError",
    "ConfigTypeError",
    "ConfigValueError",
    "CorruptRecordError",
    "DebuggerExtError",
    "DiskFullError",
    "FormatError",
    "HookConfigError",
    "HookError",
    "IndexReaderException",
    "InsufficientInformationForRuleInvocation",
    "InvalidCollectionConfiguration",
    "InvalidWorker",
    "JobAlreadyExistsError",
    "JobNotFoundError",
    "LocalJobInputError",
    "LocalModeError",
    "MissingCollectionFiles",
    "NoMoreData",
    "NoMoreProfilerData",
    "PathEscapeError",
    "ProfilerError",
    "ReductionNotApplicableError",
    "RequestValidationError",
    "RuleCoverageWarning",
    "RuleError",
    "RuleEvaluationConditionMet",
    "RuleNotFoundError",
    "RuleParameterError",
    "SdkVersionError",
    "SMDebugError",
    "SMDebugNotImplementedError",
    "SMDebugRuntimeError",
    "SMDebugTypeError",
    "SMDebugValueError",
    "ShapeUnavailableForStep",
    "StepNotYetAvailable",
    "StepUnavailable",
    "StorageError",
    "StorageNotFoundError",
    "StorageUnreachableError",
    "TensorUnavailable",
    "TensorUnavailableForStep",
    "TrialError",
    "TruncatedRecordError",
    "UnsupportedDTypeError",
    "UnsupportedRegionError",
}


def test_all_is_sorted() -> None:
    """``__all__`` is sorted."""
    assert sagemaker_debugger_ext.__all__ == sorted(sagemaker_debugger_ext.__all__)


def test_all_equals_public_names() -> None:
    """``__all__`` equals the documented public names, and each resolves."""
    assert set(sagemaker_debugger_ext.__all__) == EXPECTED_PUBLIC
    for name in ("Estimator", "Rule", "rule_configs", "get_rule_container_image_uri"):
        assert getattr(sagemaker_debugger_ext, name) is not None


def test_smdebug_top_level_names_are_the_hook_classes() -> None:
    """``smd.SaveConfig`` & co. (smdebug's top level) are the classes the hooks use, and work."""
    from sagemaker_debugger_ext import hooks
    from sagemaker_debugger_ext import modes as modes_module
    from sagemaker_debugger_ext.core import reduction_config, save_config

    smd = sagemaker_debugger_ext
    assert smd.SaveConfig is hooks.SaveConfig is save_config.SaveConfig
    assert smd.SaveConfigMode is hooks.SaveConfigMode
    assert smd.ReductionConfig is hooks.ReductionConfig is reduction_config.ReductionConfig
    assert smd.modes is modes_module
    assert smd.SaveConfig(save_interval=3).should_save_step(smd.modes.TRAIN, 6)
    assert not smd.SaveConfig(save_interval=3).should_save_step(smd.modes.TRAIN, 7)


def test_public_names_match_module_attributes() -> None:
    """Every non-underscore module attribute except submodules and __version__ is in ``__all__``."""
    import types

    public = {
        name
        for name, value in vars(sagemaker_debugger_ext).items()
        if not name.startswith("_")
        and (not isinstance(value, types.ModuleType) or name == "rule_configs")
        and name not in {"annotations", "Any"}
    }
    assert public <= set(sagemaker_debugger_ext.__all__)


def test_import_leaves_environment_unchanged(tmp_path: Path) -> None:
    """``import sagemaker_debugger_ext`` under a clean env changes no env var and imports no sagemaker."""
    code = (
        "import json, os, sys; before = dict(os.environ); import sagemaker_debugger_ext; "
        "print(json.dumps({'same': dict(os.environ) == before, 'sagemaker': 'sagemaker' in sys.modules, "
        "'hooks': 'sagemaker_debugger_ext.hooks' in sys.modules}))"
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, check=True
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"same": True, "sagemaker": False, "hooks": False}
    assert list(tmp_path.iterdir()) == []


def test_exceptions_all_is_sorted_and_pinned() -> None:
    """``exceptions.__all__`` is sorted and equals the pinned names (tree plus smdebug's classes)."""
    assert exceptions.__all__ == sorted(exceptions.__all__)
    assert set(exceptions.__all__) == EXPECTED_EXCEPTIONS


def test_exceptions_export_the_whole_tree() -> None:
    """Every class of the internal tree is exported as the same object, under the root."""
    tree = {
        name for name, value in vars(_exceptions).items() if isinstance(value, type) and issubclass(value, Exception)
    }
    assert tree <= set(exceptions.__all__)
    for name in exceptions.__all__:
        cls = getattr(exceptions, name)
        assert issubclass(cls, exceptions.DebuggerExtError) or issubclass(cls, UserWarning), name  # or the one warning
        if name in tree:
            assert cls is getattr(_exceptions, name), name
