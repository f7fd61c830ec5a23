"""SMPROFILER_CONFIG_PATH naming a missing or broken file: profiling off, tensors still saved."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import sagemaker_debugger_ext.pytorch as smd
from sagemaker_debugger_ext.trials import create_trial


@pytest.mark.parametrize("content", [None, "{not json"], ids=["missing", "invalid-json"])
def test_bad_profiler_config_path_does_not_stop_the_hook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         content: str | None) -> None:  # fmt: skip
    config = tmp_path / "profilerconfig.json"
    if content is not None:
        config.write_text(content)
    monkeypatch.setenv("SMPROFILER_CONFIG_PATH", str(config))
    model = torch.nn.Linear(3, 2)
    hook = smd.Hook(
        out_dir=str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1), include_collections=["weights"]
    )
    hook.register_module(model)
    model(torch.randn(2, 3)).sum().backward()
    hook.close()
    assert create_trial(str(tmp_path / "run")).tensor_names() == ["Linear_weight"]
    assert not list(tmp_path.rglob("*pythontimeline.json"))
