"""The source bundle of a self-hosted job: the user's code plus what our hook needs in the container.

The SageMaker training toolkit downloads ``sourcedir.tar.gz`` into ``/opt/ml/code``, installs its
``requirements.txt`` and runs ``sagemaker_program`` there. A self-hosted job's bundle is the
user's, with three additions:

- ``sagemaker_debugger_ext_launch.py``: the program SageMaker runs; it starts our launcher
  (``python -m sagemaker_debugger_ext.cloud launch``), which runs the user's entry point;
- ``.sagemaker-debugger-ext/config.json``: the user's entry point and the ``DebugHookConfig``,
  ``ProfilerConfig`` and ``TensorBoardOutputConfig`` the service would have written to
  ``/opt/ml/input/config``;
- ``requirements.txt``: the user's, plus this package (a PyPI requirement, or the path of a
  wheel in the job's ``sagemaker-debugger-ext`` channel for jobs without internet access).
"""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Mapping
from typing import Any

__all__ = [
    "BUNDLE_CONFIG",
    "LAUNCH_SCRIPT",
    "SELF_HOSTED_FOLDER",
    "WHEEL_CHANNEL",
    "add_to_bundle",
    "bundle_files",
    "package_requirement",
]

LAUNCH_SCRIPT = "sagemaker_debugger_ext_launch.py"
BUNDLE_CONFIG = ".sagemaker-debugger-ext/config.json"
WHEEL_CHANNEL = "sagemaker-debugger-ext"
SELF_HOSTED_FOLDER = "debugger-self-hosted"  # <output>/<job>/debugger-self-hosted: manifest, bundle, hosts
_LAUNCH_SOURCE = (
    '"""Started by SageMaker: runs the entry point under sagemaker-debugger-ext\'s self-hosted Debugger."""\n'
    "import os\nimport sys\n\n"
    "from sagemaker_debugger_ext.cloud._launcher import main\n\n"
    "sys.exit(main(sys.argv[1:], code_dir=os.path.dirname(os.path.abspath(__file__))))\n"
)


def package_requirement(version: str, wheel_name: str | None = None) -> str:
    """The ``requirements.txt`` line that installs this package in the training container."""
    if wheel_name:
        return f"/opt/ml/input/data/{WHEEL_CHANNEL}/{wheel_name}"
    return f"sagemaker-debugger-ext=={version}"


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def bundle_files(
    *, config: Mapping[str, Any], requirement: str, requirements: str = "", requirements_name: str = "requirements.txt"
) -> dict[str, bytes]:
    """The files a self-hosted job adds to its source: launcher, config and requirements (name -> bytes).

    ``requirements`` is the user's requirements file's text (kept), with ``requirement``
    appended unless it already names this package; it is written as ``requirements_name``.
    """
    lines = [line for line in requirements.splitlines() if line.strip()]
    if not any(line.strip().lower().startswith(("sagemaker-debugger-ext", "sagemaker_debugger_ext")) for line in lines):
        lines.append(requirement)
    return {
        requirements_name: ("\n".join(lines) + "\n").encode(),
        LAUNCH_SCRIPT: _LAUNCH_SOURCE.encode(),
        BUNDLE_CONFIG: json.dumps(dict(config), sort_keys=True, indent=1).encode(),
    }


def add_to_bundle(original: bytes | None, *, config: Mapping[str, Any], requirement: str) -> bytes:
    """A new ``sourcedir.tar.gz`` (bytes): ``original``'s files plus the launcher, config and requirement.

    ``original`` is ``None`` when the job has no bundle yet (a single entry point uploaded alone
    is a bundle too). The user's ``requirements.txt`` is kept, with the requirement appended
    unless it already names this package.
    """
    out = io.BytesIO()
    requirements = ""
    with tarfile.open(fileobj=out, mode="w:gz") as new:
        if original is not None:
            with tarfile.open(fileobj=io.BytesIO(original), mode="r:*") as old:
                for member in old.getmembers():
                    name = member.name.removeprefix("./")
                    if name in (LAUNCH_SCRIPT, BUNDLE_CONFIG):
                        continue
                    if name == "requirements.txt" and member.isfile():
                        handle = old.extractfile(member)
                        requirements = handle.read().decode() if handle is not None else ""
                        continue
                    handle = old.extractfile(member) if member.isfile() else None
                    new.addfile(member, handle)
        for name, data in bundle_files(config=config, requirement=requirement, requirements=requirements).items():
            _add(new, name, data)
    return out.getvalue()
