"""``smdebug.core.reader.FileReader``: read the tensors of one smdebug event file (see ``format``)."""

from __future__ import annotations

from ..format._file_reader import FileReader

__all__ = ["FileReader"]
