"""MXNet Gluon support (imports ``mxnet``); the public module is :mod:`sagemaker_debugger_ext.mxnet`."""
