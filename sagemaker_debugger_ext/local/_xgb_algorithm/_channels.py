"""Channels of the SageMaker XGBoost algorithm: names and content types, checked up front.

As the container: ``train`` is required, ``validation`` optional (and ``code``, unused
here); the content type of ``train`` (default ``text/libsvm``) is the format of both data
channels. Accepted: ``csv``/``text/csv`` (optional ``label_size=1``), ``libsvm``/
``text/libsvm``/``text/x-libsvm``, ``parquet``/``application/x-parquet`` (needs
``pyarrow``). ``recordio-protobuf`` is not read by local mode.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from typing import Any

from ..._exceptions import LocalJobInputError, field_error_message

__all__ = ["CSV", "LIBSVM", "PARQUET", "data_format", "validate_channels"]

CSV, LIBSVM, PARQUET = "csv", "libsvm", "parquet"
_FORMATS = {
    "csv": CSV, "text/csv": CSV,
    "libsvm": LIBSVM, "text/libsvm": LIBSVM, "text/x-libsvm": LIBSVM,
    "parquet": PARQUET, "application/x-parquet": PARQUET,
}  # fmt: skip
_RECORDIO = ("recordio-protobuf", "application/x-recordio-protobuf")
DEFAULT_CONTENT_TYPE = "text/libsvm"
CHANNELS = ("train", "validation", "code")


def data_format(content_type: str | None, field: str = "ContentType") -> str:
    """``csv``, ``libsvm`` or ``parquet`` for a channel's content type (default libsvm).

    Raises:
        LocalJobInputError: a content type the container does not accept (or local mode
            cannot read), naming ``field``.
    """
    raw = content_type or DEFAULT_CONTENT_TYPE
    base, *params = [part.strip() for part in raw.lower().split(";")]
    fmt = _FORMATS.get(base)
    if fmt is None:
        allowed = f"one of {sorted(_FORMATS)}"
        if base in _RECORDIO:
            allowed += " (recordio-protobuf is not read by local mode)"
        raise LocalJobInputError(field_error_message(field, allowed, content_type))
    options = dict(p.partition("=")[::2] for p in params if p)
    if fmt == CSV and options.get("label_size", "1").strip() != "1":
        raise LocalJobInputError(field_error_message(field, "a csv content type with label_size=1", content_type))
    return fmt


def validate_channels(channels: Sequence[Mapping[str, Any]]) -> str:
    """Check the request's ``InputDataConfig`` for the algorithm; returns the data format.

    Raises:
        LocalJobInputError: an unknown or missing channel, an unaccepted content type,
            parquet without ``pyarrow``, or a non-File input mode.
    """
    names = []
    for i, item in enumerate(channels):
        name = item.get("ChannelName")
        if name not in CHANNELS:
            msg = field_error_message(f"InputDataConfig[{i}].ChannelName", f"one of {list(CHANNELS)} for the "
                                      "SageMaker XGBoost algorithm", name)  # fmt: skip
            raise LocalJobInputError(msg)
        mode = item.get("InputMode") or "File"
        if mode != "File":
            msg = field_error_message(f"InputDataConfig[{i}].InputMode", "'File' in local mode", mode)
            raise LocalJobInputError(msg)
        if name != "code":
            data_format(item.get("ContentType"), f"InputDataConfig[{i}].ContentType")
        names.append(name)
    if "train" not in names:
        msg = field_error_message("InputDataConfig", "a 'train' channel for the SageMaker XGBoost algorithm", names)
        raise LocalJobInputError(msg)
    train = next(item for item in channels if item.get("ChannelName") == "train")
    fmt = data_format(train.get("ContentType"), "InputDataConfig[train].ContentType")
    if fmt == PARQUET and importlib.util.find_spec("pyarrow") is None:
        msg = field_error_message("InputDataConfig[train].ContentType", "csv or libsvm unless pyarrow is installed "
                                  "(pip install pyarrow)", train.get("ContentType"))  # fmt: skip
        raise LocalJobInputError(msg)
    return fmt
