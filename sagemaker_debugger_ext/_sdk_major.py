"""Which SageMaker Python SDK major is installed, and one clear error when a part needs the other.

SDK v2 and v3 share one distribution name (``sagemaker``), so one environment holds one of
them. The core of this package (configs, hooks, trials, rules, profiler, request building,
CLI, ``serve``) needs neither; ``Estimator`` and ``LocalSession`` are built on v2,
``sagemaker_debugger_ext.train`` on v3. Each of those calls :func:`require_sdk` before it
imports the SDK, so a missing major is reported as :class:`SdkVersionError` naming the
installed version and what to install, instead of ``No module named 'sagemaker.estimator'``.
Nothing here imports ``sagemaker`` (the installed version comes from the package metadata).
"""

from __future__ import annotations

from importlib import metadata

from ._exceptions import SdkVersionError

__all__ = [
    "EXTRA",
    "PART_FOR_MAJOR",
    "TESTED_SAGEMAKER_TRAIN",
    "installed_sdk_major",
    "installed_version",
    "require_sdk",
    "sagemaker_train_warning",
]

#: the extra of this package that installs each SDK major
EXTRA = {2: "sdk2", 3: "sdk3"}
#: what a user of each major imports for a training job with Debugger
PART_FOR_MAJOR = {2: "sagemaker_debugger_ext.Estimator", 3: "sagemaker_debugger_ext.train.ModelTrainer"}
#: the sagemaker-train (major, minor) ``sagemaker_debugger_ext.train`` was tested with; setup.cfg's
#: [sdk3] extra pins the same range (ModelTrainer's override point is private)
TESTED_SAGEMAKER_TRAIN = (1, 27)


def installed_version(distribution: str = "sagemaker") -> str | None:
    """The installed version of ``distribution``, or ``None`` when it is not installed."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def installed_sdk_major() -> int | None:
    """The major version of the installed ``sagemaker`` distribution (``None``: not installed)."""
    version = installed_version()
    if version is None:
        return None
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else None


def require_sdk(major: int, part: str) -> None:
    """Raise :class:`SdkVersionError` unless SageMaker Python SDK ``major`` is installed.

    Args:
        major: 2 or 3.
        part: the importing part, named in the message (``"sagemaker_debugger_ext.Estimator"``).

    Raises:
        SdkVersionError: another major (or no ``sagemaker``) is installed; the message names the
            installed version, the command that installs what ``part`` needs, and what works
            with the installed major instead.
    """
    have = installed_sdk_major()
    if have == major:
        return
    version = installed_version()
    found = (
        "no 'sagemaker' package is installed" if version is None else f"sagemaker {version} (SDK v{have}) is installed"
    )
    need = f"the SageMaker Python SDK v{major}"
    install = f"pip install 'sagemaker-debugger-ext[{EXTRA[major]}]'"
    message = f"{part} needs {need}, but {found}; install it with: {install}"
    if have in PART_FOR_MAJOR and have != major:
        message += (
            f" (v2 and v3 cannot share one environment: with SDK v{have} installed, use {PART_FOR_MAJOR[have]} instead)"
        )
    raise SdkVersionError(message, name=part, installed=version, required=major) from None


def sagemaker_train_warning(version: str | None) -> str | None:
    """The warning text for a sagemaker-train ``version`` outside the tested range, else ``None``."""
    head = tuple(int(part) for part in (version or "0.0").split(".")[:2] if part.isdigit())
    if head == TESTED_SAGEMAKER_TRAIN:
        return None
    tested = ".".join(map(str, TESTED_SAGEMAKER_TRAIN))
    return (
        f"sagemaker_debugger_ext.train was tested with sagemaker-train {tested}.x, and {version} is installed: "
        "it adds the Debugger keys in ModelTrainer's private _create_training_job_args, which may have changed; "
        "install a tested version with: pip install 'sagemaker-debugger-ext[sdk3]'"
    )
