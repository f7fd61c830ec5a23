"""Which tensors a hook may reduce where they live (PyTorch: torch on the tensor's device;
Keras: TensorFlow ops in the traced step) instead of copying them to the host: those whose
collections save reductions only, all of them computable there."""

from __future__ import annotations

from collections.abc import Sequence

from ._collections import SCALAR_COLLECTIONS, Collection

__all__ = ["DEVICE_OPS", "Ops", "device_plan"]

Ops = tuple[tuple[str, bool], ...]

#: the reductions computed on the device (all of ``ALLOWED_REDUCTIONS + ALLOWED_NORMS``)
DEVICE_OPS = frozenset({"min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2"})


def device_plan(colls: Sequence[Collection]) -> tuple[Ops, bool] | None:
    """``(ops, save shape)`` when the collections ``colls`` ask for reductions only (no raw
    tensor, no scalar collection), all computable on the device; else None (the NumPy path).
    The ops are in :meth:`StepOutput.write_tensor`'s order."""
    ops: list[tuple[str, bool]] = []
    shape = False
    for coll in colls:
        cfg = coll.reduction_config
        if cfg is None or cfg.save_raw_tensor or coll.name in SCALAR_COLLECTIONS:
            return None
        shape = shape or cfg.save_shape
        ops.extend(key for key in cfg.all_reductions if key not in ops)
    if not ops or not all(op in DEVICE_OPS for op, _ in ops):
        return None
    return tuple(ops), shape
