"""The training process of the emulated SageMaker XGBoost algorithm container (one host).

Reads ``hyperparameters.json`` and ``inputdataconfig.json`` from the host's ``/opt/ml``
tree, loads ``train`` (and ``validation``), trains with the installed xgboost, and saves
``<model dir>/xgboost-model`` (a pickled Booster before the 1.3 images, ``save_model``
from 1.3 on, as the container). With a ``debughookconfig.json``, the XGBoost hook is built
from it and given the hyperparameters, the training data (SHAP) and the validation data
(predictions, labels), as the container's Debugger integration does.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import xgboost as xgb

from ..._container_env import (
    CONFIG_FILE_DEBUG_HOOK,
    CONFIG_FILE_HYPERPARAMETERS,
    CONFIG_FILE_INPUT_DATA,
    ContainerPaths,
)
from ..._exceptions import LocalJobInputError
from ...hooks.xgboost._hook import Hook
from ._channels import validate_channels
from ._data import load_dmatrix
from ._hyperparameters import CONTAINER_ONLY, validate_hyperparameters

__all__ = ["MODEL_NAME", "main", "train"]

MODEL_NAME = "xgboost-model"


def _uses_pickle(version: str) -> bool:
    major, _, minor = version.partition("-")[0].partition(".")
    return (int(major), int(minor or 0)) < (1, 3)


def _params(hps: dict[str, Any]) -> dict[str, Any]:
    params = {k: v for k, v in hps.items() if k not in CONTAINER_ONLY and k != "silent"}
    if params.get("tree_method") == "gpu_hist":
        params["tree_method"] = "hist"  # local mode trains on the CPU
    if isinstance(params.get("updater"), list):
        params["updater"] = ",".join(params["updater"])
    tuning = hps.get("_tuning_objective_metric")
    if tuning:
        metric = str(tuning).rpartition(":")[2]
        metrics = list(params.get("eval_metric") or [])
        params["eval_metric"] = metrics + ([metric] if metric not in metrics else [])
    return params


def _debug_hook(paths: ContainerPaths, hps: dict[str, Any], dtrain: xgb.DMatrix, dval: xgb.DMatrix | None) -> Any:
    config = paths.config_file(CONFIG_FILE_DEBUG_HOOK)
    if not config.is_file():
        return None
    hook = Hook.create_from_json_file(config)
    hook.hyperparameters = dict(hps)
    hook.train_data = dtrain
    if dval is not None:
        hook.validation_data = dval
    print("Debug hook created from config", flush=True)
    return hook


def train(paths: ContainerPaths, version: str) -> Path:
    """Train on the host rooted at ``paths``; returns the saved model's path.

    Raises:
        LocalJobInputError: bad hyperparameters, channels or data.
    """
    raw = json.loads(paths.config_file(CONFIG_FILE_HYPERPARAMETERS).read_text())
    hps = validate_hyperparameters({str(k): str(v) for k, v in raw.items()}, version)
    data_config = json.loads(paths.config_file(CONFIG_FILE_INPUT_DATA).read_text())
    fmt = validate_channels([{"ChannelName": name, **cfg} for name, cfg in data_config.items()])
    csv_weights = int(hps.get("csv_weights", 0))
    dtrain = load_dmatrix(paths.channel_dir("train"), fmt, csv_weights=csv_weights)
    if dtrain is None:
        msg = f"No data in training channel path {paths.channel_dir('train')}"
        raise LocalJobInputError(msg)
    dval = None
    if "validation" in data_config:
        dval = load_dmatrix(paths.channel_dir("validation"), fmt, csv_weights=csv_weights)
        if dval is None:
            msg = f"No data in validation channel path {paths.channel_dir('validation')}"
            raise LocalJobInputError(msg)
    print(f"Train matrix has {dtrain.num_row()} rows and {dtrain.num_col()} columns", flush=True)
    params = _params(hps)
    watchlist = [(dtrain, "train")] + ([(dval, "validation")] if dval is not None else [])
    # The container gives the hook its training config: everything but what it popped.
    hook_hps = {**{k: v for k, v in hps.items() if k not in ("num_round", "save_model_on_termination")}, **params}
    hook = _debug_hook(paths, hook_hps, dtrain, dval)
    callbacks = [hook] if hook is not None else []
    booster = xgb.train(params, dtrain, num_boost_round=int(hps["num_round"]), evals=watchlist,
                        early_stopping_rounds=hps.get("early_stopping_rounds"), callbacks=callbacks,
                        verbose_eval=True)  # fmt: skip
    if hook is not None:
        hook.close()
    paths.model_dir.mkdir(parents=True, exist_ok=True)
    location = paths.model_dir / MODEL_NAME
    if _uses_pickle(version):
        with open(location, "wb") as fh:
            pickle.dump(booster, fh, protocol=4)
    else:
        location.write_bytes(bytes(booster.save_raw(raw_format="ubj")))  # save_model's default format
    print(f"Stored trained model at {location}", flush=True)
    return location


def main(argv: Sequence[str] | None = None) -> int:
    """Process boundary: train, or write ``/opt/ml/output/failure`` and exit 1."""
    parser = argparse.ArgumentParser(prog="sagemaker-xgboost-algorithm (local)")
    parser.add_argument("--root", required=True, help="the host's /opt/ml folder")
    parser.add_argument("--version", required=True, help="the algorithm image's version, such as 1.7-1")
    args = parser.parse_args(argv)
    paths = ContainerPaths(root=Path(args.root))
    try:
        train(paths, args.version)
    except LocalJobInputError as exc:
        _fail(paths, f"ClientError: {exc}")
        return 1
    except Exception as exc:  # noqa: BLE001 - the process boundary: report, never hide
        traceback.print_exc()
        _fail(paths, f"AlgorithmError: XGB train call failed with exception: {type(exc).__name__}: {exc}")
        return 1
    return 0


def _fail(paths: ContainerPaths, message: str) -> None:
    print(message, file=sys.stderr, flush=True)
    paths.failure_file.parent.mkdir(parents=True, exist_ok=True)
    paths.failure_file.write_text(message)
