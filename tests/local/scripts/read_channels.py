"""Training stand-in that prints every input channel's files and contents (no Debugger)."""

import json
import os
from pathlib import Path

for name in json.loads(os.environ["SM_CHANNELS"]):
    root = Path(os.environ[f"SM_CHANNEL_{name.upper()}"])
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
    for path in files:
        print(f"channel {name} {path.name}={path.read_text().strip()!r}", flush=True)
