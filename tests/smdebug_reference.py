"""Reading with the real smdebug 1.0.34 (the ``smdebug_python`` fixture's venv) from a test."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any


def smdebug_json(python: Path, code: str, *args: str, timeout: float = 120) -> Any:
    """Run ``python -c code args...`` and return the JSON of its last stdout line (smdebug logs
    lines before it); a failed run fails the test with the end of its stderr."""
    proc = subprocess.run(
        [str(python), "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
