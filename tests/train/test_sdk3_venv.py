"""The SDK v3 tests, run from the v2 suite in .venv-sdk3 (a subprocess, as the smdebug oracle tests
use .venv-smdebug): the SDK-free core, the ModelTrainer payload tests against the v2 recording, a
ModelTrainer job through ``serve`` and one with the self-hosted Debugger backend (tests/train/sdk3)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# SDK-free tests that must pass beside SDK v3 too (configs, request building, hook, trials, a rule module)
SDK_FREE = [
    "tests/test_sdk_majors.py",
    "tests/request",
    "tests/config/test_config_bad_inputs.py",
    "tests/hooks/test_hooks_generic.py",
    "tests/hooks/test_hooks_save_config.py",
    "tests/trials/test_trials_fixture.py",
    "tests/trials/test_trials_s3.py",
    "tests/rules/test_rules_builtin_tensors.py",
    # TensorBoard's own reader is not in .venv-sdk3 (it runs in .venv)
    "--deselect=tests/hooks/test_hooks_generic.py::test_tensorboard_export_read_by_event_accumulator",
]


def test_sdk3_suite_passes_in_the_sdk3_venv(sdk3_python: Path) -> None:
    """Every test of the SDK v3 subset passes under sagemaker 3.x (none skipped for a missing SDK)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    argv = [str(sdk3_python), "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs",
            "tests/train/sdk3", *SDK_FREE]  # fmt: skip
    out = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200, check=False)
    tail = (out.stdout + out.stderr)[-6000:]
    assert out.returncode == 0, tail
    assert " passed" in tail and " failed" not in tail
    assert "test_sdk3_payload.py" not in tail  # none of the v3 tests skipped (skips are listed by -rs)
    assert "test_sdk3_local_job.py" not in tail and "test_sdk3_install.py" not in tail
    assert "test_sdk3_self_hosted.py" not in tail
