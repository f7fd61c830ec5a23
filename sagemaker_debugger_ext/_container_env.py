"""The SageMaker training/processing container contract, as data.

Every ``/opt/ml`` path and every environment variable name that the platform and the
training toolkit use lives here and nowhere else. :class:`ContainerPaths` places the tree
under any root, so local mode builds it in a job folder and tests build it on ``tmp_path``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import attrs

__all__ = [
    "AUTO_CALLBACK_ENV",
    "CHECKPOINT_CONFIG_FILE_PATH_ENV",
    "CONFIG_FILE_DEBUG_HOOK",
    "CONFIG_FILE_HYPERPARAMETERS",
    "CONFIG_FILE_INPUT_DATA",
    "CONFIG_FILE_PROFILER",
    "CONFIG_FILE_RESOURCE",
    "CONFIG_FILE_TENSORBOARD",
    "DEBUGGER_BACKEND_ENV",
    "DEFAULT_ROOT",
    "EVENT_BUS_ENV",
    "EVENT_HANDLERS_ENV",
    "FAILURE_FILE_NAME",
    "HOOK_NEVER_CRASH_ENV",
    "HOOK_UNCACHED_WRITES_ENV",
    "HOOK_WRITER_NICE_ENV",
    "INCOMPLETE_STEP_WAIT_WINDOW_ENV",
    "LOCAL_HOME_ENV",
    "PROGRESS_SECONDS_ENV",
    "RANK_ENV",
    "RULE_JOB_REQUIREMENT_ENV",
    "SELF_HOSTED_SYNC_SECONDS_ENV",
    "SMDEBUG_CONFIG_FILE_PATH_ENV",
    "SMPROFILER_CONFIG_PATH_ENV",
    "SM_CHANNELS",
    "SM_CHANNEL_PREFIX",
    "SM_CURRENT_HOST",
    "SM_HOSTS",
    "SM_HPS",
    "SM_HP_PREFIX",
    "SM_INPUT_CONFIG_DIR",
    "SM_INPUT_DATA_CONFIG",
    "SM_INPUT_DIR",
    "SM_MODEL_DIR",
    "SM_MODULE_DIR",
    "SM_NETWORK_INTERFACE_NAME",
    "SM_NUM_CPUS",
    "SM_NUM_GPUS",
    "SM_OUTPUT_DATA_DIR",
    "SM_OUTPUT_DIR",
    "SM_RESOURCE_CONFIG",
    "SM_TRAINING_ENV",
    "SM_USER_ARGS",
    "SM_USER_ENTRY_POINT",
    "TENSORBOARD_CONFIG_FILE_PATH_ENV",
    "TRAINING_END_MARKER",
    "TRAINING_JOB_NAME_ENV",
    "USE_SMDEBUG_ENV",
    "WORLD_SIZE_ENV",
    "ContainerPaths",
    "is_sagemaker_job",
]

DEFAULT_ROOT = Path("/opt/ml")

# Config file names under <root>/input/config (as SageMaker writes them).
CONFIG_FILE_HYPERPARAMETERS = "hyperparameters.json"
CONFIG_FILE_INPUT_DATA = "inputdataconfig.json"
CONFIG_FILE_RESOURCE = "resourceconfig.json"
CONFIG_FILE_DEBUG_HOOK = "debughookconfig.json"
CONFIG_FILE_TENSORBOARD = "tensorboardoutputconfig.json"
CONFIG_FILE_PROFILER = "profilerconfig.json"
CONFIG_FILE_CHECKPOINT = "checkpointconfig.json"

# Environment variables read by smdebug-compatible hooks.
SMDEBUG_CONFIG_FILE_PATH_ENV = "SMDEBUG_CONFIG_FILE_PATH"
TENSORBOARD_CONFIG_FILE_PATH_ENV = "TENSORBOARD_CONFIG_FILE_PATH"
SMPROFILER_CONFIG_PATH_ENV = "SMPROFILER_CONFIG_PATH"
CHECKPOINT_CONFIG_FILE_PATH_ENV = "CHECKPOINT_CONFIG_FILE_PATH"
TRAINING_JOB_NAME_ENV = "TRAINING_JOB_NAME"
USE_SMDEBUG_ENV = "USE_SMDEBUG"
# Opt-in: the hook logs its own failures at warning level and stops saving instead of
# raising into the training loop (our addition; off unless set to a true value).
HOOK_NEVER_CRASH_ENV = "SAGEMAKER_DEBUGGER_EXT_NEVER_CRASH"
# The niceness of the hook's file-writing thread, 0-19 (our addition; default 19: the
# training's threads get the CPU first; 0 keeps the training's priority).
HOOK_WRITER_NICE_ENV = "SAGEMAKER_DEBUGGER_EXT_WRITER_NICE"
# Whether the hook writes its large event files (1 MiB and more) uncached (our addition;
# default true: Linux 6.14+'s RWF_DONTCACHE where supported, see format/_files.py).
HOOK_UNCACHED_WRITES_ENV = "SAGEMAKER_DEBUGGER_EXT_UNCACHED_WRITES"
# Whether the PyTorch hook may read CPU weights and gradients live instead of copying them
# (our addition; default true: see hooks/pytorch/_live.py).
HOOK_LIVE_READS_ENV = "SAGEMAKER_DEBUGGER_EXT_LIVE_READS"
# The Debugger backend of estimators on SageMaker: "service" or "self-hosted" (docs/cloud.md).
DEBUGGER_BACKEND_ENV = "SAGEMAKER_DEBUGGER_EXT_DEBUGGER_BACKEND"
# Self-hosted jobs: seconds between the training container's syncs of debug/profiler output to S3.
SELF_HOSTED_SYNC_SECONDS_ENV = "SAGEMAKER_DEBUGGER_EXT_SYNC_SECONDS"
# Self-hosted rule jobs: the pip requirement that installs this package in the processing image.
RULE_JOB_REQUIREMENT_ENV = "SAGEMAKER_DEBUGGER_EXT_REQUIREMENT"
# Local mode's job store (default ~/.sagemaker-debugger-ext).
LOCAL_HOME_ENV = "SAGEMAKER_DEBUGGER_EXT_HOME"
# Event handlers for every local job started from this environment: a JSON array (of references
# or {"Handler": ..., "Pattern": ..., "TimeoutSeconds": ...} objects) or comma-separated references.
EVENT_HANDLERS_ENV = "SAGEMAKER_DEBUGGER_EXT_EVENT_HANDLERS"
# Name of an EventBridge bus that receives every local job event (PutEvents).
EVENT_BUS_ENV = "SAGEMAKER_DEBUGGER_EXT_EVENT_BUS"
# Seconds between fit()'s progress lines (default 10).
PROGRESS_SECONDS_ENV = "SAGEMAKER_DEBUGGER_EXT_PROGRESS_SECONDS"
# 0 / false / no / off in a job's environment: trainers are not given the Debugger callback.
AUTO_CALLBACK_ENV = "SAGEMAKER_DEBUGGER_EXT_AUTO_CALLBACK"
# smdebug's reader setting, under smdebug's name: steps after which an incomplete step is complete.
INCOMPLETE_STEP_WAIT_WINDOW_ENV = "SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW"

# Distributed training (torch.distributed's launcher variables).
RANK_ENV = "RANK"
WORLD_SIZE_ENV = "WORLD_SIZE"

# Environment variables the SageMaker training toolkit gives a script.
SM_MODEL_DIR = "SM_MODEL_DIR"
SM_CHANNELS = "SM_CHANNELS"
SM_CHANNEL_PREFIX = "SM_CHANNEL_"
SM_HPS = "SM_HPS"
SM_HP_PREFIX = "SM_HP_"
SM_OUTPUT_DATA_DIR = "SM_OUTPUT_DATA_DIR"
SM_OUTPUT_DIR = "SM_OUTPUT_DIR"
SM_INPUT_DIR = "SM_INPUT_DIR"
SM_INPUT_CONFIG_DIR = "SM_INPUT_CONFIG_DIR"
SM_INPUT_DATA_CONFIG = "SM_INPUT_DATA_CONFIG"
SM_RESOURCE_CONFIG = "SM_RESOURCE_CONFIG"
SM_HOSTS = "SM_HOSTS"
SM_CURRENT_HOST = "SM_CURRENT_HOST"
SM_NUM_CPUS = "SM_NUM_CPUS"
SM_NUM_GPUS = "SM_NUM_GPUS"
SM_TRAINING_ENV = "SM_TRAINING_ENV"
SM_USER_ENTRY_POINT = "SM_USER_ENTRY_POINT"
SM_USER_ARGS = "SM_USER_ARGS"
SM_MODULE_DIR = "SM_MODULE_DIR"
SM_NETWORK_INTERFACE_NAME = "SM_NETWORK_INTERFACE_NAME"

# Marker file at a trial's root once training has ended.
TRAINING_END_MARKER = "training_job_end.ts"
FAILURE_FILE_NAME = "failure"  # <output dir>/failure: why a failed job failed


@attrs.frozen(kw_only=True)
class ContainerPaths:
    """The ``/opt/ml`` tree of one training container, placed under ``root``.

    .. versionadded:: 0.1.0
    """

    root: Path = attrs.field(default=DEFAULT_ROOT, converter=Path)

    @property
    def input_dir(self) -> Path:
        """``<root>/input``."""
        return self.root / "input"

    @property
    def input_config_dir(self) -> Path:
        """``<root>/input/config``: the JSON files SageMaker writes."""
        return self.input_dir / "config"

    @property
    def input_data_dir(self) -> Path:
        """``<root>/input/data``: one folder per channel."""
        return self.input_dir / "data"

    @property
    def model_dir(self) -> Path:
        """``<root>/model``: packed into model.tar.gz at the end."""
        return self.root / "model"

    @property
    def output_dir(self) -> Path:
        """``<root>/output``."""
        return self.root / "output"

    @property
    def output_data_dir(self) -> Path:
        """``<root>/output/data``."""
        return self.output_dir / "data"

    @property
    def failure_file(self) -> Path:
        """``<root>/output/failure``: the failure reason a failed job leaves."""
        return self.output_dir / FAILURE_FILE_NAME

    @property
    def tensors_dir(self) -> Path:
        """``<root>/output/tensors``: the default DebugHookConfig LocalPath."""
        return self.output_dir / "tensors"

    @property
    def tensorboard_dir(self) -> Path:
        """``<root>/output/tensorboard``: the default TensorBoardOutputConfig LocalPath."""
        return self.output_dir / "tensorboard"

    @property
    def profiler_dir(self) -> Path:
        """``<root>/output/profiler``: where profiler metrics are written."""
        return self.output_dir / "profiler"

    @property
    def code_dir(self) -> Path:
        """``<root>/code``: the user's source_dir / entry point."""
        return self.root / "code"

    @property
    def checkpoints_dir(self) -> Path:
        """``<root>/checkpoints``."""
        return self.root / "checkpoints"

    def config_file(self, name: str) -> Path:
        """Path of one of the ``CONFIG_FILE_*`` files under ``input/config``."""
        return self.input_config_dir / name

    def channel_dir(self, channel: str) -> Path:
        """``<root>/input/data/<channel>``."""
        return self.input_data_dir / channel


def is_sagemaker_job(environ: Mapping[str, str] | None = None) -> bool:
    """True inside a SageMaker (or local-mode) training job: ``TRAINING_JOB_NAME`` is set and not empty."""
    return bool((os.environ if environ is None else environ).get(TRAINING_JOB_NAME_ENV))
