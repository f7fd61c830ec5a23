"""A training script that saves nothing: its rules have nothing to evaluate.

``--seconds S`` keeps it running S seconds (simulated compute: the profiler's system monitor samples it).
"""

import argparse
import time

parser = argparse.ArgumentParser()
parser.add_argument("--seconds", type=float, default=0.0)
args, _ = parser.parse_known_args()
time.sleep(args.seconds)
print("quick training done")
