"""PyTorch values as the step writer takes them: numpy views, and the tensors inside nested
module inputs/outputs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import torch

__all__ = ["NUMPY_OK", "PLAIN_TENSORS", "iter_tensors", "tensor_to_numpy"]


def tensor_to_numpy(value: torch.Tensor) -> tuple[np.ndarray, str | None]:
    """A CPU numpy view (no copy for CPU tensors: the step writer copies what it writes);
    bfloat16 as raw uint16 bits with dtype ``"bfloat16"``."""
    t = value.detach()
    if t.dtype in NUMPY_OK and t.is_cpu:  # the usual case first (per saved tensor)
        return t.numpy(), None
    if t.dtype == torch.bfloat16:
        return t.to("cpu").contiguous().view(torch.int16).numpy().view(np.uint16), "bfloat16"
    if t.dtype not in NUMPY_OK:
        t = t.float()
    return (t.numpy() if t.is_cpu else t.cpu().numpy()), None


#: tensor classes that are never subclasses (a DTensor shard, a tensor wrapper): fast paths
#: test ``value.__class__ in PLAIN_TENSORS`` instead of ``isinstance`` and a shard check
PLAIN_TENSORS = frozenset({torch.Tensor, torch.nn.Parameter})

#: the dtypes whose CPU tensors ``.numpy()`` views as they are
NUMPY_OK = {
    torch.float16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32, torch.int64,
    torch.uint8, torch.bool, torch.complex64, torch.complex128,
}  # fmt: skip


def iter_tensors(value: Any) -> Iterable[torch.Tensor]:
    """The tensors in ``value``: a tensor, or (nested) lists and tuples of them; anything else is skipped."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from iter_tensors(item)
