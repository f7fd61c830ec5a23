"""The integrations package costs nothing when the frameworks are not used."""

from __future__ import annotations

import subprocess
import sys


def test_package_import_loads_no_framework() -> None:
    code = ("import sys, sagemaker_debugger_ext.integrations, sagemaker_debugger_ext.integrations._autopatch\n"
            "print(sorted(m for m in ('transformers', 'lightning', 'pytorch_lightning', 'torch') if m in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
