"""``python -m sagemaker_debugger_ext.profiler monitor ...``: the system monitor process."""

from __future__ import annotations

import sys

from ._monitor import monitor_main


def main(argv: list[str]) -> int:
    """Dispatch the subcommand (only ``monitor`` exists)."""
    if not argv or argv[0] != "monitor":
        print(
            "usage: python -m sagemaker_debugger_ext.profiler monitor --output-dir DIR "
            "[--interval-ms N] [--host algo-1] [--host-index N] [--config-file PATH]",
            file=sys.stderr,
        )
        return 2
    return monitor_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
