"""The notebooks in notebooks/: built from their jupytext scripts, committed executed, clean of warnings."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("jupytext")

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
# What a clean output never holds: a warning or traceback on stderr, anywhere a deprecation warning,
# or the SDK's line about a config file that does not exist.
_STDERR_NOISE = ("Warning", "warning:", "Traceback")
_NOISE = ("DeprecationWarning", "Not applying SDK defaults")


@pytest.fixture(scope="module")
def make() -> ModuleType:
    """notebooks/_make.py, which builds and executes the notebooks (``make notebooks``)."""
    spec = importlib.util.spec_from_file_location("_make_notebooks", NOTEBOOKS_DIR / "_make.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _outputs(nb: dict) -> list[dict]:
    return [out for cell in nb["cells"] if cell["cell_type"] == "code" for out in cell.get("outputs", [])]


def _text(out: dict, *, html: bool = True) -> str:
    if out.get("output_type") == "stream":
        return str(out.get("text", ""))
    if out.get("output_type") == "error":
        return "\n".join(out.get("traceback", []))
    data = out.get("data", {})
    return str(data.get("text/plain", "")) + (str(data.get("text/html", "")) if html else "")


def _noise(nb: dict) -> list[str]:
    """The outputs that hold an error, a warning or the SDK's noise (each cut to 300 characters)."""
    found = []
    for out in _outputs(nb):
        text = _ANSI.sub("", _text(out, html=False))
        stderr = out.get("output_type") == "stream" and out.get("name") == "stderr"
        if (
            out.get("output_type") == "error"
            or (stderr and any(s in text for s in _STDERR_NOISE))
            or any(s in text for s in _NOISE)
        ):
            found.append(text[:300])
    return found


def _assert_shows_the_job(name: str, nb: dict) -> None:
    """The outputs show the rule summary with statuses and at least one plot."""
    outputs = _outputs(nb)
    assert any("image/png" in o.get("data", {}) for o in outputs), f"{name} shows no image"
    text = "\n".join(_text(o) for o in outputs)
    assert "Rule summary" in text, f"{name} shows no rule summary"
    assert "IssuesFound" in text or "NoIssuesFound" in text, f"{name} shows no rule status"
    if name == "01-quickstart.ipynb":  # fit(logs="Rules"): progress while the job runs
        assert "[progress] " in text and "Training seconds:" in text, f"{name} shows no progress"


def test_every_notebook_is_listed(make: ModuleType) -> None:
    """Each notebook in notebooks/ has its script, so none is run blind."""
    assert NOTEBOOKS, f"no notebooks in {NOTEBOOKS_DIR}"
    assert [s.with_suffix(".ipynb") for s in make.SCRIPTS] == NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebooks_are_built_and_clean(path: Path, make: ModuleType) -> None:
    """The committed notebook has its script's cells, every code cell executed in order, and clean outputs."""
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    expected = make.notebook_of(path.with_suffix(".py"))
    cells = [(c.cell_type, c.source) for c in nb.cells]
    assert cells == [(c.cell_type, c.source) for c in expected.cells], (
        f"{path.name} differs from its script: make notebooks"
    )
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1)), f"{path.name} is not executed top to bottom: {counts}"
    assert not any(c.metadata for c in nb.cells), f"{path.name} has cell metadata (timings?): make notebooks"
    _assert_shows_the_job(path.name, nb)
    assert not _noise(nb), f"{path.name} shows warnings or errors: {json.dumps(_noise(nb), indent=1)}"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path: Path, tmp_path: Path, make: ModuleType) -> None:
    """The notebook runs from its script without error or warning; its outputs show the rule summary and an image."""
    nb = make.notebook_of(path.with_suffix(".py"))
    try:
        make.execute(nb, make.scratch_copy(tmp_path / "notebooks"))
    except nbclient.exceptions.CellExecutionError as exc:
        # The SDK installs rich tracebacks, which arrive as display data: show them.
        shown = _ANSI.sub("", "\n".join(_text(o, html=False) for o in _outputs(nb)))
        pytest.fail(f"{path.name} failed: {str(exc)[:2000]}\n--- outputs ---\n{shown[-6000:]}")
    assert not _noise(nb), f"{path.name} shows warnings or errors: {json.dumps(_noise(nb), indent=1)}"
    _assert_shows_the_job(path.name, nb)
