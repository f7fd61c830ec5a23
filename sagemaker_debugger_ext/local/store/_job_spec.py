"""What a local job needs, resolved from a CreateTrainingJob request and checked up front.

Everything that can be wrong with the request is found here, before any process starts,
and reported as :class:`LocalJobInputError` naming the field, the value and what is allowed.
"""

from __future__ import annotations

import copy
import json
import os
import re
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import attrs

from ..._exceptions import ConfigValueError, LocalJobInputError, RuleCoverageWarning, field_error_message
from ...config._addresses import resolve_output_address
from ...request._paths import artifacts_path
from .. import _xgb_algorithm as xgboost_algorithm
from ._before_training import output_addresses, request_problems, request_warnings
from ._job_store import validate_rule_name
from ._model_trainer_jobs import DriverSpec, is_model_trainer_request, read_driver_spec
from ._rule_coverage import rule_coverage_warnings

__all__ = [
    "Channel",
    "JobSpec",
    "check_before_training",
    "cpu_count",
    "decode_hyperparameter",
    "local_path_of",
    "output_uri",
    "profiler_enabled",
    "resolve_job_spec",
    "resolve_request_addresses",
]

SUBMIT_DIR_HP = "sagemaker_submit_directory"
PROGRAM_HP = "sagemaker_program"
_DEFAULT_MAX_RUNTIME_S = 86400
_CHANNEL_RE = re.compile(r"^[A-Za-z0-9.\-_]{1,64}$")


def decode_hyperparameter(value: str) -> Any:
    """Decode one hyperparameter value as the training toolkit does (JSON, else the string)."""
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return value


def local_path_of(uri: str, base: Path | None = None) -> Path | None:
    """Absolute local path of a ``file://`` URI or a plain path; ``None`` for other schemes.

    A relative path (``file://scripts``, as the SDK sends a relative ``source_dir``) is
    resolved against ``base``, the caller's working folder (default: this process's).
    """
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        raw = Path(parsed.netloc + parsed.path) if parsed.netloc not in ("", "localhost") else Path(parsed.path)
    elif parsed.scheme == "" and uri:
        raw = Path(uri).expanduser()
    else:
        return None
    return ((base or Path.cwd()) / raw).resolve()


def _absolute_uri(uri: str, base: Path) -> str:
    """``uri`` with a relative local path made absolute against ``base`` (other schemes unchanged)."""
    path = local_path_of(uri, base)
    return uri if path is None else path.as_uri()


@attrs.frozen(kw_only=True)
class Channel:
    """One input channel: a name and a ``file://`` or ``s3://`` URI."""

    name: str
    uri: str
    content_type: str | None = None


@attrs.frozen(kw_only=True)
class JobSpec:
    """A validated local job.

    .. versionadded:: 0.1.0
    """

    job_name: str
    instance_count: int
    instance_type: str
    submit_dir: str
    entry_point: str
    hyperparameters: dict[str, str]
    channels: tuple[Channel, ...]
    output_path: str
    max_runtime_s: int
    environment: dict[str, str]
    algorithm_version: str | None = None  # the built-in XGBoost algorithm's version, else a script
    driver: DriverSpec | None = None  # an SDK v3 ModelTrainer request: what its sm_train.sh runs

    @property
    def hosts(self) -> list[str]:
        """``algo-1`` .. ``algo-N``."""
        return [f"algo-{i + 1}" for i in range(self.instance_count)]

    @property
    def user_hyperparameters(self) -> dict[str, Any]:
        """Decoded hyperparameters without the SDK's ``sagemaker_*`` keys."""
        return {
            k: decode_hyperparameter(v)
            for k, v in sorted(self.hyperparameters.items())
            if not k.startswith("sagemaker_")
        }


def _hp_str(hps: Mapping[str, str], key: str) -> str | None:
    if key not in hps:
        return None
    value = decode_hyperparameter(hps[key])
    return value if isinstance(value, str) else str(value)


def _check_output_path(output_path: str, base: Path) -> None:
    scheme = urlparse(output_path).scheme
    if scheme == "s3":
        return
    local = local_path_of(output_path, base)
    if local is None:
        msg = field_error_message("OutputDataConfig.S3OutputPath", "an s3:// or file:// URI", output_path)
        raise LocalJobInputError(msg)
    try:
        local.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=local, prefix=".write-check-"):
            pass
    except OSError as exc:
        msg = field_error_message("OutputDataConfig.S3OutputPath", "a writable folder", output_path)
        msg_0 = f"{msg}: {exc.strerror or exc}"
        raise LocalJobInputError(msg_0) from exc


def _channels(request: Mapping[str, Any], base: Path) -> tuple[Channel, ...]:
    out = []
    for i, item in enumerate(request.get("InputDataConfig") or []):
        name = item.get("ChannelName")
        if not isinstance(name, str) or not _CHANNEL_RE.match(name) or name in (".", ".."):
            msg = field_error_message(f"InputDataConfig[{i}].ChannelName", "letters, digits, '.', '-' or '_'", name)
            raise LocalJobInputError(msg)
        source = item.get("DataSource") or {}
        uri = (source.get("S3DataSource") or {}).get("S3Uri") or (source.get("FileDataSource") or {}).get("FileUri")
        field = f"InputDataConfig[{i}].DataSource"
        if not uri:
            msg = field_error_message(field, "an S3DataSource.S3Uri or FileDataSource.FileUri", source)
            raise LocalJobInputError(msg)
        scheme = urlparse(uri).scheme
        if scheme not in ("s3", "file", ""):
            msg = field_error_message(
                f"{field} URI of channel {name!r}", "an s3:// or file:// URI or a local path", uri
            )
            raise LocalJobInputError(msg)
        if scheme in ("file", ""):
            path = local_path_of(uri, base)
            if path is None or not path.exists():
                msg = field_error_message(f"{field} URI of channel {name!r}", "an existing local file or folder", uri)
                raise LocalJobInputError(msg)
            uri = path.as_uri()
        out.append(Channel(name=str(name), uri=uri, content_type=item.get("ContentType")))
    return tuple(out)


def resolve_job_spec(
    request: Mapping[str, Any], *, default_output_path: str, base_dir: str | Path | None = None
) -> JobSpec:
    """Check ``request`` and resolve what the local platform needs.

    Args:
        request: the CreateTrainingJob request.
        default_output_path: used when ``OutputDataConfig.S3OutputPath`` is empty (SDK local
            code mode sends ``""``).
        base_dir: the caller's working folder, against which relative local paths in the
            request resolve (the SDK's Docker local mode resolves them there too).

    Raises:
        LocalJobInputError: missing entry point, unsupported channel URI, unwritable output.
    """
    base = Path(base_dir) if base_dir else Path.cwd()
    hps = {str(k): str(v) for k, v in (request.get("HyperParameters") or {}).items()}
    program = _hp_str(hps, PROGRAM_HP)
    submit_dir = _hp_str(hps, SUBMIT_DIR_HP)
    driver = read_driver_spec(request) if not program and is_model_trainer_request(request) else None
    algorithm_version = None if program or driver else xgboost_algorithm.check_request(request)
    if driver is not None:  # ModelTrainer: the script is in the "code" channel (a folder, not a tarball)
        program, submit_dir = driver.entry_script or "", driver.code_uri or ""
    elif algorithm_version is not None:
        program = submit_dir = ""  # the emulated algorithm container runs, no script
    elif not program or not submit_dir:
        msg = field_error_message(
            "HyperParameters.sagemaker_program",
            "set: local mode runs a script, so give the estimator an entry_point (SDK v3 ModelTrainer: "
            "source_code=SourceCode(source_dir=..., entry_script=...))",
            program,
        )
        raise LocalJobInputError(msg)
    if Path(program).is_absolute() or ".." in Path(program).parts:
        msg = field_error_message("entry_point", "a path inside the source directory", program)
        raise LocalJobInputError(msg)
    if urlparse(submit_dir).scheme not in ("s3", "file", ""):
        msg = field_error_message("HyperParameters.sagemaker_submit_directory", "an s3:// or file:// URI", submit_dir)
        raise LocalJobInputError(msg)
    submit_dir = _absolute_uri(submit_dir, base) if submit_dir else submit_dir
    code_local = local_path_of(submit_dir, base) if submit_dir else None
    if code_local is not None and program and not (code_local / program).is_file():
        msg = field_error_message("entry_point", f"an existing file in {code_local}", program)
        raise LocalJobInputError(msg)
    resource = request.get("ResourceConfig") or {}
    count = int(resource.get("InstanceCount") or 1)
    if count < 1:
        msg = field_error_message("ResourceConfig.InstanceCount", "at least 1", count)
        raise LocalJobInputError(msg)
    output_path = (request.get("OutputDataConfig") or {}).get("S3OutputPath") or default_output_path
    _check_output_path(output_path, base)
    if urlparse(output_path).scheme != "s3":
        output_path = _absolute_uri(output_path, base)
    for key in ("DebugRuleConfigurations", "ProfilerRuleConfigurations"):
        for cfg in request.get(key) or []:
            validate_rule_name(cfg.get("RuleConfigurationName"))
    stopping = request.get("StoppingCondition") or {}
    env = {str(k): str(v) for k, v in (request.get("Environment") or {}).items()}
    return JobSpec(
        job_name=str(request["TrainingJobName"]),
        instance_count=count,
        instance_type=str(resource.get("InstanceType") or "local"),
        submit_dir=submit_dir,
        entry_point=program,
        hyperparameters=hps,
        channels=_channels(request, base),
        output_path=output_path,
        max_runtime_s=int(stopping.get("MaxRuntimeInSeconds") or _DEFAULT_MAX_RUNTIME_S),
        environment=env,
        algorithm_version=algorithm_version,
        driver=driver,
    )


def check_before_training(request: Mapping[str, Any], base: str | Path, *, cloud_instance_types: bool = False) -> None:
    """Warn about unintended settings; raise one error listing every problem found before start.

    Raises:
        LocalJobInputError: with ``problems``, a list of ``(field, message)``.
    """
    for text in request_warnings(request):
        warnings.warn(text, UserWarning, stacklevel=4)
    problems = request_problems(request, base_dir=base, cloud_instance_types=cloud_instance_types)
    if problems:
        name = request.get("TrainingJobName")
        lines = "\n".join(
            f"  - {message}" if field in message else f"  - {field}: {message}" for field, message in problems
        )
        error = LocalJobInputError(f"local training job {name!r} was not started: {len(problems)} problem(s):\n{lines}")
        error.problems = problems  # type: ignore[attr-defined]
        raise error
    for text in rule_coverage_warnings(request, _entry_script(request, base)):
        warnings.warn(text, RuleCoverageWarning, stacklevel=4)


def _entry_script(request: Mapping[str, Any], base: str | Path) -> Path | None:
    """The entry point's local file, when the code is local (for the rule coverage check)."""
    hps = request.get("HyperParameters") or {}
    program, submit_dir = _hp_str(hps, PROGRAM_HP), _hp_str(hps, SUBMIT_DIR_HP)
    if not program or not submit_dir:
        return None
    code = local_path_of(_absolute_uri(submit_dir, Path(base)), Path(base))
    return code / program if code is not None else None


def resolve_request_addresses(request: Mapping[str, Any], base: str | Path) -> dict[str, Any]:
    """A copy of ``request`` whose output addresses are s3:// or absolute file:// URIs.

    Plain folders resolve against ``base`` (the caller's folder): the job's processes run
    elsewhere, so a relative address would otherwise land inside the job store.

    Raises:
        LocalJobInputError: an address that is neither s3://bucket/..., file://... nor a folder.
    """

    out = copy.deepcopy(dict(request))

    def fix(holder: dict[str, Any], field: str) -> None:
        value = holder.get("S3OutputPath")
        if not isinstance(value, str) or not value:
            return
        try:
            resolved = resolve_output_address(field, value, base)
        except ConfigValueError as exc:
            raise LocalJobInputError(str(exc)) from exc
        holder["S3OutputPath"] = resolved if "://" in resolved else Path(resolved).as_uri()

    for field, holder in output_addresses(out):
        fix(holder, field)
    return out


def output_uri(spec: JobSpec, *parts: str) -> str:
    """``<output_path>/<job>/<parts...>`` with single slashes."""
    return artifacts_path(spec.output_path, spec.job_name, *parts)


def profiler_enabled(request: Mapping[str, Any]) -> bool:
    """Whether the request enables the profiler."""
    cfg = request.get("ProfilerConfig") or {}
    return bool(cfg) and not cfg.get("DisableProfiler", False)


def cpu_count() -> int:
    """CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1
