"""Fixtures of the rules tests: synthetic trials written with our own StepWriter."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from synthetic_trial import TrialSteps, write_trial


@pytest.fixture
def make_trial(tmp_path: Path) -> Callable[..., Any]:
    """Write a synthetic trial and return it opened with ``create_trial``."""
    from sagemaker_debugger_ext.trials import create_trial

    counter = iter(range(1000))

    def make(steps: TrialSteps, **kw: Any) -> Any:
        root = write_trial(tmp_path / f"trial{next(counter)}", steps, **kw)
        return create_trial(str(root))

    return make


@pytest.fixture
def trial_dir(tmp_path: Path) -> Callable[..., Path]:
    """Write a synthetic trial and return its folder."""
    counter = iter(range(1000))

    def make(steps: TrialSteps, **kw: Any) -> Path:
        return write_trial(tmp_path / f"dir{next(counter)}", steps, **kw)

    return make
