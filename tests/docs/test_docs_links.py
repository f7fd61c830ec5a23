"""Relative links in the docs pages point at files that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _relative_links(page: Path) -> list[str]:
    return [t for t in _LINK.findall(page.read_text()) if "://" not in t and not t.startswith("mailto:")]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_relative_links_resolve(page: Path) -> None:
    """Every relative link of the page names an existing file or folder."""
    base = page.parent
    missing = [t for t in _relative_links(page) if not (base / t).exists()]
    assert not missing, f"{page.name} links to missing files: {missing}"


def test_index_links_every_page():
    """docs/index.md links every concept page in docs/."""
    linked = set(_relative_links(DOCS / "index.md"))
    pages = {p.name for p in PAGES if p.parent == DOCS} - {"index.md"}
    assert pages <= linked, f"pages missing from docs/index.md: {sorted(pages - linked)}"
