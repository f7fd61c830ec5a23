"""Tiny training stand-in for local-mode tests: writes a 'loss' tensor per step (no torch).

Flags: --steps N, --nan-step K (loss NaN at K), --fail-at K (raise after step K),
--step-seconds S (simulated compute per step), --marker PATH (touch when started).
"""

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from sagemaker_debugger_ext.format import StepWriter, write_collections_file
from sagemaker_debugger_ext.modes import ModeKeys

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=3)
parser.add_argument("--nan-step", type=int, default=-1)
parser.add_argument("--fail-at", type=int, default=-1)
parser.add_argument("--step-seconds", type=float, default=0.0)
parser.add_argument("--marker", default="")
parser.add_argument("--tensor-kb", type=int, default=0, help="also write a tensor of this many KiB per step")
parser.add_argument("--expect-channel-file", default="", help="CHANNEL/FILE that must exist in SM_CHANNEL_<CHANNEL>")
args, unknown = parser.parse_known_args()

if args.expect_channel_file:
    channel, _, fname = args.expect_channel_file.partition("/")
    data = Path(os.environ[f"SM_CHANNEL_{channel.upper()}"], fname).read_text()
    print(f"channel {channel} file {fname}: {data!r}", flush=True)
if args.marker:
    Path(args.marker).write_text(str(os.getpid()))
root = None
if os.environ.get("SMDEBUG_CONFIG_FILE_PATH"):
    root = json.loads(Path(os.environ["SMDEBUG_CONFIG_FILE_PATH"]).read_text())["LocalPath"]
rank = int(os.environ.get("RANK", "0"))
world = int(os.environ.get("WORLD_SIZE", "1"))
worker = f"worker_{rank}"
print(f"start {worker} of {world} hps={os.environ.get('SM_HPS')} args={unknown}", flush=True)
if root:
    write_collections_file(
        root,
        worker,
        {
            "losses": {
                "name": "losses",
                "include_regex": ["loss"],
                "tensor_names": ["loss"],
                "reduction_config": None,
                "save_config": None,
                "save_histogram": False,
            }
        },
        world,
    )
for step in range(args.steps):
    value = float("nan") if step == args.nan_step else 1.0 / (step + 1) + rank
    if root:
        with StepWriter(root, global_step=step, worker=worker, mode=ModeKeys.TRAIN, mode_step=step) as w:
            w.write_tensor("loss", np.array([value], dtype=np.float32))
            if args.tensor_kb:
                w.write_tensor("big", np.full(args.tensor_kb * 256, step, dtype=np.float32))
    print(f"step {step} loss {value}", flush=True)
    if step == args.fail_at:
        raise ValueError(f"boom at step {step}")
    if args.step_seconds:
        time.sleep(args.step_seconds)
Path(os.environ["SM_MODEL_DIR"], "model.txt").write_text("trained")
print("done", flush=True)
