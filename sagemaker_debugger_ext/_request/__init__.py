"""Private implementation of :mod:`sagemaker_debugger_ext.request`."""
