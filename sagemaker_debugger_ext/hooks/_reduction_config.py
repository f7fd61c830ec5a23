"""What is saved of a tensor: ``ReductionConfig`` and the reductions themselves.

Tokens (docs/hook.md): ``min, max, mean, std, variance, sum, prod``, norms
``l1_norm, l2_norm``, each optionally prefixed by ``abs_``. With reductions the raw tensor
is not saved unless ``save_raw_tensor``. Norms are computed on the flattened tensor (what
the PyTorch hook of smdebug stores: ``torch.norm(p)``), never as matrix norms.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .._exceptions import HookConfigError, field_error_message
from .._reductions import ALLOWED_NORMS, ALLOWED_REDUCTIONS
from .._string_values import BOOL_EXPECTED, is_unset, to_bool

__all__ = [
    "ALLOWED_NORMS",
    "ALLOWED_REDUCTIONS",
    "REDUCTIONS_PREFIX",
    "ReductionConfig",
    "parse_bool",
    "reduction_tensor_name",
    "reduction_tensor_names",
]

REDUCTIONS_PREFIX = "smdebug/reductions/"
_TOKENS = (
    *ALLOWED_REDUCTIONS,
    *(f"{n}_norm" for n in ALLOWED_NORMS),
    *(f"abs_{r}" for r in ALLOWED_REDUCTIONS),
    *(f"abs_{n}_norm" for n in ALLOWED_NORMS),
)
_COLON_INDEX = re.compile(r":\d+")


def parse_bool(field: str, value: Any) -> bool:
    """Parse a boolean given as bool, 0/1 or a string (``"true"``, ``"on"``, ``"False"``...).

    The package's one boolean converter (:func:`~sagemaker_debugger_ext._string_values.to_bool`);
    a blank string means "not set", which is false for every hook flag.

    Raises:
        HookConfigError: naming ``field`` for anything else (``"Flase"``, ``2``, ``None``).
    """
    if isinstance(value, str) and is_unset(value):
        return False
    try:
        return to_bool(value)
    except ValueError:
        raise HookConfigError(field_error_message(field, BOOL_EXPECTED, value), field=field, value=value) from None


def _check_names(value: Iterable[str] | None, allowed: tuple[str, ...], field: str) -> tuple[str, ...]:
    items = tuple(value or ())
    for item in items:
        if item not in allowed:
            raise HookConfigError(
                field_error_message(field, f"a list of {', '.join(allowed)}", list(items)),
                field=field,
                value=list(items),
            )
    return items


def _reductions(value: Iterable[str] | None) -> tuple[str, ...]:
    return _check_names(value, ALLOWED_REDUCTIONS, "reductions")


def _abs_reductions(value: Iterable[str] | None) -> tuple[str, ...]:
    return _check_names(value, ALLOWED_REDUCTIONS, "abs_reductions")


def _norms(value: Iterable[str] | None) -> tuple[str, ...]:
    return _check_names(value, ALLOWED_NORMS, "norms")


def _abs_norms(value: Iterable[str] | None) -> tuple[str, ...]:
    return _check_names(value, ALLOWED_NORMS, "abs_norms")


def _raw_flag(value: Any) -> bool:
    return parse_bool("save_raw_tensor", value)


def _shape_flag(value: Any) -> bool:
    return parse_bool("save_shape", value)


@attrs.frozen
class ReductionConfig:
    """Reductions and norms to save instead of (or besides) the raw tensor (smdebug's class).

    Args:
        reductions: any of ``min, max, mean, std, variance, sum, prod``.
        abs_reductions: the same, applied to ``abs(tensor)``.
        norms: any of ``l1, l2`` (of the flattened tensor).
        abs_norms: the same, of ``abs(tensor)``.
        save_raw_tensor: also save the full tensor.
        save_shape: also record the tensor's shape in the index.

    Raises:
        HookConfigError: an unknown reduction or norm name, or a non-boolean flag.

    .. versionadded:: 0.1.0
    """

    reductions: tuple[str, ...] = attrs.field(default=(), converter=_reductions)
    abs_reductions: tuple[str, ...] = attrs.field(default=(), converter=_abs_reductions)
    norms: tuple[str, ...] = attrs.field(default=(), converter=_norms)
    abs_norms: tuple[str, ...] = attrs.field(default=(), converter=_abs_norms)
    save_raw_tensor: bool = attrs.field(default=False, converter=_raw_flag)
    save_shape: bool = attrs.field(default=False, converter=_shape_flag)

    @functools.cached_property
    def all_reductions(self) -> tuple[tuple[str, bool], ...]:
        """``(op, abs)`` pairs in smdebug's write order: reductions, norms, abs ones."""
        return (
            *((r, False) for r in (*self.reductions, *self.norms)),
            *((r, True) for r in (*self.abs_reductions, *self.abs_norms)),
        )

    @classmethod
    def from_dict(cls, params: Mapping[str, Any], *, where: str = "HookParameters") -> ReductionConfig:
        """Parse ``reductions`` (comma list), ``save_raw_tensor`` and ``save_shape`` of one dict.

        Raises:
            HookConfigError: naming ``<where>['reductions']`` and the allowed tokens.
        """
        raw = params.get("reductions", "")
        tokens = raw.split(",") if isinstance(raw, str) else list(raw or ())
        reductions: list[str] = []
        abs_reductions: list[str] = []
        norms: list[str] = []
        abs_norms: list[str] = []
        for token in (t.strip() for t in tokens):
            if not token:
                continue
            if token not in _TOKENS:
                field = f"{where}['reductions']"
                raise HookConfigError(
                    field_error_message(field, f"a comma-separated list of {', '.join(_TOKENS)}", raw),
                    field=field,
                    value=raw,
                )
            is_abs = token.startswith("abs_")
            op = token[4:] if is_abs else token
            if op.endswith("_norm"):
                (abs_norms if is_abs else norms).append(op[: -len("_norm")])
            else:
                (abs_reductions if is_abs else reductions).append(op)
        return cls(
            reductions=reductions,
            abs_reductions=abs_reductions,
            norms=norms,
            abs_norms=abs_norms,
            save_raw_tensor=parse_bool(f"{where}['save_raw_tensor']", params.get("save_raw_tensor", False)),
            save_shape=parse_bool(f"{where}['save_shape']", params.get("save_shape", False)),
        )

    @classmethod
    def from_json(cls, text: str) -> ReductionConfig:
        """Inverse of :meth:`to_json` (smdebug's ``ReductionConfig.from_json``)."""
        return cls.from_dict(json.loads(text))

    def to_json(self) -> str:
        """:meth:`to_json_dict` as a JSON string."""
        return json.dumps(self.to_json_dict())

    def to_json_dict(self) -> dict[str, Any]:
        """The dict smdebug writes in the collections JSON."""
        tokens = [
            *self.reductions,
            *(f"{n}_norm" for n in self.norms),
            *(f"abs_{r}" for r in self.abs_reductions),
            *(f"abs_{n}_norm" for n in self.abs_norms),
        ]
        return {"save_raw_tensor": self.save_raw_tensor, "reductions": ",".join(tokens), "save_shape": self.save_shape}


def reduction_tensor_name(tensor_name: str, op: str, is_abs: bool, keep_colon_index: bool = False) -> str:
    """``smdebug/reductions/[abs_]<op>/<name>`` with ``:<digits>`` removed, or kept with
    ``keep_colon_index`` (smdebug's naming: TensorFlow hooks keep ``dense/kernel:0``)."""
    name = f"{op}/{tensor_name}" if keep_colon_index else _COLON_INDEX.sub("", f"{op}/{tensor_name}")
    return REDUCTIONS_PREFIX + ("abs_" if is_abs else "") + name


@functools.lru_cache(maxsize=1 << 16)
def reduction_tensor_names(
    tensor_name: str, ops: tuple[tuple[str, bool], ...], keep_colon_index: bool = False
) -> tuple[str, ...]:
    """:func:`reduction_tensor_name` of each ``(op, is_abs)`` (cached: a hook saves the same
    reductions of the same tensors at every saved step)."""
    return tuple(reduction_tensor_name(tensor_name, op, is_abs, keep_colon_index) for op, is_abs in ops)
