"""The public module ``sagemaker_debugger_ext.tensorflow``: smdebug's names, lazy TensorFlow
import, the TF 1 hooks' errors, TF_CONFIG worker naming, get_hook/set_hook/del_hook."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import sagemaker_debugger_ext.tensorflow as smd
from sagemaker_debugger_ext._exceptions import HookConfigError, HookError
from sagemaker_debugger_ext.hooks.tensorflow._context import context_from_environ

SMDEBUG_NAMES = ["KerasHook", "SessionHook", "EstimatorHook", "get_hook", "set_hook", "del_hook", "modes", "SaveConfig",
                 "SaveConfigMode", "ReductionConfig", "CollectionKeys", "Collection", "create_trial"]  # fmt: skip


def test_smdebug_public_names_exist() -> None:
    for name in SMDEBUG_NAMES:
        assert getattr(smd, name) is not None, name
    assert smd.CollectionKeys.LAYERS == "layers"
    assert smd.CollectionKeys.OPTIMIZER_VARIABLES == "optimizer_variables"


def test_package_and_other_hooks_do_not_import_tensorflow() -> None:
    code = ("import sys, sagemaker_debugger_ext, sagemaker_debugger_ext.tensorflow as smd, sagemaker_debugger_ext.hooks;"
            "import sagemaker_debugger_ext.xgboost;"
            "assert smd.get_hook() is None;"
            "print(sorted(m for m in ('tensorflow', 'keras') if m in sys.modules))")  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("name", ["SessionHook", "EstimatorHook"])
def test_tf1_hooks_raise_naming_the_replacement(tf, name: str) -> None:
    cls = getattr(smd, name)
    with pytest.raises(HookError, match=rf"{name} is a TensorFlow 1 API.*KerasHook.*wrap_tape"):
        cls(out_dir="/tmp/never-written")
    with pytest.raises(HookError, match="KerasHook"):
        cls.create_from_json_file()
    with pytest.raises(HookError, match="KerasHook"):
        smd.get_hook(hook_type=name.replace("Hook", "").lower(), create_if_not_exists=True)


def _tf_config(cluster: dict, kind: str, index: int) -> dict[str, str]:
    return {"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": kind, "index": index}})}


def test_tf_config_ranks_as_sagemaker_sets_them() -> None:
    cluster = {"worker": ["algo-1:2222", "algo-2:2222"]}
    assert [context_from_environ(_tf_config(cluster, "worker", i)).worker for i in (0, 1)] == ["worker_0", "worker_1"]
    assert context_from_environ(_tf_config(cluster, "worker", 1)).world_size == 2
    with_chief = {"chief": ["algo-1:2222"], "worker": ["algo-2:2222", "algo-3:2222"]}
    assert context_from_environ(_tf_config(with_chief, "chief", 0)).rank == 0
    assert context_from_environ(_tf_config(with_chief, "worker", 1)).rank == 2
    assert context_from_environ({}).rank == 0


@pytest.mark.parametrize("raw, match", [("{not json", "JSON"),
                                        (json.dumps({"cluster": {"worker": ["a"]}, "task": {"type": "worker", "index": 3}}),
                                         "worker index below 1")])  # fmt: skip
def test_bad_tf_config_is_named(raw: str, match: str) -> None:
    with pytest.raises(HookConfigError, match=rf"\$TF_CONFIG.*{match}"):
        context_from_environ({"TF_CONFIG": raw})


def test_get_set_del_hook(tf, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    smd.del_hook()
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(tmp_path / "missing.json"))
    assert smd.get_hook(create_if_not_exists=True) is None
    config = tmp_path / "debughookconfig.json"
    config.write_text(json.dumps({"LocalPath": str(tmp_path / "out"), "HookParameters": {"save_interval": "2"},
                                  "CollectionConfigurations": [{"CollectionName": "weights"}]}))  # fmt: skip
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(config))
    hook = smd.get_hook(create_if_not_exists=True)
    assert isinstance(hook, smd.KerasHook)
    assert smd.get_hook() is hook
    assert hook.out_dir == str(tmp_path / "out")
    assert set(hook.include_collections) >= {"weights", "losses", "metrics", "sm_metrics"}
    other = smd.KerasHook(out_dir=str(tmp_path / "other"))
    assert smd.get_hook() is other
    smd.set_hook(hook)
    assert smd.get_hook() is hook
    smd.del_hook()
    assert smd.get_hook() is None
    hook.close()
    other.close()
