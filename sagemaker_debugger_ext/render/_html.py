"""The few HTML pieces every report writes: a self-contained page, a table, an inline PNG.

Shared by the job report (``reports/_job_report.py``), the rule summary table
(``rules/_summary.py``) and the ProfilerReport (``profiler/rules/_report.py``). Text goes in
through :func:`esc`; cells of :func:`table` are HTML fragments the caller has escaped.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Sequence

__all__ = ["esc", "page", "png_img", "table"]


def esc(value: object) -> str:
    """``str(value)`` escaped for HTML text and attribute values."""
    return html.escape(str(value))


def page(title: str, body: Iterable[str], *, css: str = "") -> str:
    """A complete UTF-8 HTML document: ``title`` (escaped), inline ``css``, the ``body`` fragments."""
    style = f"<style>{css}</style>" if css else ""
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{esc(title)}</title>{style}</head>'
        f"<body>{''.join(body)}</body></html>\n"
    )


def table(
    header: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    caption: str = "",
    cls: str = "",
    row_classes: Sequence[str] | None = None,
    header_column: bool = False,
) -> str:
    """An HTML table.

    Args:
        header: column titles (escaped); empty for a table without a header row.
        rows: each row's cells as HTML fragments (already escaped by the caller).
        caption: caption text (escaped).
        cls: the table's class attribute.
        row_classes: one class per row (``"fired"``, ``"status-IssuesFound"``...).
        header_column: the first cell of each row is a ``<th>`` (key/value tables).
    """
    head = "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>" if header else ""
    body = []
    for i, cells in enumerate(rows):
        klass = f' class="{esc(row_classes[i])}"' if row_classes is not None else ""
        tags = [("th" if header_column and j == 0 else "td") for j in range(len(cells))]
        body.append(f"<tr{klass}>" + "".join(f"<{t}>{c}</{t}>" for t, c in zip(tags, cells, strict=True)) + "</tr>")
    attrs = f' class="{esc(cls)}"' if cls else ""
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return f"<table{attrs}>{cap}{head}{''.join(body)}</table>"


def png_img(png: bytes, alt: str, *, figure: bool = False) -> str:
    """An ``<img>`` holding ``png`` as a data URI (optionally wrapped in ``<figure>``)."""
    data = base64.b64encode(png).decode("ascii")
    img = f'<img alt="{esc(alt)}" src="data:image/png;base64,{data}">'
    return f"<figure>{img}</figure>" if figure else img
