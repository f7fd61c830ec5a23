"""``RequiredTensors``: the tensors and steps a rule declares it needs (smdebug-compatible)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..exceptions import TensorUnavailable

__all__ = ["RequiredTensors", "RequiredTensorsForTrial"]


class RequiredTensorsForTrial:
    """Required tensor names and steps of one trial."""

    def __init__(self, trial: Any) -> None:
        self.trial = trial
        self._tensor_steps: dict[str, list[int]] = {}
        self._tensors: dict[str, Any] = {}

    def add(self, name: str, steps: Iterable[int], should_match_regex: bool = False) -> None:
        """Require ``name`` (or every tensor matching it as a regex) at ``steps``.

        Raises:
            TensorUnavailable: ``name`` is not a tensor of the trial (exact-name form).
        """
        steps = list(steps)
        if should_match_regex:
            names = list(self.trial.tensor_names(regex=[name]))
        else:
            if not self.trial.has_tensor(name):
                raise TensorUnavailable(name)
            names = [name]
        for n in names:
            self._tensor_steps.setdefault(n, []).extend(steps)
            if n not in self._tensors:
                self._tensors[n] = self.trial.tensor(n)

    def get_tensor_steps(self, name: str) -> list[int]:
        """Steps required for ``name``."""
        return self._tensor_steps[name]

    def get_names(self) -> list[str]:
        """Names of the required tensors."""
        return list(self._tensor_steps)

    def get(self) -> list[Any]:
        """The required ``Tensor`` objects."""
        return list(self._tensors.values())

    def clear(self) -> None:
        """Forget every requirement."""
        self._tensor_steps.clear()
        self._tensors.clear()

    def fetch(self) -> None:
        """Wait for every required step, then load each required value once."""
        steps = sorted({s for ss in self._tensor_steps.values() for s in ss})
        if steps:
            self.trial.wait_for_steps(steps)
        for name, ss in self._tensor_steps.items():
            tensor = self._tensors[name]
            for step in ss:
                tensor.value(step)


class RequiredTensors:
    """Required tensors of a rule, per trial (base trial by default)."""

    def __init__(self, base_trial: Any, other_trials: Iterable[Any] | None = None) -> None:
        self.base_trial = base_trial
        self._per_trial: dict[int, RequiredTensorsForTrial] = {id(base_trial): RequiredTensorsForTrial(base_trial)}
        for trial in other_trials or ():
            self._per_trial[id(trial)] = RequiredTensorsForTrial(trial)

    def _for(self, trial: Any | None) -> RequiredTensorsForTrial:
        return self._per_trial[id(self.base_trial if trial is None else trial)]

    def add(self, name: str, steps: Iterable[int], trial: Any | None = None, should_match_regex: bool = False) -> None:
        """Require tensor ``name`` of ``trial`` (default: base trial) at ``steps``."""
        self._for(trial).add(name, steps, should_match_regex=should_match_regex)

    def get_tensor_steps(self, name: str, trial: Any | None = None) -> list[int]:
        """Steps required for ``name`` in ``trial``."""
        return self._for(trial).get_tensor_steps(name)

    def get_names(self, trial: Any | None = None) -> list[str]:
        """Required tensor names of ``trial``."""
        return self._for(trial).get_names()

    def get(self, trial: Any | None = None) -> list[Any]:
        """Required ``Tensor`` objects of ``trial``."""
        return self._for(trial).get()

    def clear(self) -> None:
        """Forget every requirement of every trial."""
        for per_trial in self._per_trial.values():
            per_trial.clear()

    def fetch(self) -> None:
        """Wait for and load every required value of every trial."""
        for per_trial in self._per_trial.values():
            per_trial.fetch()
