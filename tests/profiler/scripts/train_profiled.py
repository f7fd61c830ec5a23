"""A small job for the profiler end-to-end test: the generic hook times the steps; a few are slow."""

import time

from sagemaker_debugger_ext.hooks import Hook, ModeKeys

hook = Hook.create_from_json_file()
hook.set_mode(ModeKeys.TRAIN)
for step in range(60):
    hook.advance_step()
    hook.save_scalar("loss", 1.0 / (step + 1))
    time.sleep(0.5 if step % 20 == 19 else 0.02)  # rare slow steps: outliers
hook.close()
print("done", flush=True)
