"""Running the real smdebug 1.0.34 (the ``smdebug_python`` fixture's venv) from a test: reading, or the
same training script against smdebug and against ours."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

# The head of a script that runs unchanged against either library.
IMPORTS = {
    "smdebug": "import smdebug.pytorch as smd\nfrom smdebug.trials import create_trial\n",
    "ours": "import sagemaker_debugger_ext.pytorch as smd\nfrom sagemaker_debugger_ext.trials import create_trial\n",
}


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


def run_as(which: str, python: Path, script: Path, out: Path) -> None:
    """Run ``python script out`` in ``out``'s parent folder as a plain training process (no SageMaker or
    smdebug variables), with this checkout on the path for ``which`` "ours" only; a failed run fails
    the test with the end of its stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMDEBUG", "SMPROFILER", "SM_"))}
    env["PYTHONPATH"] = str(REPO) if which == "ours" else ""
    proc = subprocess.run([str(python), str(script), str(out)], capture_output=True, text=True, timeout=900,
                          env=env, cwd=out.parent, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
