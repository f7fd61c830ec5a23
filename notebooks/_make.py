"""Build the notebooks from their jupytext scripts and execute them: ``make notebooks``.

Each notebook's source is the percent-format script next to it (``01-quickstart.py`` for
``01-quickstart.ipynb``: ``# %%`` code cells, ``# %% [markdown]`` cells), linted like the rest
of the code. This writes each ``.ipynb`` with the outputs of a real run in a Jupyter kernel of
this interpreter (nbclient), in a scratch copy of this folder, so the notebooks read well on
GitHub. Only what a run changes for real is kept: no execution timestamps, no kernel versions,
stable cell ids. ``python notebooks/_make.py 01-quickstart`` builds one notebook.
tests/notebooks/test_notebooks.py checks the committed notebooks against the scripts.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import jupytext
import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbformat import NotebookNode

HERE = Path(__file__).resolve().parent
SCRIPTS = sorted(HERE.glob("[0-9][0-9]-*.py"))
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
TIMEOUT_S = 180  # one cell: the local jobs take seconds


def notebook_of(script: Path) -> NotebookNode:
    """The notebook a percent-format script describes, without outputs."""
    nb = jupytext.read(script, fmt="py:percent")
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata = NotebookNode(kernelspec=KERNELSPEC, language_info={"name": "python"})
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"
        cell.metadata = NotebookNode()
    nbformat.validate(nb)
    return nb


def scratch_copy(dest: Path) -> Path:
    """Copy this folder (scripts, training scripts; no notebooks) to ``dest``, where a notebook runs."""
    shutil.copytree(HERE, dest, ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints", "__pycache__"))
    return dest


def execute(nb: NotebookNode, workdir: Path) -> None:
    """Run every cell of ``nb`` in a fresh kernel, in ``workdir``; outputs are stored in ``nb``.

    The kernel is ``python3`` of this interpreter (ipykernel's own spec, whatever kernelspecs the
    user has installed), with this interpreter's scripts first on PATH and matplotlib's inline
    backend. Raises ``nbclient.exceptions.CellExecutionError`` when a cell fails.
    """
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("MPLBACKEND", None)
    km = KernelManager(kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[]))
    client = NotebookClient(
        nb, km=km, timeout=TIMEOUT_S, record_timing=False, resources={"metadata": {"path": str(workdir)}}
    )
    client.execute(env=env)
    nb.metadata = NotebookNode(kernelspec=KERNELSPEC, language_info={"name": "python"})


def build(script: Path, scratch: Path) -> Path:
    """Execute the notebook of ``script`` in a copy of this folder under ``scratch``; write the .ipynb."""
    nb = notebook_of(script)
    execute(nb, scratch_copy(scratch / script.stem))
    target = script.with_suffix(".ipynb")
    nbformat.write(nb, target)
    return target


def main(argv: list[str]) -> int:
    scripts = [HERE / f"{name.removesuffix('.py')}.py" for name in argv] or SCRIPTS
    unknown = [s.name for s in scripts if s not in SCRIPTS]
    if unknown:
        print(f"notebooks must be among {[s.stem for s in SCRIPTS]} (got {unknown})", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="notebooks-") as scratch:
        for script in scripts:
            print(f"executing {script.name} ...", flush=True)
            print(f"wrote {build(script, Path(scratch)).relative_to(HERE.parent)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
