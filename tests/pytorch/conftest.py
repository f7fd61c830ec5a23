"""Fixtures of the PyTorch tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def smdebug_torch_python(smdebug_python: Path) -> Path:
    """Python of the smdebug 1.0.34 reference venv, once it imports torch and ``smdebug.pytorch`` (else skip)."""
    probe = subprocess.run(
        [str(smdebug_python), "-c", "import torch, smdebug.pytorch"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        pytest.skip("torch is not installed in .venv-smdebug; run `make smdebug-venv`")
    return smdebug_python
