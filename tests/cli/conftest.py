"""Fixtures for the console-script tests: run ``sagemaker-debugger-ext`` as a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

CONSOLE_SCRIPT = Path(sys.executable).parent / "sagemaker-debugger-ext"


def run_cli(
    *args: str, cwd: Path | None = None, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed console script with ``args``; capture text output."""
    full_env = {**os.environ, "COLUMNS": "200", "PYTHONWARNINGS": "ignore", **(env or {})}
    return subprocess.run(
        [str(CONSOLE_SCRIPT), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env=full_env,
        check=False,
    )


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    """The command failed with exit code 2 and one clear line on stderr naming ``needles``."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


@pytest.fixture(scope="session")
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Runner of the console script (skips when it is not installed in this interpreter's venv)."""
    if not CONSOLE_SCRIPT.exists():
        pytest.skip(f"console script not installed at {CONSOLE_SCRIPT}; run `make venv`")
    return run_cli


@pytest.fixture(scope="session")
def expect_error() -> Callable[..., None]:
    """Assertion: exit code 2, one stderr line without traceback, containing the given strings."""
    return assert_one_line_error


@pytest.fixture(scope="session")
def expect_traceback() -> Callable[[subprocess.CompletedProcess[str]], None]:
    """Assertion for ``--debug`` runs: the command failed and stderr shows a traceback."""

    def check(proc: subprocess.CompletedProcess[str]) -> None:
        assert proc.returncode != 0, proc.stdout
        assert "Traceback (most recent call last)" in proc.stderr, proc.stderr

    return check
