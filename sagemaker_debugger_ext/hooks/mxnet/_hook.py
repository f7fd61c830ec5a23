"""The MXNet Gluon hook (smdebug.mxnet's ``Hook``).

``register_block(net)`` puts a forward pre-hook on the model: each forward call of the model
closes the previous step and starts the next. Parameters and their gradients are read at the
*next* step's start (or at ``close()``) and saved under the step that computed them, as
smdebug does: a step's ``weight`` is the value after that step's optimizer update, its
``gradient/<param>`` the gradient of that step. Block inputs/outputs (``<block.name>_input_<i>``
/ ``_output_<i>``) need forward hooks on every child block; they are attached when an
included collection asks for more than weights, biases, gradients and losses (smdebug's
rule). A loss block given to ``register_block`` saves ``<loss.name>_output_0`` (``losses``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import mxnet as mx
import numpy as np

from ..._exceptions import HookError, field_error_message
from .. import _current
from .._collections import GRADIENT_PREFIX, PYTORCH_BUILTIN_REGEXES, CollectionKeys
from .._hook import BaseHook

__all__ = ["MXNET_BUILTIN_REGEXES", "Hook"]

_LOG = logging.getLogger("sagemaker_debugger_ext.hooks")
# smdebug's MXNet collections: PyTorch's without the activation ones; Gluon names losses
# ``softmaxcrossentropyloss0_output_0``.
MXNET_BUILTIN_REGEXES: dict[str, list[str]] = {
    **{k: v for k, v in PYTORCH_BUILTIN_REGEXES.items() if not k.endswith(("_input", "_output"))},
    CollectionKeys.LOSSES: [".*loss._(?!input).*output"],
}
# Collections whose tensors the model block's own hooks give (no hook on every child needed).
_TOP_LEVEL_ONLY = frozenset(
    {CollectionKeys.WEIGHTS, CollectionKeys.BIASES, CollectionKeys.GRADIENTS, CollectionKeys.LOSSES}
)


class Hook(BaseHook):
    """Saves a Gluon model's tensors while it trains (same API as ``smdebug.mxnet.Hook``).

    Example::

        import sagemaker_debugger_ext.mxnet as smd
        hook = smd.Hook.create_from_json_file()      # or smd.Hook(out_dir=..., ...)
        hook.register_block(net)
        hook.register_block(loss_fn)                 # saves the loss (collection "losses")

    .. versionadded:: 0.2.0
    """

    GRADIENT_PREFIX: ClassVar[str] = GRADIENT_PREFIX
    INPUT_TENSOR_SUFFIX: ClassVar[str] = "_input_"
    OUTPUT_TENSOR_SUFFIX: ClassVar[str] = "_output_"
    builtin_collections: ClassVar[Mapping[str, list[str]]] = MXNET_BUILTIN_REGEXES
    default_include_collections: ClassVar[tuple[str, ...]] = (CollectionKeys.LOSSES,)

    def _init_adapter(self) -> None:
        self.model: mx.gluon.Block | None = None
        self.last_block: mx.gluon.Block | None = None
        self.registered_blocks: set[mx.gluon.Block] = set()
        self._io_index: dict[str, int] = {}
        _current.set_hook(self)

    # --- registration --------------------------------------------------------------------
    def register_block(self, block: mx.gluon.Block) -> None:
        """Save this block's tensors: a model block's parameters, gradients (and, when an
        included collection needs them, every child block's inputs/outputs); a loss block's
        output. The model's forward call starts each step.

        Raises:
            HookError: ``block`` is not a ``mxnet.gluon.Block``.
        """
        if not isinstance(block, mx.gluon.Block):
            raise HookError(field_error_message("block", "a mxnet.gluon.Block", type(block).__name__))
        if block in self.registered_blocks:
            _LOG.warning("The hook is already registered to block %s", block.name)
            return
        if isinstance(block, mx.gluon.loss.Loss):
            block.register_forward_hook(self.forward_hook)
            self.registered_blocks.add(block)
            return
        self.model = block
        block.register_forward_pre_hook(self.forward_pre_hook)
        if self._is_recursive_needed():
            block.apply(self._recursive_apply)
        else:
            block.register_forward_hook(self.forward_hook)
            self.registered_blocks.add(block)

    register_hook = register_block  # the name smdebug's zero-code-change patches call

    def _recursive_apply(self, block: mx.gluon.Block) -> None:
        if block in self.registered_blocks:
            _LOG.warning("The hook is already registered to block %s", block.name)
            return
        block.register_forward_hook(self.forward_hook)
        self.registered_blocks.add(block)

    def _is_recursive_needed(self) -> bool:
        """Whether an included collection needs inputs/outputs of every child block."""
        included = self.include_collections
        if CollectionKeys.DEFAULT in included and self.collection_manager.get(CollectionKeys.DEFAULT).include_regex:
            return True
        return any(name not in _TOP_LEVEL_ONLY for name in included)

    # --- per-step callbacks (smdebug's extension points) -----------------------------------
    def forward_pre_hook(self, block: mx.gluon.Block, inputs: Any) -> None:
        """Before the model's forward: save the last step's parameters and gradients, end
        that step, start the next."""
        if self._disabled or self._closed:
            return
        self._guarded(self._next_step, block)

    def _next_step(self, block: mx.gluon.Block) -> None:
        if self._clock.open and self._due:
            self._log_params(block)
        self._start_step()
        self._io_index.clear()
        self.last_block = block

    def forward_hook(self, block: mx.gluon.Block, inputs: Any, outputs: Any) -> None:
        """After a registered block's forward: save its inputs and outputs (on saved steps)."""
        if self._disabled or not self._due:
            return
        self._write_inputs(block.name, inputs)
        self._write_outputs(block.name, outputs)

    def _log_params(self, block: mx.gluon.Block) -> None:
        for param in block.collect_params().values():
            self._log_param(param)

    def _log_param(self, param: mx.gluon.Parameter) -> None:
        try:
            ctx = param.list_ctx()[0]
            self._save_for_tensor(param.name, param.data(ctx))
            if param.grad_req != "null":
                self._save_for_tensor(GRADIENT_PREFIX + param.name, param.grad(ctx))
        except RuntimeError as exc:  # e.g. a parameter not initialised yet: smdebug warns too
            _LOG.warning("Could not save parameter %s: %s", param.name, exc)

    def _write_inputs(self, name: str, inputs: Any) -> None:
        """Save the arrays in ``inputs`` as ``<name>_input_<i>`` (numbered on within a step)."""
        self._guarded(self._write_io, name + self.INPUT_TENSOR_SUFFIX, inputs)

    def _write_outputs(self, name: str, outputs: Any) -> None:
        """Save the arrays in ``outputs`` as ``<name>_output_<i>`` (numbered on within a step)."""
        self._guarded(self._write_io, name + self.OUTPUT_TENSOR_SUFFIX, outputs)

    def _write_io(self, key: str, value: Any) -> None:
        idx = self._io_index.get(key, 0)
        for array in _arrays(value):
            self._save_for_tensor(f"{key}{idx}", array)
            idx += 1
        self._io_index[key] = idx

    def _to_numpy(self, value: Any) -> tuple[np.ndarray, str | None]:
        if isinstance(value, mx.nd.NDArray):
            return value.asnumpy(), None
        return super()._to_numpy(value)

    def close(self) -> None:
        """Save the last step's parameters and gradients, write it and finish the run."""
        if not self._closed and not self._disabled and self._clock.open and self._due and self.last_block is not None:
            self._guarded(self._log_params, self.last_block)
        super().close()


def _arrays(value: Any) -> Iterable[Any]:
    if isinstance(value, mx.nd.NDArray):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _arrays(item)
