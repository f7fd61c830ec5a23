"""``smdebug.core.config_constants``: the names and environment variables smdebug 1.0.34 uses.

Values are those smdebug uses (file names, environment variable names, defaults), so
scripts that build paths or set variables from them keep working.
"""

from __future__ import annotations

from .._container_env import (
    CHECKPOINT_CONFIG_FILE_PATH_ENV,
    INCOMPLETE_STEP_WAIT_WINDOW_ENV,
    SMDEBUG_CONFIG_FILE_PATH_ENV,
    TENSORBOARD_CONFIG_FILE_PATH_ENV,
    TRAINING_END_MARKER,
)

CONFIG_FILE_PATH_ENV_STR = SMDEBUG_CONFIG_FILE_PATH_ENV
TENSORBOARD_CONFIG_FILE_PATH_ENV_STR = TENSORBOARD_CONFIG_FILE_PATH_ENV
CHECKPOINT_CONFIG_FILE_PATH_ENV_VAR = CHECKPOINT_CONFIG_FILE_PATH_ENV
DEFAULT_WORKER_NAME = "worker_0"
DEFAULT_CONFIG_FILE_PATH = "/opt/ml/input/config/debughookconfig.json"
DEFAULT_RESOURCE_CONFIG_FILE = "/opt/ml/input/config/resourceconfig.json"
DEFAULT_SAGEMAKER_OUTDIR = "/opt/ml/output/tensors"
DEFAULT_SAGEMAKER_METRICS_PATH = "SAGEMAKER_METRICS_DIRECTORY"
DEFAULT_SAGEMAKER_TENSORBOARD_PATH = "/opt/ml/input/config/tensorboardoutputconfig.json"
DEFAULT_CHECKPOINT_CONFIG_FILE = "/opt/ml/input/config/checkpointconfig.json"
DEFAULT_COLLECTIONS_FILE_NAME = "worker_0_collections.json"
DEFAULT_SAVED_COLLECTIONS = ["losses"]
TRAINING_END_FILE_NAME = TRAINING_END_MARKER

EXPORT_TENSORBOARD_KEY = "export_tensorboard"
TENSORBOARD_DIR_KEY = "tensorboard_dir"
CONFIG_REDUCTION_CONFIGS_KEY = "reduction_configs"
CONFIG_SAVE_CONFIGS_KEY = "save_configs"
CONFIG_OUTDIR_KEY = "LocalPath"
CONFIG_HOOK_PARAMS_KEY = "HookParameters"
CONFIG_COLLECTION_CONFIG_KEY = "CollectionConfigurations"
CONFIG_COLLECTION_NAME_KEY = "CollectionName"
CONFIG_COLLECTION_PARAMS_KEY = "CollectionParameters"
CONFIG_DRYRUN_KEY = "dry_run"
CONFIG_RDN_CFG_KEY = "reduction_config"
CONFIG_INCLUDE_REGEX_KEY = "include_regex"
CONFIG_INCLUDE_WORKERS_KEY = "include_workers"
CONFIG_SAVE_ALL_KEY = "save_all"

LOG_DUPLICATION_THRESHOLD = 3
INCOMPLETE_STEP_WAIT_WINDOW_KEY = INCOMPLETE_STEP_WAIT_WINDOW_ENV
INCOMPLETE_STEP_WAIT_WINDOW_DEFAULT = 1000
MISSING_EVENT_FILE_RETRY_LIMIT_KEY = "SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT"
MISSING_EVENT_FILE_RETRY_LIMIT = 100
TRAINING_END_DELAY_REFRESH_KEY = "SMDEBUG_TRAINING_END_DELAY_REFRESH"
TRAINING_END_DELAY_REFRESH_DEFAULT = 1

__all__ = [name for name in sorted(dir()) if name.isupper() and not name.endswith("_ENV")]
