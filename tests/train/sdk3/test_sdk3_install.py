"""Beside SDK v3: sagemaker stays 3.x, the core and the v3 part import, and the private override
point ModelTrainer gives is the one pinned and tested (sagemaker-train in the [sdk3] range)."""

from __future__ import annotations

import inspect
import subprocess
import sys

from sagemaker_debugger_ext._sdk_major import TESTED_SAGEMAKER_TRAIN, installed_version


def test_sagemaker_is_still_v3_and_every_part_imports() -> None:
    """The acceptance imports, in a fresh process: configs, the PyTorch hook, create_trial, ModelTrainer."""
    assert (installed_version() or "").startswith("3.")
    code = (
        "import sagemaker_debugger_ext, sagemaker_debugger_ext.pytorch\n"
        "from sagemaker_debugger_ext import DebuggerHookConfig, CollectionConfig, Rule, ProfilerRule, ProfilerConfig\n"
        "from sagemaker_debugger_ext.trials import create_trial\n"
        "from sagemaker_debugger_ext.train import ModelTrainer, local_session\n"
        "import sagemaker.train\n"
        "assert issubclass(ModelTrainer, sagemaker.train.ModelTrainer)\n"
        "print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]


def test_installed_sagemaker_train_is_the_pinned_range_with_the_override_point() -> None:
    """The pin holds here, and the private method overridden still has the signature relied on."""
    from sagemaker.train import ModelTrainer as SdkModelTrainer

    version = installed_version("sagemaker-train") or ""
    assert tuple(int(p) for p in version.split(".")[:2]) == TESTED_SAGEMAKER_TRAIN
    params = inspect.signature(SdkModelTrainer._create_training_job_args).parameters
    assert list(params) == ["self", "input_data_config", "boto3"]
    assert "with_debugger" not in vars(SdkModelTrainer)  # the SDK has no Debugger of its own (yet)
