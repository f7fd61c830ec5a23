"""The hooks' constructor signatures as users see them: smdebug 1.0.34's, kept exactly.

The shared options are written once (``hooks/_options.HookOptions`` and the one constructor
``BaseHook.__init__`` that framework hooks inherit); these tests pin what ``inspect.signature``
shows for every framework hook, as recorded before that fold, and compare each parameter's
name, kind and default with smdebug 1.0.34's (recorded from ``.venv-smdebug`` and
``.venv-smdebug-mxnet``: ``inspect.signature(smdebug.<framework>.Hook.__init__)``).
"""

from __future__ import annotations

import inspect
import os
import subprocess
from pathlib import Path

import attrs
import pytest

from sagemaker_debugger_ext.hooks import BaseHook
from sagemaker_debugger_ext.hooks._options import HookOptions

ROOT = Path(__file__).resolve().parents[2]
_TEN = (
    "out_dir: 'str | os.PathLike[str] | None' = None, export_tensorboard: 'bool' = False, "
    "tensorboard_dir: 'str | os.PathLike[str] | None' = None, dry_run: 'bool' = False, "
    "reduction_config: '{rc}' = None, "
    "save_config: 'SaveConfig | SaveConfigMode | Mapping[ModeKeys, SaveConfigMode] | None' = None, "
    "include_regex: 'Iterable[str] | None' = None, include_collections: 'Iterable[str] | None' = None, "
    "save_all: 'bool' = False, include_workers: 'str' = 'one'"
)
#: ``str(inspect.signature(cls.__init__))`` of each framework hook before the fold (commit 09321a2)
RECORDED = {
    "pytorch.Hook": "(self, " + _TEN.format(rc="ReductionConfig | None") + ", **kwargs: 'Any') -> 'None'",
    "tensorflow.KerasHook": "(self, " + _TEN.format(rc="ReductionConfig | None") + ", **kwargs: 'Any') -> 'None'",
    "mxnet.Hook": "(self, " + _TEN.format(rc="ReductionConfig | None") + ", **kwargs: 'Any') -> 'None'",
    "xgboost.Hook": "(self, " + _TEN.format(rc="Any") + ", hyperparameters: 'Mapping[str, Any] | None' = None, "
    "train_data: 'Any' = None, validation_data: 'Any' = None, **kwargs: 'Any') -> 'None'",
}
CREATE_FROM_JSON = "(json_file_path: 'str | os.PathLike[str] | None' = None) -> 'Self'"
_SMDEBUG_TEN = [
    ("out_dir", None), ("export_tensorboard", False), ("tensorboard_dir", None), ("dry_run", False),
    ("reduction_config", None), ("save_config", None), ("include_regex", None), ("include_collections", None),
    ("save_all", False), ("include_workers", "one"),
]  # fmt: skip
#: smdebug 1.0.34's positional-or-keyword parameters (name, default) after ``self``
SMDEBUG = {
    "pytorch.Hook": _SMDEBUG_TEN,
    "tensorflow.KerasHook": _SMDEBUG_TEN,
    "mxnet.Hook": _SMDEBUG_TEN,
    "xgboost.Hook": [*_SMDEBUG_TEN, ("hyperparameters", None), ("train_data", None), ("validation_data", None)],
}


def _hook_class(name: str) -> type:
    module, cls = name.rsplit(".", 1)
    imported = __import__(f"sagemaker_debugger_ext.{module}", fromlist=[cls])
    return getattr(imported, cls)  # type: ignore[no-any-return]


def _check(name: str, cls: type) -> None:
    init = inspect.signature(cls.__init__)  # type: ignore[misc]
    assert str(init) == RECORDED[name]
    assert str(inspect.signature(cls.create_from_json_file)) == CREATE_FROM_JSON  # type: ignore[attr-defined]
    positional = [(p.name, p.default) for p in list(init.parameters.values())[1:] if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert positional == SMDEBUG[name]


@pytest.mark.parametrize("name", ["pytorch.Hook", "tensorflow.KerasHook", "xgboost.Hook"])
def test_framework_hook_signature_is_smdebugs_and_unchanged(name: str) -> None:
    _check(name, _hook_class(name))


def test_mxnet_hook_signature_is_smdebugs_and_unchanged() -> None:
    python = ROOT / ".venv-mxnet" / "bin" / "python"
    if not python.exists():
        pytest.skip("MXNet venv missing: `make mxnet-venv` builds .venv-mxnet")
    code = (
        "import inspect, sagemaker_debugger_ext.mxnet as m;"
        "print(inspect.signature(m.Hook.__init__)); print(inspect.signature(m.Hook.create_from_json_file))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=300, check=True, env=env)
    assert out.stdout.splitlines()[-2:] == [RECORDED["mxnet.Hook"], CREATE_FROM_JSON]


def test_the_one_constructor_lists_the_options_fields() -> None:
    """``BaseHook.__init__`` (inherited by the framework hooks) and ``HookOptions`` agree on
    names, order, defaults and annotations: the options are defined in one place."""
    params = list(inspect.signature(BaseHook.__init__).parameters.values())[1:]
    ten = [p for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    fields = attrs.fields(HookOptions)
    assert [p.name for p in ten] == [f.name for f in fields[:10]]
    assert [p.default for p in ten] == [f.default for f in fields[:10]]
    # out_dir is held resolved (a str): its converter takes what the constructor does
    assert [p.annotation for p in ten[1:]] == [f.type for f in fields[1:10]]
    assert ten[0].annotation == "str | os.PathLike[str] | None" and fields[0].type == "str"
    assert params[-1].kind is inspect.Parameter.VAR_KEYWORD
    assert {f.name for f in fields[10:]} == {"never_crash", "context", "background_writes"}


def test_unknown_keyword_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="nevr_crash"):
        BaseHook(out_dir=tmp_path / "run", nevr_crash=True)


def test_framework_hooks_do_not_write_the_options_again() -> None:
    """Only BaseHook and XGBoost's hook (three arguments of its own) define a constructor."""
    sources = [
        p for p in (ROOT / "sagemaker_debugger_ext" / "hooks").rglob("*.py") if "def __init__(\n" in p.read_text()
    ]
    with_ten = [p.relative_to(ROOT).as_posix() for p in sources if "include_workers: str" in p.read_text()]
    assert sorted(with_ten) == [
        "sagemaker_debugger_ext/hooks/_hook.py",
        "sagemaker_debugger_ext/hooks/xgboost/_hook.py",
    ]
