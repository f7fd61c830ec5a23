"""``CollectionConfig``: one named tensor collection and its save parameters."""

from __future__ import annotations

from typing import Any

import attrs

from ._checks import check_str, check_str_map, is_sdk_object, type_error
from ._hook_params import check_collection_parameters

__all__ = ["CollectionConfig"]


def _name(value: Any) -> str:
    return check_str("CollectionConfig.name", value, allow_empty=False, max_len=256)


def _params(value: Any) -> dict[str, str] | None:
    return check_str_map("CollectionConfig.parameters", value, max_items=100)


@attrs.define(eq=False)
class CollectionConfig:
    """A tensor collection to save, as in ``sagemaker.debugger.CollectionConfig``.

    Args:
        name: The collection name, e.g. ``"weights"`` or ``"gradients"``.
        parameters: String parameters of the collection (``save_interval``,
            ``include_regex``, ``reductions``, ...). ``None`` (the default) omits
            ``CollectionParameters`` from the request; ``{}`` sends an empty map.

    Equality and hashing follow the SDK: ``name`` and ``parameters`` are compared, and
    ``CollectionConfig("a")`` differs from ``CollectionConfig("a", {})``.

    .. versionadded:: 0.1.0
    """

    name: str = attrs.field(converter=_name)
    parameters: dict[str, str] | None = attrs.field(default=None, converter=_params)

    @classmethod
    def convert(cls, value: Any, *, field: str) -> CollectionConfig:
        """Ours, or a new one from ``sagemaker.debugger.CollectionConfig`` (never modified).

        Raises:
            ConfigTypeError: anything else, naming ``field``.
        """
        if isinstance(value, cls):
            return value
        if is_sdk_object(value, "CollectionConfig"):
            return cls(value.name, None if value.parameters is None else dict(value.parameters))
        raise type_error(field, "a CollectionConfig", value)

    def __attrs_post_init__(self) -> None:
        check_collection_parameters(f"CollectionConfig({self.name!r}).parameters", self.name, self.parameters)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CollectionConfig) and not is_sdk_object(other, "CollectionConfig"):
            return NotImplemented
        return bool(self.name == getattr(other, "name", None) and self.parameters == getattr(other, "parameters", None))

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted((self.parameters or {}).items()))))

    def _to_request_dict(self) -> dict[str, Any]:
        """Return the ``CollectionConfiguration`` fragment of the request (a new dict)."""
        request: dict[str, Any] = {"CollectionName": self.name}
        if self.parameters is not None:
            request["CollectionParameters"] = dict(self.parameters)
        return request
