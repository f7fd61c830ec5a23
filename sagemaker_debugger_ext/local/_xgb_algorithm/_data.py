"""Reading a data channel into an ``xgboost.DMatrix`` as the XGBoost algorithm container does.

A channel is a file or a folder (searched recursively; names starting with ``.`` or ``_``
are skipped). CSV: no header, the label in the first column (and the instance weight in the
second with ``csv_weights=1``), the delimiter sniffed from the first line, empty fields
missing. libsvm: ``<label>[:<weight>] <index>:<value> ...``, indices used as 0-based columns
(as xgboost's own reader does). parquet: the first column is the label.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import scipy.sparse
import xgboost as xgb

from ..._exceptions import LocalJobInputError
from ._channels import CSV, LIBSVM

__all__ = ["data_files", "load_dmatrix"]


def data_files(path: Path) -> list[Path]:
    """The data files of a channel, sorted."""
    if path.is_file():
        return [path]
    found = [p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))]
    return sorted(found)


def _bad_line(fmt: str, path: Path, line_no: int, line: str, why: str) -> LocalJobInputError:
    snippet = line.strip()[:50]
    return LocalJobInputError(f"line {line_no} {snippet!r} of {str(path)!r} is not {fmt}: {why}")


def _csv_rows(path: Path, delimiter: str) -> list[list[float]]:
    rows = []
    with open(path, newline="") as fh:
        for line_no, row in enumerate(csv.reader(fh, delimiter=delimiter), start=1):
            if not row or all(not cell.strip() for cell in row):
                continue
            try:
                rows.append([float(cell) if cell.strip() else np.nan for cell in row])
            except ValueError as exc:
                hint = " (the algorithm takes CSV without a header row)" if line_no == 1 else ""
                raise _bad_line("CSV", path, line_no, delimiter.join(row), f"{exc}{hint}") from None
    return rows


def _sniff_delimiter(path: Path) -> str:
    with open(path, newline="") as fh:
        first = fh.readline()
    try:
        return csv.Sniffer().sniff(first, delimiters=",;\t| ").delimiter
    except csv.Error:
        return ","


def _read_csv(files: list[Path], csv_weights: int) -> xgb.DMatrix:
    delimiter = _sniff_delimiter(files[0])
    rows = [row for path in files for row in _csv_rows(path, delimiter)]
    if not rows:
        msg = f"no rows in {[str(p) for p in files]}"
        raise LocalJobInputError(msg)
    width = len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != width:
            msg = f"CSV rows must all have {width} columns; row {i + 1} has {len(row)}"
            raise LocalJobInputError(msg)
    table = np.asarray(rows, dtype=np.float64)
    first = 2 if csv_weights == 1 else 1
    weight = table[:, 1] if csv_weights == 1 else None
    return xgb.DMatrix(table[:, first:], label=table[:, 0], weight=weight, missing=np.nan)


def _read_libsvm(files: list[Path]) -> xgb.DMatrix:
    labels: list[float] = []
    weights: list[float] = []
    indptr, indices, values = [0], [], []
    for path in files:
        with open(path) as fh:
            for line_no, line in enumerate(fh, start=1):
                parts = line.split("#", 1)[0].split()
                if not parts:
                    continue
                try:
                    label, _, weight_text = parts[0].partition(":")
                    labels.append(float(label))
                    weights.append(float(weight_text) if weight_text else 1.0)
                    for token in parts[1:]:
                        key, sep, val = token.partition(":")
                        if key == "qid":
                            continue
                        if not sep or int(key) < 0:
                            msg = f"{token!r} is not <index>:<value>"
                            raise ValueError(msg)
                        indices.append(int(key))
                        values.append(float(val))
                except ValueError as exc:
                    raise _bad_line("libsvm", path, line_no, line, str(exc)) from None
                indptr.append(len(indices))
    if not labels:
        msg = f"no rows in {[str(p) for p in files]}"
        raise LocalJobInputError(msg)
    width = max(indices, default=-1) + 1
    matrix = scipy.sparse.csr_matrix((values, indices, indptr), shape=(len(labels), max(width, 1)))
    instance_weights = np.asarray(weights) if any(w != 1.0 for w in weights) else None
    return xgb.DMatrix(matrix, label=np.asarray(labels), weight=instance_weights)


def _read_parquet(files: list[Path]) -> xgb.DMatrix:
    import pyarrow.parquet as pq  # optional: checked before the job starts

    columns = []
    for path in files:
        table = pq.read_table(path)
        columns.append(np.column_stack([np.asarray(c.to_numpy(), dtype=np.float64) for c in table.columns]))
    data = np.vstack(columns)
    return xgb.DMatrix(data[:, 1:], label=data[:, 0])


def load_dmatrix(path: Path, fmt: str, *, csv_weights: int = 0) -> xgb.DMatrix | None:
    """The channel at ``path`` as a DMatrix, or ``None`` when it holds no data file.

    Raises:
        LocalJobInputError: a file that is not in the channel's format, naming file and line.
    """
    files = data_files(path)
    if not files:
        return None
    if fmt == CSV:
        return _read_csv(files, csv_weights)
    if fmt == LIBSVM:
        return _read_libsvm(files)
    return _read_parquet(files)
