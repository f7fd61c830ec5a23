"""Local-mode test stand-in: 'trains' (short sleeps) until --done-file exists or --max-steps ran."""

import argparse
import os
import time
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--done-file", required=True)
parser.add_argument("--max-steps", type=int, default=2000)
args, _ = parser.parse_known_args()
done = Path(args.done_file)
step = 0
while step < args.max_steps and not done.exists():
    step += 1
    time.sleep(0.02)
Path(os.environ["SM_MODEL_DIR"], "model.txt").write_text(str(step))
print(f"done after {step} steps", flush=True)
