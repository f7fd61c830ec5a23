"""The ProfilerReport HTML: plots (PNG data URIs) and the rule summary table."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...format._files import atomic_write
from ...render._html import esc, page, png_img, table
from .._trial import ProfilerTrial
from ._follow import follow_trial, write_rule_outputs
from ._registry import ProfilerReport
from ._system_rules import NO_GPU_NOTE

__all__ = ["REPORT_FILE", "TRIGGERS_NOTE", "render_profiler_report", "why_not_triggered"]

REPORT_FILE = "profiler-report.html"

_CSS = """
body{font-family:sans-serif;margin:2em;max-width:1100px}
table{border-collapse:collapse;width:100%;font-size:0.9em}
td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top;text-align:left}
tr.fired td{background:#fdecea} tr.not-evaluated td{background:#f0f0f0;color:#666}
img{max-width:100%} .note{color:#555}
"""


def _img(png: bytes, alt: str) -> str:
    return png_img(png, alt, figure=True)


def _fmt_time(us: int | None) -> str:
    if us is None:
        return "-"
    return datetime.fromtimestamp(us / 1e6, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


TRIGGERS_NOTE = (
    "<b>Times triggered</b> counts the evaluations in which a rule's condition was met (each scan of new "
    "data can trigger a rule once). <b>Violations</b> counts the data points, system samples or steps, that "
    "failed the rule's test one by one (a busy CPU while the GPUs idle, a step slower than mean + stddev x std...). "
    "A rule triggers only when its violations pass its own limit (a share above <code>threshold</code>, more than "
    "<code>n_outliers</code>, and only after <code>patience</code> data points), so a rule can have violations "
    "and 0 triggers: its Details say why."
)
"""The report's explanation of the two counts of the rule summary."""


def _params(summary: dict[str, Any]) -> dict[str, str]:
    pairs = (line.partition(":") for line in str(summary.get("RuleParameters", "")).splitlines())
    return {k.strip(): v.strip() for k, sep, v in pairs if sep}


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def why_not_triggered(summary: dict[str, Any]) -> str:
    """Why a rule with violations did not trigger, from its parameters and details ("" when it did or had none)."""
    violations = int(summary.get("Violations", 0))
    if not violations or int(summary.get("RuleTriggered", 0)):
        return ""
    params = _params(summary)
    points = int(summary.get("Datapoints", 0))
    patience = _number(params.get("patience"))
    if patience is not None and points <= patience:
        return (
            f"{violations} of {points} data points violated, but the rule judges only after "
            f"patience={params['patience']} data points, so it did not trigger."
        )
    if "n_outliers" in params:
        return f"{violations} outlier steps, not more than n_outliers={params['n_outliers']}, so it did not trigger."
    share = (summary.get("Details") or {}).get("bottleneck_percent")
    if share is not None and "threshold" in params:
        return (
            f"{violations} of {points} data points ({share:g}%) violated, not more than "
            f"threshold={params['threshold']}%, so it did not trigger."
        )
    return f"{violations} data points violated, not enough for the rule's trigger condition (see its parameters)."


def _rule_rows(summaries: list[dict[str, Any]], *, no_gpu: bool) -> str:
    rows = []
    classes = []
    order = sorted(summaries, key=lambda s: (-int(s.get("RuleTriggered", 0)), s["RuleName"]))
    for s in order:
        fired = int(s.get("RuleTriggered", 0))
        params = esc(s.get("RuleParameters", "")).replace("\n", "<br>")
        msg = s.get("Message") or ""
        note = s.get("Note") or ""
        skipped = no_gpu and note.endswith(NO_GPU_NOTE)
        if skipped:  # said once, in the GPU metrics line above the table
            note = "not evaluated (see GPU metrics above)"
        why = why_not_triggered(s)
        details = esc(msg) + "".join(f'<div class="note">{esc(t)}</div>' for t in (why, note) if t)
        rows.append(
            [
                f"<b>{esc(s['RuleName'])}</b>",
                esc(s.get("Description", "")),
                esc(s.get("Recommendation", "")),
                str(fired),
                str(s.get("Violations", 0)),
                str(s.get("Datapoints", 0)),
                params,
                details,
            ]
        )
        classes.append("fired" if fired else "not-evaluated" if skipped else "ok")
    header = (
        "Rule",
        "Description",
        "Recommendation",
        "Times triggered",
        "Violations",
        "Data points",
        "Parameters",
        "Details",
    )
    return f'<p class="note">{TRIGGERS_NOTE}</p>' + table(header, rows, row_classes=classes)


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
    has_gpu = trial.has_gpu_metrics()
    gpu_rules = [s["RuleName"] for s in summaries if str(s.get("Note") or "").endswith(NO_GPU_NOTE)]
    no_gpu = "none (no GPU on the training machine)"
    if gpu_rules:
        no_gpu += f": {', '.join(gpu_rules)} had nothing to evaluate"
    facts = [
        ("Profiler data", trial.uri),
        ("Start", _fmt_time(first)),
        ("End", _fmt_time(last)),
        ("Duration", f"{duration:.1f} s"),
        ("Training ended", "yes" if trial.training_ended() else "not yet"),
        ("Steps recorded", str(len(steps))),
        ("Initialization (first data to first step)", f"{init_s:.1f} s" if init_s is not None else "-"),
        ("GPU metrics", "yes" if has_gpu else no_gpu),
        ("Rules that found issues", ", ".join(fired) or "none"),
    ]
    parts = [
        "<h1>SageMaker Debugger profiler report</h1>",
        table((), [(esc(k), esc(v)) for k, v in facts], header_column=True),
        "<h2>Rule summary</h2>",
        _rule_rows(summaries, no_gpu=not has_gpu),
        "<h2>System utilization</h2>",
        _img(_plots.cpu_figure(system, t0), "CPU utilization"),
    ]
    if has_gpu:
        parts.append(_img(_plots.gpu_figure(system, t0), "GPU utilization"))
    parts.append(_img(_plots.memory_figure(system, t0), "Memory used"))
    parts.append("<h2>Step durations</h2>")
    if steps:
        parts.append(_img(_plots.step_histogram_figure(steps, stddev), "Step duration histogram"))
        parts.append(_img(_plots.step_timeline_figure(steps, stddev, t0), "Step duration over time"))
    else:
        parts.append(
            '<p class="note">No step events in the framework metrics (framework profiling was off, '
            "or no training step ran), so there are no step durations to plot.</p>"
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / REPORT_FILE
    atomic_write(target, page("Profiler report", parts, css=_CSS))
    return target
