"""A KerasHook that ``fit`` prepared is closed at interpreter exit, as smdebug closes every hook."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sagemaker_debugger_ext.trials import create_trial

SCRIPT = """
import sys
import keras
import numpy as np
import sagemaker_debugger_ext.tensorflow as smd

hook = smd.KerasHook(out_dir=sys.argv[1], save_config=smd.SaveConfig(save_interval=1),
                     include_collections=["losses", "weights"])
keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dense(1)])
model.compile("sgd", "mse")
x = np.random.default_rng(0).random((32, 4)).astype("float32")
model.fit(x, x[:, :1], epochs=2, batch_size=8, callbacks=[hook], verbose=0)
print("fit returned; exiting without hook.close()", flush=True)
"""


def test_a_hook_prepared_by_fit_is_closed_at_exit(tf, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "fit returned" in proc.stdout
    # the end marker is written only by close(): before the fix a fit-prepared hook never closed
    assert (out / "training_job_end.ts").is_file(), sorted(p.name for p in out.iterdir())
    trial = create_trial(str(out))
    assert trial.loaded_all_steps
    assert trial.steps() == list(range(8))  # 2 epochs x 4 batches, every step saved
    assert trial.tensor_names(collection="losses")
