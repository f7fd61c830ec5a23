"""Packaging beside either SageMaker SDK major: no major forced, extras per major, one clear error.

Runs in whichever venv runs it (``.venv`` has SDK v2, ``.venv-sdk3`` v3): the part built on the
other major must refuse to import with :class:`SdkVersionError`.
"""

from __future__ import annotations

import configparser
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from sagemaker_debugger_ext._sdk_major import (
    TESTED_SAGEMAKER_TRAIN,
    installed_sdk_major,
    installed_version,
    sagemaker_train_warning,
)
from sagemaker_debugger_ext.exceptions import DebuggerExtError, SdkVersionError

ROOT = Path(__file__).resolve().parent.parent


def _setup_cfg() -> configparser.ConfigParser:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    return cfg


def _requirements(text: str) -> list[Requirement]:
    return [
        Requirement(line.strip()) for line in text.splitlines() if line.strip() and not line.strip().startswith("#")
    ]


def test_base_requirements_force_no_sagemaker_major() -> None:
    base = _requirements(_setup_cfg()["options"]["install_requires"])
    assert "sagemaker" not in {r.name for r in base}
    assert not any(r.name.startswith("sagemaker-") for r in base)


def test_extras_name_one_major_each_and_pin_the_tested_sagemaker_train() -> None:
    extras = _setup_cfg()["options.extras_require"]
    sdk2 = {r.name: r.specifier for r in _requirements(extras["sdk2"])}
    sdk3 = {r.name: r.specifier for r in _requirements(extras["sdk3"])}
    assert "2.257.7" in sdk2["sagemaker"] and "3.27.0" not in sdk2["sagemaker"]
    assert "3.27.0" in sdk3["sagemaker"] and "2.257.7" not in sdk3["sagemaker"]
    major, minor = TESTED_SAGEMAKER_TRAIN
    train = sdk3["sagemaker-train"]
    assert f"{major}.{minor}.0" in train and f"{major}.{minor}.9" in train
    assert f"{major}.{minor + 1}.0" not in train and f"{major}.{minor - 1}.0" not in train


def test_makefile_venv_installs_sdk2() -> None:
    """`make demo` / `make test` on a fresh clone build .venv with SDK v2 (the Estimator's)."""
    makefile = (ROOT / "Makefile").read_text()
    assert "-e '.[sdk2," in makefile


def test_sagemaker_train_outside_the_tested_range_is_named() -> None:
    major, minor = TESTED_SAGEMAKER_TRAIN
    assert sagemaker_train_warning(f"{major}.{minor}.3") is None
    text = sagemaker_train_warning(f"{major}.{minor + 1}.0")
    assert text is not None
    assert f"{major}.{minor + 1}.0 is installed" in text and "[sdk3]" in text


# the parts built on the major that is NOT installed here (module, the major it needs)
_OTHER = {
    2: [("sagemaker_debugger_ext.train", 3)],
    3: [
        ("sagemaker_debugger_ext.estimator", 2),
        ("sagemaker_debugger_ext.local.caller._session", 2),
        ("sagemaker_debugger_ext.cloud._session", 2),
    ],
}


@pytest.mark.skipif(installed_sdk_major() not in _OTHER, reason="needs SageMaker SDK v2 or v3 installed")
@pytest.mark.parametrize("index", [0, 1, 2])
def test_the_other_majors_part_raises_one_clear_error(index: int) -> None:
    have = installed_sdk_major()
    parts = _OTHER[have]
    if index >= len(parts):
        return  # SDK v2 has one such part
    module, needs = parts[index]
    with pytest.raises(SdkVersionError) as info:
        importlib.import_module(module)
    text = str(info.value)
    assert f"sagemaker {installed_version()} (SDK v{have}) is installed" in text
    assert f"needs the SageMaker Python SDK v{needs}" in text
    assert f"pip install 'sagemaker-debugger-ext[sdk{needs}]'" in text
    assert isinstance(info.value, ImportError) and isinstance(info.value, DebuggerExtError)
    assert info.value.required == needs and info.value.installed == installed_version()
    assert info.value.__suppress_context__  # one error, not a chain of ModuleNotFoundErrors


@pytest.mark.skipif(installed_sdk_major() != 3, reason="the v2 parts refuse to import under SDK v3 only")
def test_top_level_v2_names_and_cli_run_under_v3_say_what_to_install(tmp_path: Path) -> None:
    import sagemaker_debugger_ext as sdx

    with pytest.raises(SdkVersionError, match="sagemaker_debugger_ext.LocalSession needs the SageMaker Python SDK v2"):
        _ = sdx.LocalSession
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    out = subprocess.run([sys.executable, "-m", "sagemaker_debugger_ext.cli", "run", str(script)],
                         capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert out.returncode != 0
    assert "sagemaker-debugger-ext run needs the SageMaker Python SDK v2" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.skipif(installed_sdk_major() != 2, reason="the v2 Estimator's names need SDK v2")
def test_lazy_top_level_names_under_v2_import() -> None:
    import sagemaker_debugger_ext as sdx
    from sagemaker_debugger_ext.estimator import Estimator

    assert sdx.Estimator is Estimator and Estimator.__module__ == "sagemaker_debugger_ext.estimator._estimator"


def test_core_imports_without_touching_the_sdk() -> None:
    """The core (configs, trials, request) imports without importing ``sagemaker`` at all."""
    code = (
        "import sys, sagemaker_debugger_ext, sagemaker_debugger_ext.request, sagemaker_debugger_ext.trials\n"
        "from sagemaker_debugger_ext import DebuggerHookConfig, Rule, rule_configs\n"
        "print(any(m == 'sagemaker' or m.startswith('sagemaker.') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("first", ["ours", "sdk"])
def test_our_rules_pass_the_sdk_isinstance_checks_whichever_is_imported_first(first: str) -> None:
    """Registered as virtual subclasses of the SDK's Rule/ProfilerRule (v2's ``sagemaker.debugger``, v3's
    ``sagemaker.core.debugger``) when the SDK's debugger module loads after ours (on its import) or before (at once); the SDK's classes stay apart."""
    ours = "from sagemaker_debugger_ext import ProfilerRule, Rule, rule_configs\n"
    # the debugger module of the SDK major in this venv (SDK v3 moved it to sagemaker.core)
    sdk = f"import {'sagemaker.debugger' if installed_sdk_major() == 2 else 'sagemaker.core.debugger'} as sd\n"
    code = (
        (ours + sdk if first == "ours" else sdk + ours)
        + "r, p = Rule.sagemaker(rule_configs.loss_not_decreasing()), ProfilerRule.sagemaker(rule_configs.ProfilerReport())\n"
        "print(isinstance(r, sd.Rule), isinstance(p, sd.ProfilerRule), isinstance(r, sd.ProfilerRule), isinstance(p, sd.Rule))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "True True False False"
