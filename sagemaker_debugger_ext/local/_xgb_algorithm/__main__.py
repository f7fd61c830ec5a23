"""``python -m sagemaker_debugger_ext.local._xgb_algorithm --root <host /opt/ml> --version <v>``."""

from __future__ import annotations

import sys

from ._train import main

sys.exit(main())
