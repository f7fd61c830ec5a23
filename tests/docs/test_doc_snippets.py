"""Python snippets marked ``<!-- test -->`` in README.md and docs/*.md run as written.

Mark a snippet by putting ``<!-- test -->`` at the start of the line just before its ```python fence.
Each snippet runs in a fresh interpreter, in a temporary folder that holds a copy of
notebooks/scripts (so ``source_dir="scripts"`` works); snippets of one page share nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_SNIPPET = re.compile(r"^<!-- test -->[ \t]*\n```python\n(.*?)```", re.DOTALL | re.MULTILINE)
_MARKER = re.compile(r"^<!-- test -->", re.MULTILINE)


def _snippets() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        if page.exists():
            for i, match in enumerate(_SNIPPET.finditer(page.read_text())):
                found.append((f"{page.relative_to(ROOT)}#{i}", match.group(1)))
    return found


SNIPPETS = _snippets()


def test_snippet_marker_syntax():
    """Every ``<!-- test -->`` marker is followed by a python fence (no silently skipped snippet)."""
    for page in PAGES:
        if page.exists():
            text = page.read_text()
            assert len(_MARKER.findall(text)) == len(_SNIPPET.findall(text)), page


@pytest.mark.slow
@pytest.mark.parametrize(("where", "code"), SNIPPETS, ids=[w for w, _ in SNIPPETS])
def test_doc_snippet_runs(where: str, code: str, tmp_path: Path) -> None:
    """The snippet exits 0 in a fresh interpreter."""
    shutil.copytree(ROOT / "notebooks" / "scripts", tmp_path / "scripts")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env, check=False
    )
    assert proc.returncode == 0, f"{where} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
