"""The SDK's v2 notices appear once per process, and not for this package's own Estimator (issue 15)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagemaker_debugger_ext._sdk_notices import quiet_sdk_notices

SCRIPT = """
from sagemaker_debugger_ext import Estimator, LocalSession
for _ in range(2):
    est = Estimator(image_uri="local-python", role="arn:aws:iam::123456789012:role/R", instance_count=1,
                    instance_type="local", entry_point="t.py", sagemaker_session=LocalSession())
    est.fit(logs="None")
print("fitted twice")
"""


@pytest.mark.slow
def test_v2_notice_once_and_no_model_trainer_advice(tmp_path: Path) -> None:
    """Two fits in one process print the v2 notice once, no per-class notice, no line about absent config files."""
    (tmp_path / "t.py").write_text("print('trained')\n")
    env = {k: v for k, v in os.environ.items() if k not in ("SAGEMAKER_SUPPRESS_V2_WARNING", "PYTHONWARNINGS")}
    env["SAGEMAKER_DEBUGGER_EXT_HOME"] = str(tmp_path / "home")
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "fitted twice" in out, out
    assert out.count("You are using the SageMaker Python SDK v2") == 1, out
    assert "is part of the SageMaker Python SDK v2" not in out, out
    assert "Not applying SDK defaults" not in out, out


def test_config_lines_only_for_applied_files(caplog: pytest.LogCaptureFixture) -> None:
    """The SDK's line about an absent config file is dropped; the line about an applied one stays."""
    quiet_sdk_notices()
    quiet_sdk_notices()  # idempotent: one filter
    logger = logging.getLogger("sagemaker.config")
    assert len(logger.filters) == 1, logger.filters
    with caplog.at_level(logging.INFO, logger="sagemaker.config"):
        logger.info("Not applying SDK defaults from location: %s", "/etc/xdg/sagemaker/config.yaml")
        logger.info("Fetched defaults config from location: %s", "/home/me/.config/sagemaker/config.yaml")
    assert caplog.messages == ["Fetched defaults config from location: /home/me/.config/sagemaker/config.yaml"]


def test_debugger_session_import_drops_the_config_file_lines() -> None:
    """``from sagemaker_debugger_ext.cloud import DebuggerSession`` (docs/cloud.md's first line) imports
    the SDK through us: no line about absent config files, as for the package's own names."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    env["SAGEMAKER_SUPPRESS_V2_WARNING"] = "1"
    code = "from sagemaker_debugger_ext.cloud import DebuggerSession\nimport sagemaker.debugger\nprint('imported')"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "imported" in out, out
    assert "Not applying SDK defaults" not in out, out
