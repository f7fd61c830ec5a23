"""Runs one Lambda-style handler call: ``python _handler_host.py FILE FUNC EVENT TIMEOUT``.

Run as a script, it imports only the standard library (the package is not imported).

The handler file is loaded as a module (as Lambda loads ``handler.py``), then
``FUNC(event, context)`` is called with a Lambda-like context. Logging goes to this
process's output (the job's ``logs/handlers.log``) at INFO, so ``logging.info`` in a handler
is visible locally. The exit code is 0 when the handler returned, 1 when it raised or could
not be loaded.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import sys
import time
import traceback
from pathlib import Path
from typing import Any

__all__ = ["LambdaContext", "main"]


class LambdaContext:
    """The attributes and method of AWS Lambda's context object that handlers use."""

    def __init__(self, function_name: str, request_id: str, timeout_s: float, region: str) -> None:
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.invoked_function_arn = f"arn:aws:lambda:{region}:000000000000:function:{function_name}"
        self.memory_limit_in_mb = 128
        self.aws_request_id = request_id
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = "local"
        self._deadline = time.monotonic() + timeout_s

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds left before the call is killed."""
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def main(argv: list[str] | None = None) -> int:
    """Load the handler, call it once with the event, report the outcome."""
    file_name, func_name, event_path, timeout = (sys.argv[1:] if argv is None else argv)[:4]
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="[%(levelname)s] %(name)s: %(message)s")
    label = f"{Path(file_name).name}:{func_name}"
    try:
        event: dict[str, Any] = json.loads(Path(event_path).read_text(encoding="utf-8"))
        spec = importlib.util.spec_from_file_location(f"_sdx_handler_{Path(file_name).stem}", file_name)
        if spec is None or spec.loader is None:
            print(f"[{label}] cannot load {file_name} as a Python module", flush=True)
            return 1
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        func = getattr(module, func_name, None)
        if not callable(func):
            print(f"[{label}] {file_name} defines no function {func_name!r}", flush=True)
            return 1
        context = LambdaContext(func_name, str(event.get("id", "")), float(timeout), str(event.get("region", "")))
        result = func(event, context)
    except BaseException:  # noqa: BLE001 - the handler process's boundary: report, never propagate
        print(f"[{label}] raised:\n{traceback.format_exc()}", flush=True)
        return 1
    print(f"[{label}] returned {json.dumps(result, default=str)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
