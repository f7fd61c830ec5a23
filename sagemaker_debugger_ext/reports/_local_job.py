"""Reports of a local job, by name: the debugger job report and, when profiled, the profiler report."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .._exceptions import DebuggerExtError
from ..local import LocalTrainingClient
from ..profiler import ProfilerTrial, render_profiler_report
from ..request._paths import artifacts_path, profiler_artifacts_path
from ..storage import open_storage
from ._job_report import write_job_report

__all__ = [
    "JOB_REPORT_FILE",
    "describe_local_job",
    "profiler_output_dir",
    "profiler_output_source",
    "write_job_reports",
    "write_local_job_reports",
]

JOB_REPORT_FILE = "job-report.html"


def describe_local_job(job_name: str) -> dict[str, Any]:
    """``describe_training_job`` of a local job, without importing the ``sagemaker`` package.

    Raises:
        JobNotFoundError: no local job has that name.
    """
    return LocalTrainingClient().describe_training_job(job_name)


def _local_dir(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return Path(parsed.netloc + parsed.path) if parsed.netloc else Path(parsed.path)
    if parsed.scheme in ("", None):
        return Path(uri)
    return None


def _profiler_uri(description: Mapping[str, Any]) -> str | None:
    config = description.get("ProfilerConfig") or {}
    if not config or str(config.get("DisableProfiler", "")).lower() == "true":
        return None
    base = config.get("S3OutputPath") or (description.get("OutputDataConfig") or {}).get("S3OutputPath")
    job = description.get("TrainingJobName")
    return profiler_artifacts_path(str(base), str(job)) if base and job else None


def profiler_output_dir(description: Mapping[str, Any]) -> Path | None:
    """The local profiler folder of a job, or None (profiler off, no data, or not local)."""
    uri = _profiler_uri(description)
    local = _local_dir(uri) if uri else None
    return local if local is not None and local.is_dir() else None


def profiler_output_source(description: Mapping[str, Any]) -> Path | str | None:
    """The job's profiler output: its local folder, else its ``s3://`` URI when objects are there;
    None when profiling was off or nothing was written."""
    local = profiler_output_dir(description)
    if local is not None:
        return local
    uri = _profiler_uri(description)
    if uri is None or not uri.startswith("s3://"):
        return None
    try:
        return uri if next(iter(open_storage(uri).list("system/")), None) is not None else None
    except DebuggerExtError:
        return None


def _default_out(description: Mapping[str, Any], job_name: str) -> Path:
    base = (description.get("OutputDataConfig") or {}).get("S3OutputPath") or ""
    local = _local_dir(artifacts_path(str(base), job_name)) if base else None
    return local / "report" if local is not None else Path(f"{job_name}-report")


def write_local_job_reports(
    job_name: str, out_dir: str | Path | None = None, *, profiler_parameters: Mapping[str, Any] | None = None
) -> list[Path]:
    """Write the reports of a local job and return their paths.

    ``job-report.html`` (rule summary, loss curves, flagged tensors) always; the profiler's
    ``profiler-report.html`` too when the job was profiled.

    Args:
        job_name: a local training job.
        out_dir: folder for the reports (default: ``<output path>/<job>/report`` for a
            ``file://`` output, else ``./<job>-report``).
        profiler_parameters: ``<Rule>_<param>`` values for the profiler report.

    Raises:
        JobNotFoundError: no local job has that name.

    .. versionadded:: 0.1
    """
    return write_job_reports(describe_local_job(job_name), out_dir, profiler_parameters=profiler_parameters)


def write_job_reports(
    description: Mapping[str, Any],
    out_dir: str | Path | None = None,
    *,
    profiler_parameters: Mapping[str, Any] | None = None,
) -> list[Path]:
    """Write the reports of a described job (local, or through SageMaker) and return their paths.

    As :func:`write_local_job_reports`, from a ``describe_training_job`` response: the debug,
    rule and profiler output are read where the description says (a local folder or S3; the
    profiler data of an S3 job is copied to ``<out_dir>/profiler-data`` to draw its report).
    """
    job_name = str(description.get("TrainingJobName", "job"))
    out = Path(out_dir) if out_dir else _default_out(description, job_name)
    out.mkdir(parents=True, exist_ok=True)
    written = [write_job_report(description, out / JOB_REPORT_FILE)]
    source = profiler_output_source(description)
    if source is not None:
        data = ProfilerTrial(source, cache_dir=out / "profiler-data") if isinstance(source, str) else source
        written.append(render_profiler_report(data, out, parameters=dict(profiler_parameters or {})))
    return written
