"""smdebug's module paths are thin shims over one implementation: one hook slot, one USE_SMDEBUG, one matcher."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagemaker_debugger_ext import exceptions
from sagemaker_debugger_ext.analysis import utils as analysis_utils
from sagemaker_debugger_ext.core import locations, singleton_utils
from sagemaker_debugger_ext.format import index_key, parse_index_key
from sagemaker_debugger_ext.hooks import Collection as HookCollection
from sagemaker_debugger_ext.hooks import _current
from sagemaker_debugger_ext.hooks.tensorflow import _singleton as tf_singleton
from sagemaker_debugger_ext.trials import _refresh
from sagemaker_debugger_ext.trials._collections import Collection as TrialCollection
from sagemaker_debugger_ext.trials._collections import parse_collections_file


def test_shims_re_export_the_implementation() -> None:
    """core.singleton_utils and analysis.utils hold no code of their own."""
    assert (singleton_utils.get_hook, singleton_utils.set_hook, singleton_utils.del_hook) == (
        _current.get_hook,
        _current.set_hook,
        _current.del_hook,
    )
    assert analysis_utils.no_refresh is _refresh.no_refresh and analysis_utils.refresh is _refresh.refresh


@pytest.mark.parametrize("value", ["false", "0", "False"], ids=str)
def test_use_smdebug_false_creates_no_hook_in_any_framework(monkeypatch, tmp_path: Path, value: str) -> None:  # type: ignore[no-untyped-def]
    """PyTorch and TensorFlow read USE_SMDEBUG through the one parser: false means no hook from the config."""
    import sagemaker_debugger_ext.pytorch as smd_torch

    config = tmp_path / "hook.json"
    config.write_text(json.dumps({"LocalPath": str(tmp_path / "out")}))
    monkeypatch.setenv("USE_SMDEBUG", value)
    assert _current.smdebug_enabled() is False
    smd_torch.del_hook()
    tf_singleton.del_hook()
    assert smd_torch.get_hook(json_config_path=str(config), create_if_not_exists=True) is None
    assert tf_singleton.get_hook(json_config_path=str(config), create_if_not_exists=True) is None


def test_bad_use_smdebug_is_refused_the_same_way_by_every_framework(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A value that is not a bool gives the same error from PyTorch's and TensorFlow's get_hook."""
    import sagemaker_debugger_ext.pytorch as smd_torch

    monkeypatch.setenv("USE_SMDEBUG", "maybe")
    smd_torch.del_hook()
    tf_singleton.del_hook()
    with pytest.raises(exceptions.HookConfigError) as torch_err:
        smd_torch.get_hook(create_if_not_exists=True)
    with pytest.raises(exceptions.HookConfigError) as tf_err:
        tf_singleton.get_hook(create_if_not_exists=True)
    assert str(torch_err.value) == str(tf_err.value) and "USE_SMDEBUG" in str(tf_err.value)


@pytest.mark.parametrize("bad", ["(unclosed", 7], ids=["bad-regex", "not-a-string"])
def test_both_collections_refuse_a_bad_regex_alike(bad: object) -> None:
    """The hook's and the trial's Collection raise the same error, with the same message (ConfigValueError vs HookConfigError before)."""
    with pytest.raises(exceptions.HookConfigError) as hook_err:
        HookCollection("c").include([bad])  # type: ignore[list-item]
    with pytest.raises(exceptions.HookConfigError) as trial_err:
        TrialCollection(name="c").include([bad])  # type: ignore[list-item]
    assert str(hook_err.value) == str(trial_err.value)


def test_both_collections_match_alike() -> None:
    """Listed names and re.search regexes select the same tensors on both sides."""
    hook = HookCollection("c", include_regex=["relu_output"])
    hook.add_tensor_name("loss")
    trial = TrialCollection(name="c", include_regex=("relu_output",), tensor_names=frozenset({"loss"}))
    names = ["layer1_relu_output_0", "loss", "loss_2", "weights"]
    assert [hook.matches(n) for n in names] == [trial.matches(n) for n in names] == [True, True, False, False]


def test_collections_file_with_a_bad_regex_is_refused_by_name() -> None:
    """A bad regex in a collections file is a malformed file naming it (it used to match nothing, silently)."""
    doc = {"collections": {"c": {"name": "c", "include_regex": ["(unclosed"]}}, "_meta": {"num_workers": 1}}
    with pytest.raises(exceptions.IndexReaderException, match=r"c\.include_regex.*\(unclosed"):
        parse_collections_file(json.dumps(doc).encode(), "collections/000000000/w_collections.json")


@pytest.mark.parametrize("step", [0, 999, 1000, 123456], ids=str)
def test_locations_use_the_format_layout(step: int) -> None:
    """core.locations' index paths are the format's keys (the layout lives in one place)."""
    utils = locations.IndexFileLocationUtils
    key = utils.get_index_key_for_step("", step, "worker_0")
    assert key == index_key(step, "worker_0") and parse_index_key(key) == (step, "worker_0")
    assert utils.get_index_prefix_for_step(step) == key.split("/")[1]
    assert int(utils.next_index_prefix_for_step(step)) == int(utils.get_index_prefix_for_step(step)) + 1


def test_tensorflow_is_a_package_with_smdebugs_submodules() -> None:
    """``tensorflow`` is a package with smdebug.tensorflow's submodules, like ``pytorch``."""
    from sagemaker_debugger_ext import tensorflow as smd_tf
    from sagemaker_debugger_ext.tensorflow import collection, session, singleton_utils

    assert smd_tf.__path__  # a package
    assert collection.Collection is smd_tf.Collection and session.SessionHook is smd_tf.SessionHook
    assert singleton_utils.get_hook is smd_tf.get_hook is tf_singleton.get_hook


def test_framework_shims_hold_no_hook_code() -> None:
    """pytorch.get_hook (config, USE_SMDEBUG) lives in hooks/, FileWriter/FileReader in format/; one SageMaker-job test."""
    import sagemaker_debugger_ext.pytorch as smd_torch
    from sagemaker_debugger_ext import _container_env
    from sagemaker_debugger_ext.core import sagemaker_utils
    from sagemaker_debugger_ext.hooks.pytorch import _singleton as torch_singleton
    from sagemaker_debugger_ext.pytorch import singleton_utils as torch_singleton_utils

    assert smd_torch.get_hook is torch_singleton.get_hook is torch_singleton_utils.get_hook
    assert sagemaker_utils.is_sagemaker_job is _container_env.is_sagemaker_job
    from sagemaker_debugger_ext.core import reader, writer
    from sagemaker_debugger_ext.format import _file_reader, _file_writer

    assert (writer.FileWriter, reader.FileReader) == (_file_writer.FileWriter, _file_reader.FileReader)
    assert _container_env.is_sagemaker_job({"TRAINING_JOB_NAME": "j"}) is True
    assert _container_env.is_sagemaker_job({"TRAINING_JOB_NAME": ""}) is False


def test_get_path_to_collections_is_the_writers_folder(tmp_path: Path) -> None:
    """core.utils.get_path_to_collections names the folder the writer puts collections files in."""
    from sagemaker_debugger_ext.core.utils import get_path_to_collections
    from sagemaker_debugger_ext.format import write_collections_file

    written = write_collections_file(tmp_path, "worker_0", {}, 1)
    assert Path(get_path_to_collections(tmp_path)) == written.parent
    assert get_path_to_collections(tmp_path).endswith("/")
