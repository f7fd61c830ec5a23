"""``python -m sagemaker_debugger_ext.cloud rule-job ...``: a self-hosted rule's Processing job."""

from __future__ import annotations

import sys

from ._rule_job import rule_job_main


def _main() -> int:
    args = sys.argv[1:]
    if not args or args[0] != "rule-job":
        print("usage: python -m sagemaker_debugger_ext.cloud rule-job --help", file=sys.stderr)
        return 2
    return rule_job_main(args[1:])


if __name__ == "__main__":
    sys.exit(_main())
