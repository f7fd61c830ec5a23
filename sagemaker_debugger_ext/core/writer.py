"""``smdebug.core.writer.FileWriter``: write one step's tensors as an smdebug event file (see ``format``)."""

from __future__ import annotations

from ..format._file_writer import FileWriter

__all__ = ["FileWriter"]
