"""docs/cli.md shows the real --help of every subcommand the parser has."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load_generator():
    spec = importlib.util.spec_from_file_location("_make_cli_md", ROOT / "docs" / "_make_cli_md.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_cli_page_matches_help():
    """Regenerating docs/cli.md changes nothing: run docs/_make_cli_md.py after changing a command."""
    generator = _load_generator()
    page = (ROOT / "docs" / "cli.md").read_text()
    assert _squash(generator.render()) == _squash(page), "docs/cli.md is stale: run docs/_make_cli_md.py"


def test_cli_page_documents_every_command():
    """Every subcommand of the parser has a section in docs/cli.md."""
    generator = _load_generator()
    page = (ROOT / "docs" / "cli.md").read_text()
    for name in generator.subcommands():
        assert f"## `{name}`" in page
