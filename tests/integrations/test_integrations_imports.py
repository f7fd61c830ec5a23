"""The integrations package costs nothing when the frameworks are not used."""

from __future__ import annotations

import subprocess
import sys


def test_package_import_loads_no_framework() -> None:
    code = ("import sys, sagemaker_debugger_ext.integrations, sagemaker_debugger_ext.integrations._autopatch\n"
            "print(sorted(m for m in ('transformers', 'lightning', 'pytorch_lightning', 'torch') if m in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_plain_hook_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A plain Hook would count micro-batches: the error names the field and what is allowed."""
    import pytest

    from sagemaker_debugger_ext._exceptions import HookConfigError
    from sagemaker_debugger_ext.integrations._hook import resolve_hook
    from sagemaker_debugger_ext.pytorch import Hook

    with pytest.raises(HookConfigError, match="'hook' must be a sagemaker_debugger_ext.integrations.TrainerHook"):
        resolve_hook(Hook(out_dir=str(tmp_path / "a")), {})
