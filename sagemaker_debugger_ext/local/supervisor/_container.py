"""Container emulation: the ``/opt/ml`` tree of one host and the environment of its script.

Config files are written as SageMaker writes them; the LocalPaths inside them point at the
job's shared artifact folders, so every host's hook writes into one trial (worker names
differ) and the rule processes read it in real time.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ..._container_env import (
    CONFIG_FILE_DEBUG_HOOK,
    CONFIG_FILE_HYPERPARAMETERS,
    CONFIG_FILE_INPUT_DATA,
    CONFIG_FILE_PROFILER,
    CONFIG_FILE_RESOURCE,
    CONFIG_FILE_TENSORBOARD,
    SM_CHANNEL_PREFIX,
    SM_CHANNELS,
    SM_CURRENT_HOST,
    SM_HOSTS,
    SM_HP_PREFIX,
    SM_HPS,
    SM_INPUT_CONFIG_DIR,
    SM_INPUT_DATA_CONFIG,
    SM_INPUT_DIR,
    SM_MODEL_DIR,
    SM_MODULE_DIR,
    SM_NETWORK_INTERFACE_NAME,
    SM_NUM_CPUS,
    SM_NUM_GPUS,
    SM_OUTPUT_DATA_DIR,
    SM_OUTPUT_DIR,
    SM_RESOURCE_CONFIG,
    SM_TRAINING_ENV,
    SM_USER_ARGS,
    SM_USER_ENTRY_POINT,
    SMDEBUG_CONFIG_FILE_PATH_ENV,
    SMPROFILER_CONFIG_PATH_ENV,
    TENSORBOARD_CONFIG_FILE_PATH_ENV,
    TRAINING_JOB_NAME_ENV,
    ContainerPaths,
)
from ...format._files import atomic_write
from ...integrations import _autopatch as trainer_integrations
from .. import _xgb_algorithm as xgboost_algorithm
from ..store import _model_trainer_jobs as model_trainer
from ..store._job_spec import JobSpec, cpu_count, profiler_enabled
from ..store._job_store import JobPaths

__all__ = ["HostSetup", "TrainingEnv", "build_host", "to_cmd_args"]


def _enc(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))


def to_cmd_args(hyperparameters: Mapping[str, Any]) -> list[str]:
    """Hyperparameters as script-mode command-line arguments (``--name value``, sorted)."""
    args: list[str] = []
    for key in sorted(hyperparameters):
        args += [f"--{key}", _enc(hyperparameters[key])]
    return args


@attrs.frozen(kw_only=True)
class TrainingEnv:
    """The environment the SageMaker training toolkit gives a script, for one host.

    ``to_env_vars()`` renders it; non-string values are JSON with sorted keys and compact
    separators.
    """

    job_name: str
    paths: ContainerPaths
    current_host: str
    hosts: tuple[str, ...]
    rank: int
    master_port: int
    tf_config: dict[str, Any] | None = None
    entry_point: str
    hyperparameters: dict[str, Any]
    channels: tuple[str, ...]
    input_data_config: dict[str, Any]
    resource_config: dict[str, Any]
    num_cpus: int
    num_gpus: int
    config_files: dict[str, str]

    def training_env(self) -> dict[str, Any]:
        """The ``SM_TRAINING_ENV`` document."""
        return {
            "additional_framework_parameters": {},
            "channel_input_dirs": {c: str(self.paths.channel_dir(c)) for c in self.channels},
            "current_host": self.current_host,
            "framework_module": None,
            "hosts": list(self.hosts),
            "hyperparameters": self.hyperparameters,
            "input_config_dir": str(self.paths.input_config_dir),
            "input_data_config": self.input_data_config,
            "input_dir": str(self.paths.input_dir),
            "is_master": self.rank == 0,
            "job_name": self.job_name,
            "log_level": 20,
            "master_hostname": self.hosts[0],
            "model_dir": str(self.paths.model_dir),
            "module_dir": str(self.paths.code_dir),
            "module_name": Path(self.entry_point).stem,
            "network_interface_name": "lo",
            "num_cpus": self.num_cpus,
            "num_gpus": self.num_gpus,
            "output_data_dir": str(self.paths.output_data_dir),
            "output_dir": str(self.paths.output_dir),
            "output_intermediate_dir": str(self.paths.output_dir / "intermediate"),
            "resource_config": self.resource_config,
            "user_entry_point": self.entry_point,
        }

    def to_env_vars(self) -> dict[str, str]:
        """Environment variables for the training process."""
        env = {
            TRAINING_JOB_NAME_ENV: self.job_name,
            SM_MODEL_DIR: str(self.paths.model_dir),
            SM_CHANNELS: _enc(sorted(self.channels)),
            SM_HPS: _enc(self.hyperparameters),
            SM_OUTPUT_DATA_DIR: str(self.paths.output_data_dir),
            SM_OUTPUT_DIR: str(self.paths.output_dir),
            SM_INPUT_DIR: str(self.paths.input_dir),
            SM_INPUT_CONFIG_DIR: str(self.paths.input_config_dir),
            SM_INPUT_DATA_CONFIG: _enc(self.input_data_config),
            SM_RESOURCE_CONFIG: _enc(self.resource_config),
            SM_HOSTS: _enc(list(self.hosts)),
            SM_CURRENT_HOST: self.current_host,
            SM_NUM_CPUS: str(self.num_cpus),
            SM_NUM_GPUS: str(self.num_gpus),
            SM_USER_ENTRY_POINT: self.entry_point,
            SM_USER_ARGS: _enc(to_cmd_args(self.hyperparameters)),
            SM_MODULE_DIR: str(self.paths.code_dir),
            SM_NETWORK_INTERFACE_NAME: "lo",
            SM_TRAINING_ENV: _enc(self.training_env()),
            "SM_MODULE_NAME": Path(self.entry_point).stem,
            "SM_LOG_LEVEL": "20",
            "SM_CURRENT_INSTANCE_TYPE": str(self.resource_config.get("current_instance_type", "local")),
            "RANK": str(self.rank),
            "WORLD_SIZE": str(len(self.hosts)),
            "LOCAL_RANK": str(self.rank),
            "LOCAL_WORLD_SIZE": str(len(self.hosts)),
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(self.master_port),
            "PYTHONUNBUFFERED": "1",
        }
        if self.tf_config is not None:
            env["TF_CONFIG"] = json.dumps(self.tf_config)
        for channel in self.channels:
            env[f"{SM_CHANNEL_PREFIX}{channel.upper()}"] = str(self.paths.channel_dir(channel))
        for key, value in self.hyperparameters.items():
            env[f"{SM_HP_PREFIX}{key.upper()}"] = _enc(value)
        env.update(self.config_files)
        return env


@attrs.frozen(kw_only=True)
class HostSetup:
    """One prepared host: its tree, its command and its environment."""

    host: str
    paths: ContainerPaths
    argv: list[str]
    env: dict[str, str]


def _write(path: Path, data: Any) -> None:
    # atomic: under torchrun every rank's launcher writes the same file while others read it
    atomic_write(path, json.dumps(data, indent=1, sort_keys=True))


def _link_channel(paths: ContainerPaths, name: str, local_source: Path) -> None:
    target = paths.channel_dir(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    if local_source.is_dir():
        target.symlink_to(local_source, target_is_directory=True)
    else:
        target.mkdir(exist_ok=True)
        (target / local_source.name).symlink_to(local_source)


def _config_files(request: Mapping[str, Any], job: JobPaths, paths: ContainerPaths) -> dict[str, str]:
    env: dict[str, str] = {}
    hook = request.get("DebugHookConfig")
    if hook:
        data = {**hook, "LocalPath": str(job.debug_dir)}
        _write(paths.config_file(CONFIG_FILE_DEBUG_HOOK), data)
        env[SMDEBUG_CONFIG_FILE_PATH_ENV] = str(paths.config_file(CONFIG_FILE_DEBUG_HOOK))
    tb = request.get("TensorBoardOutputConfig")
    if tb:
        _write(paths.config_file(CONFIG_FILE_TENSORBOARD), {**tb, "LocalPath": str(job.tensorboard_dir)})
        env[TENSORBOARD_CONFIG_FILE_PATH_ENV] = str(paths.config_file(CONFIG_FILE_TENSORBOARD))
    if profiler_enabled(request):
        cfg = dict(request["ProfilerConfig"])
        params = dict(cfg.get("ProfilingParameters") or {})
        params.update({"ProfilerEnabled": True, "LocalPath": str(job.profiler_dir)})
        cfg["ProfilingParameters"] = params
        cfg["DisableProfiler"] = False
        _write(paths.config_file(CONFIG_FILE_PROFILER), cfg)
        env[SMPROFILER_CONFIG_PATH_ENV] = str(paths.config_file(CONFIG_FILE_PROFILER))
    return env


def build_host(
    *,
    spec: JobSpec,
    request: Mapping[str, Any],
    job: JobPaths,
    rank: int,
    master_port: int,
    code_dir: Path,
    channel_sources: Mapping[str, Path],
    base_env: Mapping[str, str],
    worker_ports: Sequence[int] = (),
) -> HostSetup:
    """Create the ``/opt/ml`` tree of host ``rank`` and return how to start its script.

    Args:
        spec: the resolved job.
        request: the CreateTrainingJob request (for the Debugger config files).
        job: the job's folder.
        rank: 0-based host index.
        master_port: torch.distributed rendezvous port on 127.0.0.1.
        code_dir: local folder holding the entry point.
        channel_sources: channel name -> local file or folder (downloaded if it was s3://).
        base_env: environment of the supervisor, extended for the script.
        worker_ports: one free port on 127.0.0.1 per host, for ``TF_CONFIG``'s cluster.
    """
    hosts = tuple(spec.hosts)
    host = hosts[rank]
    paths = ContainerPaths(root=job.host_root(host))
    for folder in (paths.input_config_dir, paths.input_data_dir, paths.model_dir, paths.output_data_dir):
        folder.mkdir(parents=True, exist_ok=True)
    if not paths.code_dir.exists():
        paths.code_dir.symlink_to(code_dir, target_is_directory=True)
    for name, source in channel_sources.items():
        _link_channel(paths, name, source)
    input_data_config = {
        c.name: {
            "TrainingInputMode": "File",
            "S3DistributionType": "FullyReplicated",
            "RecordWrapperType": "None",
            **({"ContentType": c.content_type} if c.content_type else {}),
        }
        for c in spec.channels
    }
    resource_config = {
        "current_host": host,
        "current_instance_type": spec.instance_type,
        "current_group_name": "homogeneousCluster",
        "hosts": list(hosts),
        "instance_groups": [
            {"instance_group_name": "homogeneousCluster", "instance_type": spec.instance_type, "hosts": list(hosts)}
        ],
        "network_interface_name": "lo",
    }
    _write(paths.config_file(CONFIG_FILE_HYPERPARAMETERS), spec.hyperparameters)
    _write(paths.config_file(CONFIG_FILE_INPUT_DATA), input_data_config)
    _write(paths.config_file(CONFIG_FILE_RESOURCE), resource_config)
    training_env = TrainingEnv(
        job_name=spec.job_name,
        paths=paths,
        current_host=host,
        hosts=hosts,
        rank=rank,
        master_port=master_port,
        tf_config=tf_config(spec.hyperparameters, rank, worker_ports),
        entry_point=spec.entry_point,
        hyperparameters=spec.user_hyperparameters,
        channels=tuple(c.name for c in spec.channels),
        input_data_config=input_data_config,
        resource_config=resource_config,
        num_cpus=cpu_count(),
        num_gpus=0 if spec.instance_type != "local_gpu" else 1,
        config_files=_config_files(request, job, paths),
    )
    env = dict(base_env)
    env.update(spec.environment)
    env.update(training_env.to_env_vars())
    pythonpath = [str(paths.code_dir), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in pythonpath if p)
    script = paths.code_dir / spec.entry_point
    if spec.algorithm_version is not None:
        argv = [sys.executable, "-m", xgboost_algorithm.MODULE, "--root", str(paths.root),
                "--version", spec.algorithm_version]  # fmt: skip
        return HostSetup(host=host, paths=paths, argv=argv, env=env)
    if spec.driver is not None:  # an SDK v3 ModelTrainer job: what its sm_train.sh would start
        env.update(model_trainer.driver_env(spec.driver, code_dir=paths.code_dir, data_dir=paths.input_data_dir,
                                            output_dir=paths.output_dir, hosts=hosts, rank=rank,
                                            master_port=master_port))  # fmt: skip
        env["PATH"] = os.pathsep.join(p for p in (os.path.dirname(sys.executable), env.get("PATH", "")) if p)
        argv = model_trainer.driver_command(spec.driver, script=script, args=to_cmd_args(spec.user_hyperparameters),
                                            hosts=hosts, rank=rank, master_port=master_port,
                                            launcher=trainer_integrations.launcher_args(env))  # fmt: skip
        return HostSetup(host=host, paths=paths, argv=argv, env=env)
    if spec.entry_point.endswith(".sh"):
        argv = ["/bin/sh", str(script)]
    else:  # with a Debugger config, through the launcher that adds the trainer callbacks
        argv = [sys.executable, *trainer_integrations.launcher_args(env), str(script)]
    argv += to_cmd_args(spec.user_hyperparameters)
    return HostSetup(host=host, paths=paths, argv=argv, env=env)


MWMS_HYPERPARAMETER = "sagemaker_multi_worker_mirrored_strategy_enabled"


def tf_config(hyperparameters: Mapping[str, str], rank: int, worker_ports: Sequence[int]) -> dict[str, Any] | None:
    """``TF_CONFIG`` of host ``rank`` as SageMaker's TensorFlow container sets it for
    ``distribution={"multi_worker_mirrored_strategy": {"enabled": True}}`` (the SDK passes
    the hyperparameter ``sagemaker_multi_worker_mirrored_strategy_enabled``): every host a
    ``worker``, this one at index ``rank``. Hosts share 127.0.0.1 here, so each has its own port.
    None when the job does not ask for MultiWorkerMirroredStrategy."""
    enabled = str(hyperparameters.get(MWMS_HYPERPARAMETER, "false")).strip('"').lower() == "true"
    if not enabled or not worker_ports:
        return None
    workers = [f"127.0.0.1:{port}" for port in worker_ports]
    return {"cluster": {"worker": workers}, "environment": "cloud", "task": {"type": "worker", "index": rank}}
