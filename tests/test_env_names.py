"""The package's environment variables: one prefix, every name defined in ``_container_env.py``."""

from __future__ import annotations

import re
from pathlib import Path

import sagemaker_debugger_ext
from sagemaker_debugger_ext import _container_env

PACKAGE = Path(sagemaker_debugger_ext.__file__).parent
# Our own variables, and smdebug's (kept under smdebug's names for its users).
_NAME = re.compile(r"""["']((?:SAGEMAKER_DEBUGGER_EXT|SMDEBUG)_[A-Z0-9_]+)["']""")
# smdebug's constants module lists smdebug settings we do not read, under smdebug's names.
_SMDEBUG_NAMES_ONLY = {"SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT", "SMDEBUG_TRAINING_END_DELAY_REFRESH"}


def test_every_variable_is_defined_in_container_env() -> None:
    """No module but _container_env.py spells a variable name (one used SMDEBUG_EXT_ as its prefix)."""
    defined = {v for k, v in vars(_container_env).items() if k.isupper() and isinstance(v, str)}
    stray = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name == "_container_env.py":
            continue
        for name in _NAME.findall(path.read_text(encoding="utf-8")):
            if name not in _SMDEBUG_NAMES_ONLY:
                stray.setdefault(name, []).append(str(path.relative_to(PACKAGE)))
    assert stray == {}, "spell these through _container_env.py: " + repr(stray)
    ours = {v for v in defined if v.startswith(("SAGEMAKER_DEBUGGER_EXT", "SMDEBUG"))}
    assert all(v.startswith(("SAGEMAKER_DEBUGGER_EXT_", "SMDEBUG_")) for v in ours)
    assert not any(v.startswith("SMDEBUG_EXT") for v in ours), "one prefix: SAGEMAKER_DEBUGGER_EXT_"
