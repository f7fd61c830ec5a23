"""Synthetic trials written with our own StepWriter (shared by the rules and reports tests)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from sagemaker_debugger_ext.format import (
    StepWriter,
    write_collections_file,
    write_training_end,
)
from sagemaker_debugger_ext.modes import ModeKeys

TrialSteps = Mapping[int, Mapping[str, Any]]


def write_trial(
    root: Path,
    steps: TrialSteps,
    *,
    collections: Mapping[str, list[str]] | None = None,
    modes: Mapping[int, tuple[ModeKeys, int]] | None = None,
    end: bool = True,
) -> Path:
    """Write ``{global_step: {tensor: value}}`` as a one-worker trial under ``root``.

    ``collections`` maps a collection name to include regexes; ``modes`` gives
    (mode, mode_step) per global step (default TRAIN, mode_step = global step).
    """
    root.mkdir(parents=True, exist_ok=True)
    body = {}
    for name, regexes in (collections or {}).items():
        body[name] = {
            "name": name,
            "include_regex": list(regexes),
            "tensor_names": [],
            "reduction_config": None,
            "save_config": None,
            "save_histogram": False,
        }
    body.setdefault(
        "default",
        {
            "name": "default",
            "include_regex": [],
            "tensor_names": [],
            "reduction_config": None,
            "save_config": None,
            "save_histogram": False,
        },
    )
    write_collections_file(root, "worker_0", body, num_workers=1)
    for g in sorted(steps):
        mode, mode_step = (modes or {}).get(g, (ModeKeys.TRAIN, g))
        with StepWriter(root, global_step=g, worker="worker_0", mode=mode, mode_step=mode_step) as w:
            for name, value in steps[g].items():
                w.write_tensor(name, np.asarray(value))
    if end:
        write_training_end(root)
    return root


def loss_epochs(train: list[list[float]], val: list[list[float]]) -> tuple[dict[int, Any], dict[int, Any]]:
    """Steps and modes of a ``loss`` tensor: per epoch, its TRAIN steps (``train[e]``), then an
    evaluation pass (``val[e]``, EVAL steps); mode steps count on across epochs."""
    steps: dict[int, Any] = {}
    modes: dict[int, Any] = {}
    g = t = e = 0
    for tr, va in zip(train, val, strict=True):
        for x in tr:
            steps[g], modes[g] = {"loss": np.float32(x)}, (ModeKeys.TRAIN, t)
            g, t = g + 1, t + 1
        for x in va:
            steps[g], modes[g] = {"loss": np.float32(x)}, (ModeKeys.EVAL, e)
            g, e = g + 1, e + 1
    return steps, modes


def evaluation_passes(shares: list[float], n: int, seed: int = 0) -> tuple[dict[int, Any], dict[int, Any]]:
    """Steps and modes of a classifier: a TRAIN step then one evaluation pass (one step) per epoch;
    predicted class 0 is right ``shares[e]`` of ``n`` times in pass e (the rest are label 1);
    120 samples of class 1 predicted right."""
    rng = np.random.default_rng(seed)
    steps: dict[int, Any] = {}
    modes: dict[int, Any] = {}
    for e, share in enumerate(shares):
        right = round(share * n)
        y = np.array([0] * right + [1] * (n - right) + [1] * 120)
        p = np.array([0] * n + [1] * 120)
        order = rng.permutation(y.size)
        steps[2 * e], modes[2 * e] = {"labels": y, "predictions": y}, (ModeKeys.TRAIN, e)
        steps[2 * e + 1], modes[2 * e + 1] = {"labels": y[order], "predictions": p[order]}, (ModeKeys.EVAL, e)
    return steps, modes


def upload_to_moto(folder: Path, bucket: str = "bkt", prefix: str = "run") -> Any:
    """Inside ``moto.mock_aws()``: a us-west-2 S3 client with ``bucket`` holding every file under
    ``folder`` at ``<prefix>/<relative path>`` (a trial read back from ``s3://bucket/prefix``)."""
    import boto3

    client = boto3.client("s3", region_name="us-west-2")
    client.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            client.put_object(Bucket=bucket, Key=f"{prefix}/{p.relative_to(folder).as_posix()}", Body=p.read_bytes())
    return client
