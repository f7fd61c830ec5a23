"""Trainer integrations: the Debugger hook inside Hugging Face ``transformers.Trainer`` and
PyTorch Lightning, as a callback.

- :mod:`sagemaker_debugger_ext.integrations.transformers`: ``DebuggerCallback`` (a
  ``transformers.TrainerCallback``) and ``add_debugger(trainer)``.
- :mod:`sagemaker_debugger_ext.integrations.lightning`: ``DebuggerCallback`` (a Lightning
  ``Callback``).

Importing this package imports neither framework; each submodule imports its own. In local
mode the callback is added to a job's ``Trainer`` without a change to the script (see
docs/hook.md, "Trainer integrations").
"""

from __future__ import annotations

from typing import Any

__all__ = ["TrainerHook"]


def __getattr__(name: str) -> Any:
    if name == "TrainerHook":  # imported on first use: it imports torch
        from ._hook import TrainerHook

        return TrainerHook
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
