"""``DebuggerHookConfig`` and ``TensorBoardOutputConfig``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from ._addresses import check_output_address
from ._checks import (
    check_optional_str,
    check_str,
    check_str_map,
    is_sdk_object,
    type_error,
    value_error,
)
from ._collection import CollectionConfig
from ._hook_params import check_hook_parameters

__all__ = ["DebuggerHookConfig", "TensorBoardOutputConfig"]

_MAX_COLLECTIONS = 20


def _hook_s3(value: Any) -> str | None:
    return check_output_address("DebuggerHookConfig.s3_output_path", value)


def _hook_local(value: Any) -> str | None:
    return check_optional_str("DebuggerHookConfig.container_local_output_path", value, max_len=4096)


def _tb_s3(value: Any) -> str:
    check_str("TensorBoardOutputConfig.s3_output_path", value, max_len=1024)
    return check_output_address("TensorBoardOutputConfig.s3_output_path", value) or ""


def _tb_local(value: Any) -> str | None:
    return check_optional_str("TensorBoardOutputConfig.container_local_output_path", value, max_len=4096)


def _hook_params(value: Any) -> dict[str, str] | None:
    params = check_str_map("DebuggerHookConfig.hook_parameters", value, max_items=20)
    check_hook_parameters("DebuggerHookConfig.hook_parameters", params)
    return params


def _collections(value: Any) -> list[CollectionConfig] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise type_error("DebuggerHookConfig.collection_configs", "a list of CollectionConfig", value)
    items = [CollectionConfig.convert(item, field="DebuggerHookConfig.collection_configs[]") for item in value]
    if len(items) > _MAX_COLLECTIONS:
        raise value_error(
            "DebuggerHookConfig.collection_configs",
            f"at most {_MAX_COLLECTIONS} collections",
            f"{len(items)} collections",
        )
    return items


@attrs.define
class DebuggerHookConfig:
    """Where and what the training-side Debugger hook saves (``DebugHookConfig``).

    Args:
        s3_output_path: Base URI of the tensors; the job name and ``debug-output`` are
            appended by the service. ``None`` means the estimator's ``output_path``.
        container_local_output_path: Path inside the container (``LocalPath``).
        hook_parameters: String hook parameters (``save_interval``, ...), at most 20.
        collection_configs: :class:`CollectionConfig` objects to save, at most 20.

    .. versionadded:: 0.1.0
    """

    s3_output_path: str | None = attrs.field(default=None, converter=_hook_s3)
    container_local_output_path: str | None = attrs.field(default=None, converter=_hook_local)
    hook_parameters: dict[str, str] | None = attrs.field(default=None, converter=_hook_params)
    collection_configs: list[CollectionConfig] | None = attrs.field(default=None, converter=_collections)

    @classmethod
    def convert(cls, value: Any, *, field: str = "debugger_hook_config") -> DebuggerHookConfig:
        """Ours, or a new one from ``sagemaker.debugger.DebuggerHookConfig`` (never modified).

        Raises:
            ConfigTypeError: anything else, naming ``field``.
        """
        if isinstance(value, cls):
            return value
        if is_sdk_object(value, "DebuggerHookConfig"):
            collections = value.collection_configs
            return cls(
                s3_output_path=value.s3_output_path,
                container_local_output_path=value.container_local_output_path,
                hook_parameters=None if value.hook_parameters is None else dict(value.hook_parameters),
                collection_configs=None if collections is None else list(collections),
            )
        raise type_error(field, "a DebuggerHookConfig, True, False or None", value)

    def _to_request_dict(self) -> dict[str, Any]:
        """Return the ``DebugHookConfig`` request fragment as the SDK builds it (a new dict)."""
        request: dict[str, Any] = {"S3OutputPath": self.s3_output_path}
        if self.container_local_output_path is not None:
            request["LocalPath"] = self.container_local_output_path
        if self.hook_parameters is not None:
            request["HookParameters"] = dict(self.hook_parameters)
        if self.collection_configs is not None:
            request["CollectionConfigurations"] = [c._to_request_dict() for c in self.collection_configs]
        return request


@attrs.define
class TensorBoardOutputConfig:
    """Where TensorBoard event files go (``TensorBoardOutputConfig``).

    Args:
        s3_output_path: Base URI (required, as in the SDK).
        container_local_output_path: Path inside the container (``LocalPath``).

    .. versionadded:: 0.1.0
    """

    s3_output_path: str = attrs.field(converter=_tb_s3)
    container_local_output_path: str | None = attrs.field(default=None, converter=_tb_local)

    @classmethod
    def convert(cls, value: Any, *, field: str = "tensorboard_output_config") -> TensorBoardOutputConfig:
        """Ours, or a new one from ``sagemaker.debugger.TensorBoardOutputConfig`` (never modified).

        Raises:
            ConfigTypeError: anything else, naming ``field``.
        """
        if isinstance(value, cls):
            return value
        if is_sdk_object(value, "TensorBoardOutputConfig"):
            return cls(value.s3_output_path, value.container_local_output_path)
        raise type_error(field, "a TensorBoardOutputConfig or None", value)

    def _to_request_dict(self) -> dict[str, Any]:
        """Return the ``TensorBoardOutputConfig`` request fragment (a new dict)."""
        request: dict[str, Any] = {"S3OutputPath": self.s3_output_path}
        if self.container_local_output_path is not None:
            request["LocalPath"] = self.container_local_output_path
        return request
