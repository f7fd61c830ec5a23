"""The one 'current hook' implementation behind core, PyTorch and TensorFlow get_hook/set_hook/del_hook."""

from __future__ import annotations

import gc

from sagemaker_debugger_ext.core import singleton_utils
from sagemaker_debugger_ext.hooks._current import HookSlot
from sagemaker_debugger_ext.hooks.tensorflow import _singleton as tf_singleton


class _Obj:
    """Something weak-referenceable."""


def test_set_keeps_alive_track_does_not() -> None:
    """A set hook stays alive; a tracked one is returned only while something else holds it."""
    slot = HookSlot()
    obj = _Obj()
    slot.track(obj)
    assert slot.get() is obj
    del obj
    gc.collect()
    assert slot.get() is None
    slot.set(_Obj())
    gc.collect()
    assert isinstance(slot.get(), _Obj)


def test_forget_only_the_current_hook() -> None:
    """forget(other) keeps the current hook; forget(current) and clear() drop it."""
    slot, a, b = HookSlot(), _Obj(), _Obj()
    slot.set(a)
    slot.forget(b)
    assert slot.get() is a
    slot.forget(a)
    assert slot.get() is None
    slot.track(b)
    slot.clear()
    assert slot.get() is None


def test_framework_modules_share_the_implementation() -> None:
    """The generic (core.singleton_utils), PyTorch and TensorFlow hooks are held in a HookSlot."""
    from sagemaker_debugger_ext.hooks import _current
    from sagemaker_debugger_ext.hooks.pytorch import _singleton as pt_singleton

    assert singleton_utils.get_hook is _current.get_hook
    assert isinstance(_current._SLOT, HookSlot)
    assert isinstance(tf_singleton._SLOT, HookSlot)
    assert isinstance(pt_singleton._SLOT, HookSlot)
