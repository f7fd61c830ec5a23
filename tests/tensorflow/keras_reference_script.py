"""One small Keras run recorded by a hook, used both for the TF 2.12 + smdebug 1.0.34 reference
(``tests/fixtures/keras_tf212_smdebug.json``) and for this package (tests/tensorflow).

Usage: python keras_reference_script.py smdebug|ours OUT_DIR [RESULT_JSON]
Trains an MLP (fit with validation, 2 epochs of 4 batches), evaluates (2 batches) and predicts
(2 batches), saving every step; writes the names/steps/shapes it reads back to RESULT_JSON.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import tensorflow as tf

impl, out_dir = sys.argv[1], sys.argv[2]
if impl == "smdebug":
    import smdebug.tensorflow as smd
    from smdebug.trials import create_trial
else:
    import sagemaker_debugger_ext.tensorflow as smd
    from sagemaker_debugger_ext.trials import create_trial

keras = tf.keras
rng = np.random.default_rng(0)
x = rng.normal(size=(32, 8)).astype("float32")
y = (x[:, :2] > 0).astype("float32")
tf.random.set_seed(0)
model = keras.Sequential(
    [
        keras.Input(shape=(8,)),
        keras.layers.Dense(4, activation="relu", name="dense"),
        keras.layers.Dense(2, name="dense_1"),
    ]
)
hook = smd.KerasHook(
    out_dir=out_dir,
    save_config=smd.SaveConfig(save_interval=1),
    include_collections=["weights", "biases", "gradients", "losses", "metrics", "optimizer_variables"],
)
opt = hook.wrap_optimizer(keras.optimizers.SGD(learning_rate=0.1))
model.compile(optimizer=opt, loss="mse", metrics=["mae"], run_eagerly=False)
model.fit(x, y, batch_size=8, epochs=2, validation_data=(x[:16], y[:16]), callbacks=[hook], verbose=0)
model.evaluate(x[:16], y[:16], batch_size=8, callbacks=[hook], verbose=0)
model.predict(x[:16], batch_size=8, callbacks=[hook], verbose=0)
hook.close()

trial = create_trial(out_dir)
result = {"collections": {}, "tensors": {}}
for coll in ("weights", "biases", "gradients", "losses", "metrics", "optimizer_variables"):
    result["collections"][coll] = sorted(trial.tensor_names(collection=coll))
for name in sorted(trial.tensor_names()):
    t = trial.tensor(name)
    steps = {}
    for mode_name in ("TRAIN", "EVAL", "PREDICT"):
        mode = getattr(smd.modes, mode_name)
        ms = t.steps(mode=mode)
        if ms:
            steps[mode_name] = [int(s) for s in ms]
    first = t.steps()[0]
    value = np.asarray(t.value(first))
    result["tensors"][name] = {
        "steps": steps,
        "global_steps": [int(s) for s in t.steps()],
        "shape": list(value.shape),
        "dtype": str(value.dtype),
    }
if len(sys.argv) > 3:
    with open(sys.argv[3], "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
else:
    print(json.dumps(result, indent=1, sort_keys=True))
