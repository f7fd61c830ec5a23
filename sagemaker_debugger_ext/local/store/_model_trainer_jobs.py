"""SDK v3 ``ModelTrainer``'s request layout, run as a local job.

A ModelTrainer with ``source_code`` sends no ``sagemaker_program`` hyperparameter. Instead its
request runs ``/bin/bash -c ".../sm_drivers/sm_train.sh"`` (``AlgorithmSpecification.
ContainerEntrypoint``/``ContainerArguments``) and carries two channels: ``code`` (the files of
``SourceCode.source_dir``) and ``sm_drivers`` (the SDK's drivers, ``sm_train.sh``,
``sourcecode.json`` with the ``SourceCode`` and ``distributed.json`` with the
``DistributedConfig``). In the container, ``sm_train.sh`` sets up the environment
(``scripts/environment.py``) and starts a driver from ``/opt/ml/input/data/code``: the basic
script driver (``python <entry_script> --hp value ...``), the Torchrun driver, or
``SourceCode.command``.

Those drivers hard-code ``/opt/ml``; here the same choice is made from the same files and the
command is started in the job's host tree with the environment the drivers would set.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ..._exceptions import LocalJobInputError, StorageError, field_error_message
from ...storage import open_storage

__all__ = ["DRIVERS_CHANNEL", "DriverSpec", "driver_command", "is_model_trainer_request", "read_driver_spec"]

DRIVERS_CHANNEL = "sm_drivers"
CODE_CHANNEL = "code"
_SOURCE_CODE_JSON = "sourcecode.json"
_DISTRIBUTED_JSON = "distributed.json"
_TRAIN_SCRIPT = "sm_train.sh"
_DRIVER_RE = re.compile(r"distributed_drivers/([A-Za-z0-9_]+\.py)")
_DRIVERS = {"basic_script_driver.py": "basic", "torchrun_driver.py": "torchrun", "mpi_driver.py": "mpi"}


@attrs.frozen(kw_only=True)
class DriverSpec:
    """What ``sm_train.sh`` would run: ``driver`` is ``basic``, ``torchrun`` or ``command``."""

    driver: str
    entry_script: str | None
    command: str | None
    distributed: dict[str, Any]
    code_uri: str | None


def is_model_trainer_request(request: Mapping[str, Any]) -> bool:
    """A ModelTrainer request: a container entrypoint and the ``sm_drivers`` channel."""
    algorithm = request.get("AlgorithmSpecification") or {}
    names = {c.get("ChannelName") for c in request.get("InputDataConfig") or []}
    return bool(algorithm.get("ContainerEntrypoint")) and DRIVERS_CHANNEL in names


def _channel_uri(request: Mapping[str, Any], name: str) -> str | None:
    for item in request.get("InputDataConfig") or []:
        if item.get("ChannelName") == name:
            source = item.get("DataSource") or {}
            uri = (source.get("S3DataSource") or {}).get("S3Uri") or (source.get("FileDataSource") or {}).get("FileUri")
            return str(uri) if uri else None
    return None


def _read(drivers_uri: str, name: str) -> str:
    try:
        return open_storage(drivers_uri.rstrip("/")).read(name).decode("utf-8")
    except (StorageError, OSError, UnicodeDecodeError) as exc:
        msg = (
            f"the ModelTrainer request's {DRIVERS_CHANNEL!r} channel ({drivers_uri}) has no readable {name!r} "
            f"(the SDK writes it with the request): {exc}"
        )
        raise LocalJobInputError(msg) from exc


def _json_object(drivers_uri: str, name: str) -> dict[str, Any]:
    text = _read(drivers_uri, name)
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        msg = field_error_message(f"{DRIVERS_CHANNEL}/{name}", "a JSON object", text[:200]) + f": {exc}"
        raise LocalJobInputError(msg) from exc
    if not isinstance(value, dict):
        raise LocalJobInputError(field_error_message(f"{DRIVERS_CHANNEL}/{name}", "a JSON object", value))
    return value


def _relative_script(script: Any) -> str:
    if not isinstance(script, str) or not script or Path(script).is_absolute() or ".." in Path(script).parts:
        raise LocalJobInputError(
            field_error_message("SourceCode.entry_script", "a .py or .sh path inside source_dir", script)
        )
    if not script.endswith((".py", ".sh")):
        raise LocalJobInputError(field_error_message("SourceCode.entry_script", "a .py or .sh script", script))
    return script


def read_driver_spec(request: Mapping[str, Any]) -> DriverSpec:
    """Read ``sourcecode.json``, ``distributed.json`` and ``sm_train.sh`` from the ``sm_drivers`` channel.

    Raises:
        LocalJobInputError: a file missing or malformed, an entry script outside ``source_dir``,
            or a driver local mode does not run (MPI).
    """
    drivers_uri = _channel_uri(request, DRIVERS_CHANNEL)
    if drivers_uri is None:
        msg = field_error_message("InputDataConfig", f"a {DRIVERS_CHANNEL!r} channel with a URI", None)
        raise LocalJobInputError(msg)
    source_code = _json_object(drivers_uri, _SOURCE_CODE_JSON)
    distributed = _json_object(drivers_uri, _DISTRIBUTED_JSON)
    found = _DRIVER_RE.search(_read(drivers_uri, _TRAIN_SCRIPT))
    driver = _DRIVERS.get(found.group(1), found.group(1)) if found else "command"
    if driver not in ("basic", "torchrun", "command"):
        msg = field_error_message(
            "distributed", "Torchrun or none (local mode runs the basic and Torchrun drivers)", found and found.group(1)
        )
        raise LocalJobInputError(msg)
    command = source_code.get("command")
    if driver == "command":
        if not isinstance(command, str) or not command.strip():
            raise LocalJobInputError(field_error_message("SourceCode.command", "a command", command))
        args = source_code.get("args") or []
        command = " ".join([command, *(json.dumps(str(a)) for a in args)])
        entry = None
    else:
        entry = _relative_script(source_code.get("entry_script"))
    return DriverSpec(
        driver=driver,
        entry_script=entry,
        command=command if driver == "command" else None,
        distributed=distributed,
        code_uri=_channel_uri(request, CODE_CHANNEL),
    )


def driver_command(
    driver: DriverSpec,
    *,
    script: Path,
    args: Sequence[str],
    hosts: Sequence[str],
    rank: int,
    master_port: int,
    launcher: Sequence[str],
) -> list[str]:
    """The argv ``sm_train.sh``'s driver would run, with this Python (``launcher``: our trainer callbacks)."""
    if driver.driver == "command":
        return ["/bin/bash", "-c", str(driver.command)]
    if driver.driver == "torchrun":
        per_node = int(driver.distributed.get("process_count_per_node") or 1)
        return [sys.executable, "-m", "torch.distributed.run", f"--nnodes={len(hosts)}",
                f"--nproc_per_node={per_node}", "--master_addr=127.0.0.1", f"--master_port={master_port}",
                f"--node_rank={rank}", str(script), *args]  # fmt: skip
    if str(script).endswith(".sh"):
        return ["/bin/sh", str(script), *args]
    return [sys.executable, *launcher, str(script), *args]


def driver_env(
    driver: DriverSpec, *, code_dir: Path, data_dir: Path, output_dir: Path, hosts: Sequence[str], rank: int,
    master_port: int,
) -> dict[str, str]:  # fmt: skip
    """The variables ``scripts/environment.py`` adds to the training toolkit's (``SM_ENTRY_SCRIPT``, ...)."""
    env = {
        "SM_SOURCE_DIR": str(code_dir),
        "SM_INPUT_DATA_DIR": str(data_dir),
        "SM_OUTPUT_FAILURE": str(output_dir / "failure"),
        "SM_MASTER_ADDR": "127.0.0.1",
        "SM_MASTER_PORT": str(master_port),
        "SM_HOST_COUNT": str(len(hosts)),
        "SM_CURRENT_HOST_RANK": str(rank),
        "SM_NUM_NEURONS": "0",
        "SM_DISTRIBUTED_DRIVER_DIR": str(data_dir / DRIVERS_CHANNEL / "distributed_drivers"),
        "SM_DISTRIBUTED_CONFIG": json.dumps(driver.distributed),
    }
    if driver.entry_script:
        env["SM_ENTRY_SCRIPT"] = driver.entry_script
    return env
