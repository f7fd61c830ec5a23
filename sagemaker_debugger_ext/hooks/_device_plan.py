"""Which tensors a hook may reduce where they live (PyTorch: torch on the tensor's device;
Keras: TensorFlow ops in the traced step) instead of copying them to the host: those whose
collections save reductions only, all of them computable there."""

from __future__ import annotations

from collections.abc import Sequence

from ._collections import SCALAR_COLLECTIONS, Collection

__all__ = ["DEVICE_OPS", "Ops", "derivation", "device_plan"]

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


def derivation(op: str, is_abs: bool) -> tuple[str, str]:
    """How reduction ``op`` (of the absolute values when ``is_abs``) follows from one base
    quantity a framework computes (``min``, ``max``, ``sum``, ``prod``, ``variance``, ``l2``,
    ``abs_``-prefixed for absolute values): ``(how, quantity)``, ``how`` being ``"mean"``
    (the quantity over the tensor's size), ``"sqrt"`` (its square root) or ``"value"``."""
    prefix = "abs_" if is_abs else ""
    if op == "mean":
        return "mean", prefix + "sum"
    if op == "std":
        return "sqrt", prefix + "variance"
    if op in ("l1", "l2"):
        return "value", "abs_sum" if op == "l1" else "l2"
    return "value", prefix + op  # min, max, sum, prod, variance
