"""Steps that save nothing open the quiet way in the PyTorch hook (issue 32 item 3: a fast
step pays one clock advance, not the whole step bookkeeping), and a run writes exactly what
the long way writes: the same steps, modes, tensors, values, scalars and explicit saves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

import sagemaker_debugger_ext.pytorch as smd
from sagemaker_debugger_ext.hooks import TrainingContext
from sagemaker_debugger_ext.trials import create_trial


class _LongWay(smd.Hook):
    """Every step opens the long way (the reference)."""

    def _quiet_step(self, mode: smd.modes) -> bool:  # type: ignore[override]
        return False


class _Counting(smd.Hook):
    """Counts the steps opened the long way."""

    long_steps = 0

    def _next_step(self) -> None:
        self.long_steps += 1
        super()._next_step()


def _run(hook: smd.Hook) -> tuple[list[Any], list[list[int]]]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3))
    loss_fn = torch.nn.CrossEntropyLoss()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(8, 6, generator=g), torch.randint(0, 3, (8,), generator=g)
    clocks, hooked = [], []
    plan = [smd.modes.TRAIN] * 13 + [smd.modes.EVAL] * 6 + [smd.modes.TRAIN] * 9
    for i, mode in enumerate(plan):
        hook.set_mode(mode)
        if mode == smd.modes.EVAL:
            with torch.no_grad():
                loss_fn(model(x), y)
        else:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        if i in (6, 21):  # steps that save nothing: written into the next saved step, as smdebug
            hook.save_scalar("lr", 0.5 + i)
        if i == 9:
            hook.save_tensor("extra", np.full(3, float(i)), "custom")
        clocks.append((hook.step, dict(hook.mode_steps)))
        hooked.append([int(p._backward_hooks is not None and len(p._backward_hooks) > 0) for p in model.parameters()])
    hook.close()
    return clocks, hooked


def _contents(out: Path) -> dict[tuple[int, str], np.ndarray]:
    trial = create_trial(str(out))
    return {
        (step, name): np.asarray(trial.tensor(name).value(step))
        for name in trial.tensor_names()
        for step in trial.tensor(name).steps()
    }


def test_quiet_steps_write_what_the_long_way_writes(tmp_path: Path) -> None:
    kwargs: dict[str, Any] = {
        "save_config": smd.SaveConfig(save_interval=4),
        "include_collections": ["weights", "gradients", "losses", "custom"],
        "context": TrainingContext(),
    }
    quiet = _Counting(out_dir=str(tmp_path / "quiet"), **kwargs)
    long_way = _LongWay(out_dir=str(tmp_path / "long"), **kwargs)
    quiet_clocks, quiet_hooked = _run(quiet)
    long_clocks, long_hooked = _run(long_way)
    assert quiet_clocks == long_clocks
    assert quiet_hooked == long_hooked  # gradient hooks attached on the same steps, removed after them
    # per save cycle of 4: the saved step and the one closing it the long way, two quiet
    assert len(quiet_clocks) - quiet.long_steps >= 8
    got, want = _contents(tmp_path / "quiet"), _contents(tmp_path / "long")
    assert sorted(got) == sorted(want) and want
    for key, value in want.items():
        np.testing.assert_array_equal(got[key], value, err_msg=str(key))
    steps = sorted({step for step, _ in want})
    assert steps == sorted({step for step, name in want if name.startswith("CrossEntropyLoss")})
    assert {name for _, name in want} >= {"scalar/lr", "extra"}


class _PlainCopies(smd.Hook):
    """Saved tensors copied into fresh NumPy arrays at every saved step (the reference)."""

    copy_arena = None


def test_kept_copy_arrays_write_what_fresh_copies_write(tmp_path: Path) -> None:
    """The PyTorch hook copies into each copy's array of the last saved step (``SlotCopies``):
    TRAIN and EVAL saved steps copy different tensors in a different order, explicit saves
    come between, and every value equals what fresh copies write."""
    kwargs: dict[str, Any] = {
        "save_config": smd.SaveConfig(save_interval=2),
        "include_collections": ["weights", "biases", "gradients", "losses", "custom"],
        "context": TrainingContext(),
    }
    kept = smd.Hook(out_dir=str(tmp_path / "kept"), **kwargs)
    plain = _PlainCopies(out_dir=str(tmp_path / "plain"), **kwargs)
    _run(kept)
    _run(plain)
    assert kept._writer.arenas.bytes_copied == plain._writer.arenas.bytes_copied > 0
    got, want = _contents(tmp_path / "kept"), _contents(tmp_path / "plain")
    assert sorted(got) == sorted(want) and len({step for step, _ in want}) >= 12
    for key, value in want.items():
        np.testing.assert_array_equal(got[key], value, err_msg=str(key))
