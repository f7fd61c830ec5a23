"""The self-hosted Debugger backend for ``ModelTrainer`` jobs: ``cloud``'s, through ModelTrainer's own staging.

A ModelTrainer job carries its code as two channels that the SDK stages itself: ``code`` (the
files of ``SourceCode.source_dir``) and ``sm_drivers`` (``sm_train.sh``, ``sourcecode.json``,
the drivers). With the self-hosted backend the trainer hands ModelTrainer a staged copy of its
``SourceCode`` (:func:`stage_source_code`): ``source_dir`` a folder holding the user's files
plus the files the v2 path adds to its ``sourcedir.tar.gz`` (``cloud._bundle.bundle_files``:
the launcher, the hook's and the profiler's configs, the package's requirement),
``entry_script`` the launcher and ``requirements`` the file naming the package. ModelTrainer
then uploads the ``code`` channel and writes ``sm_train.sh`` (which installs the requirements)
and ``sourcecode.json`` (whose entry script the basic driver runs) from it, as for any job.
The rule jobs, the manifest and the statuses are ``cloud._self_hosted``'s.
"""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path
from typing import Any, NoReturn

import attrs

from .._exceptions import ConfigValueError, field_error_message
from ..cloud._bundle import LAUNCH_SCRIPT, bundle_files
from ..cloud._self_hosted import bundle_config, with_rule_statuses

__all__ = [
    "SELF_HOSTED_REQUIREMENTS",
    "SelfHostedOptions",
    "rule_job_summary",
    "self_hosted_options",
    "stage_source_code",
]

#: the requirements file that names the package when ``SourceCode.requirements`` is not set
SELF_HOSTED_REQUIREMENTS = ".sagemaker-debugger-ext/requirements.txt"


@attrs.frozen(kw_only=True)
class SelfHostedOptions:
    """``with_debugger``'s self-hosted options (``DebuggerSession``'s for the v2 path)."""

    wheel: str | None = None
    rule_image_uri: str | None = None
    rule_poll_seconds: float = 10.0


def self_hosted_options(wheel: Any, rule_image_uri: Any, rule_poll_seconds: Any) -> SelfHostedOptions:
    """``with_debugger``'s self-hosted options, checked before anything starts.

    Raises:
        ConfigValueError: a ``wheel`` that is not an existing ``.whl`` file, or a
            ``rule_poll_seconds`` that is not a positive number (each named, with its value).
    """
    if wheel is not None and not (str(wheel).endswith(".whl") and Path(wheel).is_file()):
        _refuse("wheel", "the path of an existing .whl file of this package", str(wheel))
    if isinstance(rule_poll_seconds, bool) or not isinstance(rule_poll_seconds, int | float) or rule_poll_seconds <= 0:
        _refuse("rule_poll_seconds", "a number of seconds > 0", rule_poll_seconds)
    return SelfHostedOptions(
        wheel=None if wheel is None else str(wheel),
        rule_image_uri=None if rule_image_uri is None else str(rule_image_uri),
        rule_poll_seconds=float(rule_poll_seconds),
    )


def _refuse(field: str, expected: str, value: Any) -> NoReturn:
    raise ConfigValueError(field_error_message(field, expected, value), field=field, value=value)


def _inside(root: Path, name: str, field: str) -> Path:
    path = Path(name)
    if path.is_absolute() or ".." in path.parts:
        _refuse(field, "a path inside source_dir", name)
    return root / path


def _copy_source(source_dir: str, into: Path) -> None:
    source = Path(source_dir)
    if source.is_dir():
        shutil.copytree(source, into, symlinks=True, dirs_exist_ok=True)
        return
    into.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(source) as tar:
            tar.extractall(into, filter="data")
    except (tarfile.TarError, OSError) as exc:
        _refuse("source_code.source_dir", f"a local folder or a readable .tar.gz ({exc})", source_dir)


def stage_source_code(source_code: Any, *, distributed: Any, into: Path, keys: dict[str, Any], requirement: str) -> Any:
    """A copy of ``source_code`` whose ``source_dir`` is ``into``: the user's files plus the launcher,
    the config (entry point, ``DebugHookConfig``, ``ProfilerConfig`` from ``keys``) and the requirement.

    Raises:
        ConfigValueError: no ``entry_script`` (a ``command``, or no source), a script that is not
            Python, a ``distributed`` runner other than Torchrun, or a ``source_dir`` on S3 (each named, with its value).
    """
    entry = getattr(source_code, "entry_script", None)
    if source_code is None or not entry or getattr(source_code, "command", None):
        _refuse(
            "source_code.entry_script",
            "a Python script with backend='self-hosted' (the launcher runs it; SourceCode.command is not supported)",
            entry,
        )
    if not str(entry).endswith(".py"):
        _refuse("source_code.entry_script", "a .py script with backend='self-hosted'", entry)
    if distributed is not None and type(distributed).__name__ != "Torchrun":
        # torchrun starts the launcher once per rank and they share the work: see cloud/_host_group.py.
        # MPI's runner starts it under mpi4py, which has initialised MPI before the script's own process.
        _refuse("distributed", "None or Torchrun with backend='self-hosted'", type(distributed).__name__)
    source_dir = str(source_code.source_dir or "")
    if source_dir.startswith("s3://"):
        _refuse("source_code.source_dir", "a local folder or .tar.gz with backend='self-hosted'", source_dir)
    _copy_source(source_dir, into)
    name = str(source_code.requirements or SELF_HOSTED_REQUIREMENTS)
    user_requirements = _inside(into, name, "source_code.requirements")
    text = user_requirements.read_text() if source_code.requirements and user_requirements.is_file() else ""
    hook, profiler = keys.get("DebugHookConfig") or None, keys.get("ProfilerConfig") or None
    if profiler is not None and profiler.get("DisableProfiler"):
        profiler = None
    config = bundle_config(str(entry), None, hook, profiler)  # the job's name: TRAINING_JOB_NAME in the container
    for relative, data in bundle_files(
        config=config, requirement=requirement, requirements=text, requirements_name=name
    ).items():
        target = _inside(into, relative, "source_code")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return source_code.model_copy(update={"source_dir": str(into), "entry_script": LAUNCH_SCRIPT, "requirements": name})


def rule_job_summary(training_job: Any, session: Any) -> list[dict[str, Any]]:
    """Debug then profiler rule statuses of a job, in the service's shape, whichever backend ran its rules.

    ``training_job``: a name or a sagemaker-core ``TrainingJob``; ``session``: the v3 ``Session``
    (its SageMaker and S3 clients). For a self-hosted job the statuses come from its manifest on
    S3, each rule job's status file and DescribeProcessingJob (``RuleEvaluationJobArn`` is the
    processing job's ARN); ``TrainingJob.get()`` cannot show them, the service knows none.
    """
    name = training_job if isinstance(training_job, str) else str(training_job.training_job_name)
    client = session.sagemaker_client
    description = client.describe_training_job(TrainingJobName=name)
    description = with_rule_statuses(description, sagemaker_client=client, s3_client=session.s3_client)
    return list(description.get("DebugRuleEvaluationStatuses") or []) + list(
        description.get("ProfilerRuleEvaluationStatuses") or []
    )
