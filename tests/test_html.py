"""The shared HTML pieces of the reports: escaping, tables, pages and inline PNGs."""

from __future__ import annotations

import base64
from html.parser import HTMLParser

from sagemaker_debugger_ext.render._html import esc, page, png_img, table


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(text: str) -> _Collect:
    parser = _Collect()
    parser.feed(text)
    return parser


def test_table_escapes_header_and_caption_and_sets_row_classes() -> None:
    """Header and caption are escaped, cells go in as given, one class per row."""
    out = table(("a<b", "c"), [["<b>x</b>", esc("1 & 2")]], caption="<jobs>", cls="t", row_classes=["fired"])
    parsed = _parse(out)
    assert ("table", {"class": "t"}) in parsed.tags and ("tr", {"class": "fired"}) in parsed.tags
    assert "a<b" in parsed.text and "<jobs>" in parsed.text and "1 & 2" in parsed.text
    assert "<b>x</b>" in out and "<jobs>" not in out


def test_key_value_table_uses_header_cells() -> None:
    """header_column makes the first cell of each row a <th>; no header row without titles."""
    out = table((), [("Start", "now")], header_column=True)
    assert out == "<table><tr><th>Start</th><td>now</td></tr></table>"


def test_page_and_png() -> None:
    """A page has the escaped title, the CSS and the body; a PNG round-trips through its data URI."""
    doc = page("Report <1>", ["<p>hi</p>"], css="body{}")
    assert doc.startswith("<!DOCTYPE html>") and "<title>Report &lt;1&gt;</title>" in doc
    assert "<style>body{}</style>" in doc and "<body><p>hi</p></body>" in doc
    img = png_img(b"\x89PNG-bytes", 'a "plot"', figure=True)
    attrs = dict(_parse(img).tags)["img"]
    assert attrs["alt"] == 'a "plot"'
    assert base64.b64decode(str(attrs["src"]).split(",", 1)[1]) == b"\x89PNG-bytes"
    assert img.startswith("<figure>")
