"""Profiler rules over framework metrics: step outliers, initialization time, data loaders."""

from __future__ import annotations

import math
import os
from typing import Any

from ..._exceptions import RuleParameterError, field_error_message
from ...rule_contract._params import Kind, Param, non_negative
from ...rule_contract._result import RuleResult
from .._events import FrameworkEvent
from ._base import ProfilerRule, Window, make_params, percentile
from ._snapshot import _CORE

__all__ = ["Dataloader", "MaxInitializationTime", "StepOutlier", "step_outliers"]

_MODES = ("TRAIN", "EVAL", "PREDICT", "GLOBAL")
# Framework files appear when they rotate (60 s by default): before declaring "no step yet"
# while training runs, allow that much extra time.
_FRAMEWORK_LATENCY_US = 60_000_000


def step_outliers(durations: list[float], stddev: float) -> tuple[float, float, list[int]]:
    """``(mean, std, indices of durations > mean + stddev * std)``."""
    if not durations:
        return 0.0, 0.0, []
    mean = sum(durations) / len(durations)
    std = math.sqrt(sum((d - mean) ** 2 for d in durations) / len(durations))
    limit = mean + stddev * std
    return mean, std, [i for i, d in enumerate(durations) if std > 0 and d > limit]


class StepOutlier(ProfilerRule):
    """Fires when more than ``n_outliers`` steps last longer than mean + ``stddev`` × std."""

    NAME = "StepOutlier"
    PARAMS = make_params(
        Param(
            name="stddev",
            kind=Kind.FLOAT,
            default=3,
            check=non_negative,
            doc="multiple of the standard deviation that makes an outlier",
        ),
        Param(name="mode", kind=Kind.STR, default=None, doc="TRAIN, EVAL, ... (default: every mode separately)"),
        Param(
            name="n_outliers",
            kind=Kind.INT,
            default=10,
            check=non_negative,
            doc="outliers to ignore before the rule fires",
        ),
    )
    DESCRIPTION = "Detects outliers in step duration (steps much slower than the rest)."
    RECOMMENDATION = (
        "Check for bottlenecks (CPU, I/O) that correlate with the slow steps; "
        "look for periodic work such as checkpointing or evaluation inside the loop."
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        mode = self.params["mode"]
        if mode is not None:
            norm = mode.split(".")[-1].upper()
            if norm not in _MODES:
                raise RuleParameterError(
                    "StepOutlier: " + field_error_message("mode", f"one of {', '.join(_MODES)} or None", mode),
                    rule_name=self.NAME,
                )
            self.params["mode"] = norm
        self.steps: dict[str, list[FrameworkEvent]] = {}

    def evaluate(self, window: Window) -> RuleResult:
        want = self.params["mode"]
        for e in window.framework:
            if e.is_step and (want is None or e.mode == want):
                self.steps.setdefault(e.mode or "GLOBAL", []).append(e)
        total_outliers = 0
        details: dict[str, Any] = {}
        for mode, events in self.steps.items():
            durations = [e.duration_s for e in events]
            mean, std, idx = step_outliers(durations, self.params["stddev"])
            total_outliers += len(idx)
            details[mode] = {
                "mean": mean,
                "stddev": std,
                "steps": len(durations),
                "outliers": [events[i].step for i in idx][:100],
            }
        self.report["Details"] = details
        self.report["Datapoints"] = sum(len(v) for v in self.steps.values())
        self.report["Violations"] = total_outliers
        if total_outliers > self.params["n_outliers"]:
            return self.fire(
                f"StepOutlier: {total_outliers} step(s) longer than mean + "
                f"{self.params['stddev']:g} x stddev (more than {self.params['n_outliers']})"
            )
        return RuleResult.from_findings((), seen=bool(self.steps))


class MaxInitializationTime(ProfilerRule):
    """Fires when the first step starts more than ``threshold`` minutes after the job's first data."""

    NAME = "MaxInitializationTime"
    PARAMS = make_params(
        Param(
            name="threshold",
            kind=Kind.FLOAT,
            default=20,
            check=non_negative,
            doc="minutes allowed before the first step",
        )
    )
    DESCRIPTION = "Checks if the time before the training loop starts is too long."
    RECOMMENDATION = (
        "Initialization takes too long: with File mode consider Pipe/FastFile mode, "
        "and move expensive set-up (downloads, compilation) out of the job."
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.first_step_us: int | None = None
        self.fired_once = False

    def _check(self, window: Window, now_us: int, latency_us: int) -> RuleResult:
        if self.fired_once:
            return RuleResult.not_met()
        limit_us = self.params["threshold"] * 60_000_000
        start = window.job_start_us
        self.report["Details"]["job_start"] = start / 1e6
        if self.first_step_us is not None:
            self.report["Details"]["step_num"] = {"first": self.first_step_us}
            init_us = self.first_step_us - start
            self.report["Details"]["initialization_s"] = init_us / 1e6
            if init_us > limit_us:
                self.fired_once = True
                return self.violation(
                    f"MaxInitializationTime: first step began {init_us / 6e7:.2f} min after the "
                    f"job started (threshold {self.params['threshold']:g} min)"
                )
            return RuleResult.not_met()
        if now_us - start > limit_us + latency_us:
            self.fired_once = True
            return self.violation(
                f"MaxInitializationTime: no training step after {(now_us - start) / 6e7:.2f} min "
                f"(threshold {self.params['threshold']:g} min)"
            )
        return RuleResult.insufficient()

    def evaluate(self, window: Window) -> RuleResult:
        for e in window.framework:
            if e.is_step:
                self.report["Datapoints"] += 1
                if self.first_step_us is None or e.start_us < self.first_step_us:
                    self.first_step_us = e.start_us
        now = max((e.timestamp_us for e in window.system), default=window.start_us)
        return self._check(window, now, 0 if window.ended else _FRAMEWORK_LATENCY_US)

    def finish(self, window: Window) -> RuleResult:
        if self.first_step_us is None and self.report["Datapoints"] == 0:
            self.note = "MaxInitializationTime: no step events in the framework metrics"
        return RuleResult.not_met()


class Dataloader(ProfilerRule):
    """Fires when the median number of parallel data-loader processes is below ``min_threshold`` %
    or above ``max_threshold`` % of the CPU cores."""

    NAME = "Dataloader"
    PARAMS = make_params(
        Param.percentage("min_threshold", 70, "minimum data loaders as % of cores"),
        Param(
            name="max_threshold",
            kind=Kind.FLOAT,
            default=200,
            check=non_negative,
            doc="maximum data loaders as % of cores",
        ),
        Param(
            name="patience",
            kind=Kind.INT,
            default=10,
            check=non_negative,
            doc="seconds with data-loading events before the first check",
        ),
    )
    DESCRIPTION = "Checks how many data loader processes run in parallel compared to the CPU cores."
    RECOMMENDATION = (
        "Change the number of data loader workers (num_workers) to match the cores; "
        "consider pin_memory and prefetching."
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.cores: set[str] = set()
        self.per_second: dict[int, set[Any]] = {}
        self.load_times: list[float] = []

    def evaluate(self, window: Window) -> RuleResult:
        for s in window.system:
            if s.dimension == "CPUUtilization" and _CORE.match(s.name):
                self.cores.add(s.name)
        for e in window.framework:
            if e.category != "dataloader":
                continue
            self.report["Datapoints"] += 1
            self.load_times.append(e.duration_s)
            worker = e.args.get("worker_pid", e.args.get("pid", e.node_id))
            self.per_second.setdefault(int(e.start_us // 1_000_000), set()).add(worker)
        if len(self.per_second) <= self.params["patience"]:
            return RuleResult.from_findings((), seen=bool(self.per_second))
        cores = len(self.cores) or (os.cpu_count() or 1)
        median = int(percentile([float(len(v)) for v in self.per_second.values()], 50))
        d = self.report["Details"]
        d.update(
            {
                "cores": cores,
                "dataloaders": median,
                "dataloading_time": {"p50": percentile(self.load_times, 50), "p95": percentile(self.load_times, 95)},
            }
        )
        if median < cores * self.params["min_threshold"] / 100:
            return self.violation(
                f"Dataloader: {median} parallel data loader(s) for {cores} cores (< {self.params['min_threshold']:g}%)"
            )
        if median > cores * self.params["max_threshold"] / 100:
            return self.violation(
                f"Dataloader: {median} parallel data loaders for {cores} cores (> {self.params['max_threshold']:g}%)"
            )
        return RuleResult.not_met()
