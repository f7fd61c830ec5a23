"""tests/train/sdk3 needs SDK v3: collected only in a venv holding it (``.venv-sdk3``, ``make sdk3-venv``).

The v2 suite runs them there through ``test_sdk3_venv.py`` (a subprocess, as the smdebug oracle
tests use ``.venv-smdebug``).
"""

from __future__ import annotations

from sagemaker_debugger_ext._sdk_major import installed_sdk_major

# under SDK v3 (in .venv-sdk3), test_sdk3_venv.py would start itself again
collect_ignore = ["test_sdk3_venv.py"] if installed_sdk_major() == 3 else ["sdk3"]
