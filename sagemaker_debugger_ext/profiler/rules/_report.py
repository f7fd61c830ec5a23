"""The ProfilerReport HTML: plots (PNG data URIs) and the rule summary table."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..._html import esc, page, png_img, table
from ...format._files import atomic_write
from .._trial import ProfilerTrial
from ._registry import ProfilerReport
from ._runner import follow_trial, write_rule_outputs

__all__ = ["REPORT_FILE", "render_profiler_report"]

REPORT_FILE = "profiler-report.html"

_CSS = """
body{font-family:sans-serif;margin:2em;max-width:1100px}
table{border-collapse:collapse;width:100%;font-size:0.9em}
td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top;text-align:left}
tr.fired td{background:#fdecea} img{max-width:100%} .note{color:#555}
"""


def _img(png: bytes, alt: str) -> str:
    return png_img(png, alt, figure=True)


def _fmt_time(us: int | None) -> str:
    if us is None:
        return "-"
    return datetime.fromtimestamp(us / 1e6, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _rule_rows(summaries: list[dict[str, Any]]) -> str:
    rows = []
    order = sorted(summaries, key=lambda s: (-int(s.get("RuleTriggered", 0)), s["RuleName"]))
    for s in order:
        fired = int(s.get("RuleTriggered", 0))
        params = esc(s.get("RuleParameters", "")).replace("\n", "<br>")
        msg = s.get("Message") or ""
        note = s.get("Note") or ""
        rows.append([
            f"<b>{esc(s['RuleName'])}</b>",
            esc(s.get("Description", "")),
            esc(s.get("Recommendation", "")),
            str(fired),
            str(s.get("Violations", 0)),
            str(s.get("Datapoints", 0)),
            params,
            esc(msg) + (f'<div class="note">{esc(note)}</div>' if note else ""),
        ])
    header = ("Rule", "Description", "Recommendation", "Times triggered", "Violations", "Data points", "Parameters",
              "Details")
    row_classes = ["fired" if int(s.get("RuleTriggered", 0)) else "ok" for s in order]
    return table(header, rows, row_classes=row_classes)


def render_profiler_report(
    source: ProfilerTrial | str | Path,
    out_dir: str | Path,
    *,
    rule: Any = None,
    parameters: dict[str, Any] | None = None,
) -> Path:
    """Write ``<out_dir>/profiler-report.html`` for a profiler folder and return its path.

    Args:
        source: a :class:`ProfilerTrial` or the profiler folder (``file://`` accepted).
        out_dir: folder for the HTML (created).
        rule: an evaluated :class:`~sagemaker_debugger_ext.profiler.rules.ProfilerReport`;
            when None, every rule is evaluated now over all the data.
        parameters: ``<Rule>_<param>`` values for that evaluation.

    Raises:
        RuleParameterError: bad ``parameters``.
        ProfilerError: ``source`` is not a local folder.

    .. versionadded:: 0.1.0
    """
    from .. import _plots  # matplotlib: only when a report is drawn

    trial = source if isinstance(source, ProfilerTrial) else ProfilerTrial(source)
    trial.refresh()
    if rule is None:
        rule = ProfilerReport(**(parameters or {}))
        follow_trial(trial, rule, wait=False)
        write_rule_outputs(rule, Path(out_dir) / "profiler-reports")
    system = trial.get_system_metrics()
    first, last = trial.first_timestamp, trial.last_timestamp
    t0 = (first or 0) / 1e6
    steps = trial.step_events()
    stddev = next((r.params["stddev"] for r in rule.rules if r.NAME == "StepOutlier"), 3.0)
    summaries = rule.summaries()
    fired = [s["RuleName"] for s in summaries if s.get("RuleTriggered")]
    duration = (last - first) / 1e6 if first is not None and last is not None else 0.0
    first_step = min((e.start_us for e in steps), default=None)
    init_s = (first_step - first) / 1e6 if first_step is not None and first is not None else None
    facts = [
        ("Profiler data", trial.uri),
        ("Start", _fmt_time(first)),
        ("End", _fmt_time(last)),
        ("Duration", f"{duration:.1f} s"),
        ("Training ended", "yes" if trial.training_ended() else "not yet"),
        ("Steps recorded", str(len(steps))),
        ("Initialization (first data to first step)", f"{init_s:.1f} s" if init_s is not None else "-"),
        ("GPU metrics", "yes" if trial.has_gpu_metrics() else "none (no GPU on the training machine)"),
        ("Rules that found issues", ", ".join(fired) or "none"),
    ]
    parts = [
        "<h1>SageMaker Debugger profiler report</h1>",
        table((), [(esc(k), esc(v)) for k, v in facts], header_column=True),
    ]
    if rule.note:
        parts.append(f'<p class="note">{esc(rule.note)}</p>')
    parts.append("<h2>Rule summary</h2>" + _rule_rows(summaries))
    parts.append("<h2>System utilization</h2>")
    parts.append(_img(_plots.cpu_figure(system, t0), "CPU utilization"))
    parts.append(_img(_plots.gpu_figure(system, t0), "GPU utilization"))
    parts.append(_img(_plots.memory_figure(system, t0), "Memory used"))
    parts.append("<h2>Step durations</h2>")
    parts.append(_img(_plots.step_histogram_figure(steps, stddev), "Step duration histogram"))
    parts.append(_img(_plots.step_timeline_figure(steps, stddev, t0), "Step duration over time"))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / REPORT_FILE
    atomic_write(target, page("Profiler report", parts, css=_CSS))
    return target
