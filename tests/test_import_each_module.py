"""Every module imports on its own, first: an import cycle hidden by the usual import order fails here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import sagemaker_debugger_ext

PACKAGE = Path(sagemaker_debugger_ext.__file__).parent

_SCRIPT = r"""
import importlib, json, sys, warnings
warnings.simplefilter("ignore")
failures = {}
meta_path = list(sys.meta_path)
for name in json.loads(sys.argv[1]):
    sys.meta_path[:] = meta_path  # the package's import hooks (SDK registration) are installed per import
    for loaded in [m for m in sys.modules if m == "sagemaker_debugger_ext" or m.startswith("sagemaker_debugger_ext.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:  # an optional dependency that is not installed
        if exc.name and exc.name.split(".")[0] == "sagemaker_debugger_ext":
            failures[name] = f"{type(exc).__name__}: {exc}"
    except ImportError as exc:
        if type(exc).__name__ != "SdkVersionError":  # a part built on the SDK major not installed here
            failures[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(failures))
"""


def _modules() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


def test_each_module_imports_first() -> None:
    """Importing any module of the package in a fresh state succeeds (no partially initialized module)."""
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, json.dumps(_modules())], capture_output=True, text=True, timeout=600, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {}
