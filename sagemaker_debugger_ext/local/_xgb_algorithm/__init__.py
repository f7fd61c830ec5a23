"""Local emulation of the SageMaker XGBoost algorithm container (the built-in algorithm).

A job whose ``TrainingImage`` is the algorithm's image (``sagemaker.image_uris.retrieve(
"xgboost", region, "0.90-2" | "1.x-y" | ...)``, repository ``sagemaker-xgboost``) and that
has no entry point runs this instead of a script: hyperparameters and channels are checked
before anything starts (:func:`check_request`), then ``python -m`` this package trains.
The modules import xgboost only in the training process.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..._exceptions import LocalJobInputError, field_error_message
from ._channels import validate_channels
from ._hyperparameters import validate_hyperparameters

__all__ = ["MODULE", "algorithm_version", "check_request"]

MODULE = "sagemaker_debugger_ext.local._xgb_algorithm"
# <account>.dkr.ecr.<region>.amazonaws.com[.cn]/sagemaker-xgboost:<version>[-cpu-py3|...]
_IMAGE = re.compile(r"^(?:[^/]+/)?sagemaker-xgboost:(?P<version>\d+\.\d+-\d+)(?:-[A-Za-z0-9.\-]+)?$")


def algorithm_version(image: str | None) -> str | None:
    """The algorithm version (``1.7-1``) when ``image`` is the XGBoost algorithm image."""
    match = _IMAGE.match(image or "")
    return match.group("version") if match else None


def check_request(request: Mapping[str, Any]) -> str | None:
    """The algorithm version when the request runs the built-in XGBoost algorithm, checked.

    Returns ``None`` for any other image.

    Raises:
        LocalJobInputError: bad hyperparameters or channels, or more than one instance
            (the container's distributed training is not emulated), naming the field.
    """
    image = (request.get("AlgorithmSpecification") or {}).get("TrainingImage")
    version = algorithm_version(image)
    if version is None:
        return None
    hps = {str(k): str(v) for k, v in (request.get("HyperParameters") or {}).items()}
    validate_hyperparameters(hps, version)
    validate_channels(list(request.get("InputDataConfig") or []))
    count = (request.get("ResourceConfig") or {}).get("InstanceCount") or 1
    if count != 1:
        allowed = "1 for the SageMaker XGBoost algorithm in local mode (distributed training is not emulated)"
        raise LocalJobInputError(field_error_message("ResourceConfig.InstanceCount", allowed, count))
    return version
