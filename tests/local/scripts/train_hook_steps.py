"""Local-mode stand-in that saves through a real hook (the generic one: no torch).

Flags: --steps N, --tensor-kb K (a tensor "big" of K KiB per step).
"""

import argparse

import numpy as np

from sagemaker_debugger_ext.hooks import Hook, SaveConfig

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=3)
parser.add_argument("--tensor-kb", type=int, default=16)
args, _ = parser.parse_known_args()

hook = Hook.create_from_json_file()  # LocalPath and collections from SageMaker's debughookconfig.json
hook.save_config = SaveConfig(save_interval=1)
hook.get_collection("default").include("^big$")
hook.include_collections.append("default")
for step in range(args.steps):
    hook.advance_step()
    hook.record_tensor_value("big", np.full(args.tensor_kb * 256, step, dtype=np.float32))
hook.close()
