"""smdebug's ``FileReader`` (``smdebug.core.reader``, re-exported there): the tensors of one event file."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any, Self

import numpy as np

from .._exceptions import ConfigValueError, field_error_message
from ..modes import ModeKeys
from ._decode import decode_tensor_record
from ._tfrecord import FooterCheck, read_records

__all__ = ["FileReader"]


class FileReader:
    """smdebug's ``FileReader`` over :func:`~sagemaker_debugger_ext.format.read_records`.

    Args:
        fname: the event file.
        wtype: only ``"tfevent"``.
    """

    def __init__(self, fname: str | os.PathLike[str], wtype: str = "tfevent") -> None:
        if wtype != "tfevent":
            raise ConfigValueError(field_error_message("wtype", "'tfevent'", wtype), field="wtype", value=wtype)
        self.fname = os.fspath(fname)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def _decoded(self, check: Any) -> Iterator[Any]:
        mode = FooterCheck.NONE if check is False or check == "none" else FooterCheck.ANY
        for record in read_records(self.fname, check=mode):
            yield decode_tensor_record(record.payload)

    def read_tensors(self, check: Any = "minimal") -> Iterator[tuple[str, int, np.ndarray, ModeKeys, int]]:
        """Yield ``(name, step, value, mode, mode_step)`` for each tensor record."""
        for t in self._decoded(check):
            yield t.tag, t.step, t.value, t.mode, t.mode_step

    def read_events(self, check: Any = "minimal", regex_list: list[str] | None = None) -> list[dict[str, Any]]:
        """The records as dicts ``{timestamp, step, name, value}``, optionally only names matching a regex."""
        patterns = [re.compile(r) for r in regex_list or ()]
        return [
            {"timestamp": t.wall_time, "step": t.step, "name": t.tag, "value": t.value}
            for t in self._decoded(check)
            if not patterns or any(p.match(t.tag) for p in patterns)
        ]
