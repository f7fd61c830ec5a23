"""``python -m sagemaker_debugger_ext.cli``."""

import sys

from . import main

sys.exit(main())
