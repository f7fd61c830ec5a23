"""One MXNet Gluon training scenario, written with ``smdebug.mxnet`` or this package's
``mxnet`` module (the same code: only the import differs).

usage: python gluon_scenarios.py {smdebug|ours} SCENARIO OUT_DIR
"""

import importlib
import sys

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon

lib, scenario, out_dir = sys.argv[1:4]
smd = importlib.import_module("smdebug.mxnet" if lib == "smdebug" else "sagemaker_debugger_ext.mxnet")

mx.random.seed(0)
np.random.seed(0)
net = gluon.nn.HybridSequential()
net.add(gluon.nn.Dense(8, activation="relu", in_units=4), gluon.nn.Dense(3, in_units=8))
net.initialize(mx.init.Xavier())
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
x = mx.nd.array(np.random.RandomState(1).randn(16, 4))
y = mx.nd.array(np.arange(16) % 3)

kwargs = {
    "default": {"save_config": smd.SaveConfig(save_interval=1)},
    "wbg": {
        "save_config": smd.SaveConfig(save_interval=2),
        "include_collections": ["weights", "biases", "gradients", "losses"],
    },
    "save_all": {"save_config": smd.SaveConfig(save_steps=[0, 3]), "save_all": True},
    "regex": {"save_config": smd.SaveConfig(save_interval=1), "include_regex": [".*dense1.*output"]},
    "modes": {
        "save_config": {
            smd.modes.TRAIN: smd.SaveConfigMode(save_interval=2),
            smd.modes.EVAL: smd.SaveConfigMode(save_interval=1),
        },
        "include_collections": ["weights", "losses"],
    },
    "reductions": {
        "save_config": smd.SaveConfig(save_interval=1),
        "include_collections": ["weights", "gradients"],
        "reduction_config": smd.ReductionConfig(reductions=["max", "mean"], norms=["l2"]),
    },
    "custom": {"save_config": smd.SaveConfig(save_interval=1), "include_collections": ["relu_acts", "losses"]},
}[scenario]
hook = smd.Hook(out_dir=out_dir, **kwargs)
if scenario == "custom":
    hook.get_collection("relu_acts").add_block_tensors(net[0], inputs=True, outputs=True)
hook.register_block(net)
hook.register_block(loss_fn)

if scenario == "modes":
    hook.set_mode(smd.modes.TRAIN)
for _ in range(6):
    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    trainer.step(x.shape[0])
if scenario == "modes":
    hook.set_mode(smd.modes.EVAL)
    for _ in range(2):
        loss_fn(net(x), y)
hook.save_scalar("my_scalar", 42.0)
hook._cleanup()
