"""``debughookconfig.json`` (and ``tensorboardoutputconfig.json``) -> hook settings.

Follows smdebug 1.0.34's ``create_from_json_file`` (docs/hook.md): the file is the
argument, else ``$SMDEBUG_CONFIG_FILE_PATH``, else ``/opt/ml/input/config/debughookconfig.json``.
``TRAINING_JOB_NAME`` set means "a SageMaker job": TensorBoard is then on exactly when
``tensorboardoutputconfig.json`` exists (its ``LocalPath``), and ``training_job_end.ts``
is left to the platform. Values may be strings, as SageMaker sends them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from .._container_env import (
    CONFIG_FILE_DEBUG_HOOK,
    CONFIG_FILE_TENSORBOARD,
    HOOK_NEVER_CRASH_ENV,
    HOOK_UNCACHED_WRITES_ENV,
    HOOK_WRITER_NICE_ENV,
    SMDEBUG_CONFIG_FILE_PATH_ENV,
    TENSORBOARD_CONFIG_FILE_PATH_ENV,
    ContainerPaths,
    is_sagemaker_job,
)
from .._exceptions import HookConfigError, field_error_message
from ..modes import ModeKeys
from ._collections import CollectionManager
from ._reduction_config import ReductionConfig, parse_bool
from ._save_config import SaveConfig, parse_mode_dicts, save_config_from_mode_dicts

__all__ = ["CollectionSettings", "HookSettings", "load_hook_settings", "parse_hook_config"]

_INCLUDE_WORKERS = ("one", "all")


@attrs.frozen(kw_only=True)
class CollectionSettings:
    """One ``CollectionConfigurations`` entry, parsed."""

    name: str
    save_config: SaveConfig
    reduction_config: ReductionConfig | None = None
    include_regex: tuple[str, ...] = ()
    save_histogram: bool | None = None


@attrs.frozen(kw_only=True)
class HookSettings:
    """Everything a hook constructor needs, parsed from the JSON files and the environment."""

    out_dir: str
    export_tensorboard: bool = False
    tensorboard_dir: str | None = None
    reduction_config: ReductionConfig | None = None
    save_config: SaveConfig = attrs.field(factory=SaveConfig)
    include_regex: tuple[str, ...] | None = None
    include_collections: tuple[str, ...] | None = None
    save_all: bool = False
    include_workers: str = "one"
    collections: tuple[CollectionSettings, ...] = ()
    sagemaker_job: bool = False
    never_crash: bool = False

    def apply_to(self, manager: CollectionManager) -> None:
        """Apply the ``CollectionConfigurations`` entries to a hook's collections."""
        for cs in self.collections:
            coll = manager.get(cs.name)
            coll.save_config = cs.save_config
            if cs.reduction_config is not None:
                coll.reduction_config = cs.reduction_config
            if cs.include_regex:
                coll.include(list(cs.include_regex))
            if cs.save_histogram is not None:
                coll.save_histogram = cs.save_histogram

    def hook_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for a hook constructor."""
        return {
            "out_dir": self.out_dir,
            "export_tensorboard": self.export_tensorboard,
            "tensorboard_dir": self.tensorboard_dir,
            "reduction_config": self.reduction_config,
            "save_config": self.save_config,
            "include_regex": list(self.include_regex) if self.include_regex is not None else None,
            "include_collections": list(self.include_collections) if self.include_collections is not None else None,
            "save_all": self.save_all,
            "include_workers": self.include_workers,
        }


def _split(value: Any) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    msg = field_error_message("include_regex", "a comma-separated string or a list of strings", value)
    raise HookConfigError(msg, field="include_regex", value=value)


def _dict_or_empty(value: Any, field: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise HookConfigError(field_error_message(field, "a JSON object", value), field=field, value=value)
    return value


def _read_json(path: Path, what: str) -> Any:
    try:
        text = path.read_text()
    except FileNotFoundError:
        msg = f"{what} not found: {path}"
        raise FileNotFoundError(msg) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        msg = field_error_message(what, f"valid JSON ({exc.msg} at line {exc.lineno})", str(path))
        raise HookConfigError(msg, field=what, value=str(path)) from None


def parse_hook_config(
    config: Mapping[str, Any],
    *,
    sagemaker_job: bool = False,
    tensorboard_config: Mapping[str, Any] | None = None,
    default_save_values: Mapping[str, Any] | None = None,
    paths: ContainerPaths | None = None,
) -> HookSettings:
    """Parse a DebugHookConfig dict (``LocalPath``, ``HookParameters``, ``CollectionConfigurations``).

    Args:
        config: the parsed ``debughookconfig.json``.
        sagemaker_job: ``TRAINING_JOB_NAME`` is set.
        tensorboard_config: the parsed ``tensorboardoutputconfig.json`` (None when absent).
        default_save_values: save-key defaults of the framework (XGBoost: interval 10).
        paths: the container tree (default ``/opt/ml``) for default folders.

    Raises:
        HookConfigError: a bad value, naming its key.
    """
    paths = paths or ContainerPaths()
    if not isinstance(config, Mapping):
        raise HookConfigError(field_error_message("DebugHookConfig", "a JSON object", config), field="DebugHookConfig")
    out_dir = str(config.get("LocalPath") or paths.tensors_dir)
    hook_params = _dict_or_empty(config.get("HookParameters"), "HookParameters")
    hook_modes = parse_mode_dicts(hook_params, where="HookParameters")
    defaults = dict(default_save_values or {})
    save_config = save_config_from_mode_dicts(hook_modes, defaults)
    # Collections inherit the hook's complete per-mode schedule (so a framework default such
    # as XGBoost's interval 10 reaches them; smdebug fell back to 500 there).
    hook_full = {m: save_config.get_save_config(m).to_json_dict() for m in ModeKeys}
    reduction_config = ReductionConfig.from_dict(hook_params) if "reductions" in hook_params else None
    include_regex = tuple(_split(hook_params["include_regex"])) if "include_regex" in hook_params else None
    save_all = parse_bool("HookParameters['save_all']", hook_params.get("save_all", False))
    include_workers = str(hook_params.get("include_workers", "one"))
    if include_workers not in _INCLUDE_WORKERS:
        field = "HookParameters['include_workers']"
        raise HookConfigError(field_error_message(field, "'one' or 'all'", include_workers), field=field)

    if sagemaker_job:
        tensorboard_dir = None
        if tensorboard_config is not None:
            tensorboard_dir = str(tensorboard_config.get("LocalPath") or paths.tensorboard_dir)
        export_tensorboard = tensorboard_dir is not None
    else:
        export_tensorboard = parse_bool(
            "HookParameters['export_tensorboard']", hook_params.get("export_tensorboard", False)
        )
        tb = hook_params.get("tensorboard_dir")
        tensorboard_dir = str(tb) if tb else None

    raw_colls = config.get("CollectionConfigurations")
    collections: list[CollectionSettings] = []
    include_collections: tuple[str, ...] | None = None
    if raw_colls is not None:
        if not isinstance(raw_colls, list):
            field = "CollectionConfigurations"
            raise HookConfigError(field_error_message(field, "a JSON list", raw_colls), field=field)
        names = []
        for i, entry in enumerate(raw_colls):
            entry = _dict_or_empty(entry, f"CollectionConfigurations[{i}]")
            name = entry.get("CollectionName")
            if not isinstance(name, str) or not name:
                field = f"CollectionConfigurations[{i}]['CollectionName']"
                raise HookConfigError(field_error_message(field, "a non-empty string", name), field=field)
            where = f"CollectionConfigurations[{name!r}]['CollectionParameters']"
            params = _dict_or_empty(entry.get("CollectionParameters"), where)
            modes = parse_mode_dicts(params, where=where, base=hook_full)
            collections.append(
                CollectionSettings(
                    name=name,
                    save_config=save_config_from_mode_dicts(modes, defaults),
                    reduction_config=ReductionConfig.from_dict(params, where=where) if "reductions" in params else None,
                    include_regex=tuple(_split(params["include_regex"])) if "include_regex" in params else (),
                    save_histogram=(
                        parse_bool(f"{where}['save_histogram']", params["save_histogram"])
                        if "save_histogram" in params
                        else None
                    ),
                )
            )
            names.append(name)
        include_collections = tuple(names)
    return HookSettings(
        out_dir=out_dir,
        export_tensorboard=export_tensorboard,
        tensorboard_dir=tensorboard_dir,
        reduction_config=reduction_config,
        save_config=save_config,
        include_regex=include_regex,
        include_collections=include_collections,
        save_all=save_all,
        include_workers=include_workers,
        collections=tuple(collections),
        sagemaker_job=sagemaker_job,
    )


def load_hook_settings(
    json_file_path: str | os.PathLike[str] | None,
    environ: Mapping[str, str],
    *,
    default_save_values: Mapping[str, Any] | None = None,
    paths: ContainerPaths | None = None,
) -> HookSettings:
    """Find, read and parse the hook's JSON config the way smdebug does.

    Raises:
        FileNotFoundError: no file at the resolved path (as smdebug).
        HookConfigError: invalid JSON or a bad value.
    """
    paths = paths or ContainerPaths()
    path = Path(
        json_file_path or environ.get(SMDEBUG_CONFIG_FILE_PATH_ENV) or paths.config_file(CONFIG_FILE_DEBUG_HOOK)
    )
    config = _read_json(path, "debug hook config")
    sagemaker_job = is_sagemaker_job(environ)
    tb_config = None
    if sagemaker_job:
        tb_path = Path(environ.get(TENSORBOARD_CONFIG_FILE_PATH_ENV) or paths.config_file(CONFIG_FILE_TENSORBOARD))
        if tb_path.is_file():
            tb_config = _dict_or_empty(_read_json(tb_path, "tensorboard output config"), "TensorBoardOutputConfig")
    settings = parse_hook_config(
        config,
        sagemaker_job=sagemaker_job,
        tensorboard_config=tb_config,
        default_save_values=default_save_values,
        paths=paths,
    )
    never_crash = parse_bool(HOOK_NEVER_CRASH_ENV, environ.get(HOOK_NEVER_CRASH_ENV, "false"))
    return attrs.evolve(settings, never_crash=never_crash)


DEFAULT_WRITER_NICE = 19


def writer_nice(environ: Mapping[str, str]) -> int:
    """The niceness of a hook's writer thread: ``$SAGEMAKER_DEBUGGER_EXT_WRITER_NICE``, an
    integer from 0 to 19, default 19 (see ``format/_background.py``).

    Raises:
        HookConfigError: naming the variable, when its value is not such an integer.
    """
    raw = environ.get(HOOK_WRITER_NICE_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_WRITER_NICE
    try:
        value = int(raw.strip())
    except ValueError:
        value = -1
    if not 0 <= value <= DEFAULT_WRITER_NICE:
        msg = field_error_message(HOOK_WRITER_NICE_ENV, "an integer from 0 to 19", raw)
        raise HookConfigError(msg, field=HOOK_WRITER_NICE_ENV, value=raw)
    return value


def writer_uncached(environ: Mapping[str, str]) -> bool:
    """Whether a hook writes its event files uncached (``format/_files.py``):
    ``$SAGEMAKER_DEBUGGER_EXT_UNCACHED_WRITES``, a boolean, default true.

    Raises:
        HookConfigError: naming the variable, when its value is not a boolean.
    """
    raw = environ.get(HOOK_UNCACHED_WRITES_ENV)
    if raw is None or not raw.strip():
        return True
    return parse_bool(HOOK_UNCACHED_WRITES_ENV, raw)
