"""Run a training script with the trainer integrations installed (local mode's entry point
for Python scripts of jobs with a Debugger config).

``python -m sagemaker_debugger_ext.integrations._launch script.py [args...]`` runs
``script.py`` as ``__main__`` with ``sys.argv`` and ``sys.path[0]`` as ``python script.py``
would set them.
"""

from __future__ import annotations

import os
import runpy
import sys

from ._autopatch import enabled, install


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit("usage: python -m sagemaker_debugger_ext.integrations._launch SCRIPT [ARGS...]")
    script = argv[0]
    if enabled(os.environ):
        install()
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
