"""The debugger HTML report of a training job: rule summary, loss curves, flagged tensors.

The report is one self-contained HTML file (plots are inline PNGs). It is built from a
``describe_training_job`` response and the job's debug output (a trial), so it works for
local jobs and for real SageMaker jobs whose debug output is in S3.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._exceptions import DebuggerExtError
from ..render._figure import PlotData, plot_html
from ..render._html import esc, page, table
from ..request._paths import debugger_artifacts_path, rule_output_path
from ..rule_contract._status import EvaluationStatus
from ..rules._evidence import RULE_COLLECTIONS
from ..rules._summary import rule_summary
from ..storage import open_storage
from ._plots import tensor_series
from ._rule_plots import rule_plots
from ._summary import format_steps, open_trial, summarize_trial

__all__ = [
    "debug_output_uri",
    "flagged_tensors",
    "job_report_html",
    "load_profiler_rule_reports",
    "load_rule_reports",
    "loss_tensors",
    "rule_output_uri",
    "write_job_report",
]

_MAX_FLAGGED = 4
_RULE_REPORT = "rule-report.json"
_PROFILER_REPORTS = "profiler-output/profiler-reports/"  # a profiler rule's <Rule>.json, under its rule output
_MAX_FINDINGS = 10

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left}
caption{text-align:left;font-weight:bold;padding:.3em 0}
tr.status-IssuesFound td{background:#fde2e1}tr.status-NoIssuesFound td{background:#e3f6e3}
tr.status-Error td{background:#fff0c2}tr.status-NotEvaluated td{background:#ececec;color:#555}img{max-width:100%}
figure.plot{display:inline-block;vertical-align:top;width:49%;margin:.5em 0}
figure.plot img{width:100%}figure.plot.wide{display:block;width:70%}section.rule{margin-bottom:2em}table.findings td{font-size:.9em}
"""


def debug_output_uri(description: Mapping[str, Any]) -> str | None:
    """Where the job's tensors are: ``<DebugHookConfig.S3OutputPath>/<job>/debug-output``.

    Returns None when the job has no debugger hook configuration.
    """
    base = (description.get("DebugHookConfig") or {}).get("S3OutputPath")
    job = description.get("TrainingJobName")
    if not base or not job:
        return None
    return debugger_artifacts_path(str(base), str(job))


def rule_output_uri(description: Mapping[str, Any], rule: str) -> str | None:
    """``<rule S3OutputPath or OutputDataConfig.S3OutputPath>/<job>/rule-output/<rule>``."""
    job = description.get("TrainingJobName")
    base = None
    for cfg in [*(description.get("DebugRuleConfigurations") or []),
                *(description.get("ProfilerRuleConfigurations") or [])]:  # fmt: skip
        if cfg.get("RuleConfigurationName") == rule:
            base = cfg.get("S3OutputPath")
    base = base or (description.get("OutputDataConfig") or {}).get("S3OutputPath")
    if not base or not job:
        return None
    return rule_output_path(str(base), str(job), rule)


def load_rule_reports(description: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``rule-report.json`` each debugger rule wrote into its rule output, by rule name.

    Rules whose report cannot be read (not written, not synced, unreachable) are left out.
    """
    reports: dict[str, dict[str, Any]] = {}
    for status in description.get("DebugRuleEvaluationStatuses") or []:
        rule = str(status.get("RuleConfigurationName", ""))
        uri = rule_output_uri(description, rule)
        if uri is None:
            continue
        try:
            doc = json.loads(open_storage(uri).read(_RULE_REPORT))
        except (DebuggerExtError, OSError, ValueError):
            continue
        if isinstance(doc, dict):
            reports[rule] = doc
    return reports


def load_profiler_rule_reports(description: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each profiler rule's summaries (``profiler-output/profiler-reports/<Rule>.json`` in its rule
    output: one for a rule, one per sub-rule for ProfilerReport), by rule configuration name.

    Rules whose summaries cannot be read (not written, not synced, unreachable) are left out.
    """
    out: dict[str, list[dict[str, Any]]] = {}
    for status in description.get("ProfilerRuleEvaluationStatuses") or []:
        rule = str(status.get("RuleConfigurationName", ""))
        uri = rule_output_uri(description, rule)
        if uri is None:
            continue
        try:
            store = open_storage(uri)
            docs = [
                json.loads(store.read(key)) for key in sorted(store.list(_PROFILER_REPORTS)) if key.endswith(".json")
            ]
        except (DebuggerExtError, OSError, ValueError):
            continue
        if docs:
            out[rule] = [d for d in docs if isinstance(d, dict)]
    return out


def _profiler_findings(summaries: list[dict[str, Any]]) -> str:
    """A profiler rule's findings cell: its triggers and violations, or which sub-rules triggered."""
    if len(summaries) == 1:
        doc = summaries[0]
        return (f"triggered {doc.get('RuleTriggered', 0)} times, {doc.get('Violations', 0)} violations "
                f"in {doc.get('Datapoints', 0)} datapoints")  # fmt: skip
    fired = [str(d.get("RuleName")) for d in summaries if d.get("RuleTriggered")]
    return f"{len(fired)} of {len(summaries)} rules triggered" + (f": {', '.join(fired)}" if fired else "")


def loss_tensors(trial: Any) -> list[str]:
    """Names of the loss-like scalars: the ``losses`` collection, else ``metrics`` (XGBoost),
    else the tensors whose name contains "loss"."""
    collections = trial.collections()
    for name in ("losses", "metrics"):
        if name in collections:
            names = list(trial.tensor_names(collection=name))
            if names:
                return sorted(names)
    return sorted(n for n in trial.tensor_names() if "loss" in n.lower())


def _rule_parameters(description: Mapping[str, Any], rule: str) -> dict[str, str]:
    for cfg in [*(description.get("DebugRuleConfigurations") or []),
                *(description.get("ProfilerRuleConfigurations") or [])]:  # fmt: skip
        if cfg.get("RuleConfigurationName") == rule:
            return dict(cfg.get("RuleParameters") or {})
    return {}


def flagged_tensors(
    description: Mapping[str, Any], trial: Any, *, rule_reports: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, list[str]]:
    """For each rule with ``IssuesFound``, the tensors it flagged.

    The tensors of the findings in the rule's ``rule-report.json`` come first (see
    :func:`load_rule_reports`, read when ``rule_reports`` is None); then the tensors named
    in its ``StatusDetails``; otherwise the ones its ``tensor_regex`` / ``collection_names``
    parameters select, else the collection the built-in rule reads by default. At most
    four tensors per rule.
    """
    if rule_reports is None:
        rule_reports = load_rule_reports(description)
    all_names = sorted(trial.tensor_names())
    collections = set(trial.collections())
    found: dict[str, list[str]] = {}
    for status in description.get("DebugRuleEvaluationStatuses") or []:
        if status.get("RuleEvaluationStatus") != EvaluationStatus.ISSUES_FOUND:
            continue
        rule = str(status.get("RuleConfigurationName", ""))
        details = str(status.get("StatusDetails") or "")
        findings = (rule_reports.get(rule) or {}).get("Findings") or []
        found_names = (f.get("tensor") for f in findings if isinstance(f, dict))
        names: list[str] = list(dict.fromkeys(str(n) for n in found_names if n in all_names))
        names = names or [n for n in all_names if _mentions(details, n)]
        params = _rule_parameters(description, rule)
        if not names and params.get("tensor_regex"):
            try:
                pattern = re.compile(params["tensor_regex"])
            except re.error:
                pattern = None
            if pattern is not None:
                names = [n for n in all_names if pattern.fullmatch(n) or pattern.match(n)]
        if not names:
            wanted = [c.strip() for c in params.get("collection_names", "").split(",") if c.strip()]
            base = params.get("rule_to_invoke", rule)
            wanted = wanted or [RULE_COLLECTIONS.get(base, "")]
            for coll in wanted:
                if coll in collections:
                    names += [n for n in trial.tensor_names(collection=coll) if n not in names]
        found[rule] = names[:_MAX_FLAGGED]
    return found


def _mentions(text: str, name: str) -> bool:
    """Whether ``name`` occurs in ``text`` as a whole tensor name (not inside a longer one)."""
    return re.search(rf"(?<![\w/.:-]){re.escape(name)}(?![\w/:-]|\.\w)", text) is not None


def _section_losses(trial: Any) -> str:
    names = loss_tensors(trial)
    if not names:
        return (
            "<h2>Loss curves</h2><p>No loss or metric tensors were saved "
            "(add the <code>losses</code> or <code>metrics</code> collection).</p>"
        )
    series: dict[str, tuple[list[int], list[float]]] = {}
    for name in names:
        for mode, xy in tensor_series(trial, name).items():
            series[f"{name} ({mode})"] = xy
    title = "Loss" if any("loss" in n.lower() for n in names) else "Metrics"
    return f"<h2>Loss curves</h2>{plot_html(PlotData(title=title, ylabel='value', series=series), wide=True)}"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _findings_table(report: Mapping[str, Any]) -> str:
    findings = [f for f in report.get("Findings") or [] if isinstance(f, dict)][:_MAX_FINDINGS]
    if not findings:
        return ""
    keys = ("step", "mode", "tensor", "value", "threshold", "message")
    rows = [[esc(_cell(f.get(k))) for k in keys] for f in findings]
    return table(("step", "mode", "tensor", "value", "threshold", "what"), rows, cls="findings")


def _section_flagged(description: Mapping[str, Any], trial: Any, reports: Mapping[str, Mapping[str, Any]]) -> str:
    flagged = flagged_tensors(description, trial, rule_reports=reports)
    if not flagged:
        return "<h2>Flagged tensors</h2><p>No rule found issues.</p>"
    parts = ["<h2>Flagged tensors</h2>"]
    for rule, names in flagged.items():
        report = reports.get(rule) or {}
        fired = [int(s) for s in report.get("FiredSteps") or [] if isinstance(s, int)]
        params: dict[str, Any] = {**_rule_parameters(description, rule), **(report.get("RuleParameters") or {})}
        base = str(report.get("RuleToInvoke") or params.get("rule_to_invoke") or rule)
        findings = [f for f in report.get("Findings") or [] if isinstance(f, dict)]
        parts.append(f'<section class="rule" data-rule="{esc(rule)}"><h3>{esc(rule)}</h3>')
        if report.get("StatusDetails"):
            parts.append(f"<p>{esc(report['StatusDetails'])}</p>")
        parts.append(_findings_table(report))
        if not names and base != "FeatureImportanceOverweight":
            parts.append("<p>The rule names no tensor of this trial.</p>")
        plots = rule_plots(base, params, trial, names, findings, fired)
        parts += [plot_html(p) for p in plots]
        parts.append("</section>")
    return "".join(parts)


def _section_rule_jobs(description: Mapping[str, Any], reports: Mapping[str, Mapping[str, Any]]) -> str:
    """Each rule's evaluation job (its ARN), its rule output and the findings of its ``rule-report.json``
    (a profiler rule's: of its ``profiler-reports/<Rule>.json``)."""
    statuses = [*(description.get("DebugRuleEvaluationStatuses") or []),
                *(description.get("ProfilerRuleEvaluationStatuses") or [])]  # fmt: skip
    if not statuses:
        return ""
    rows, findings = [], []
    profiler = load_profiler_rule_reports(description)
    for status in statuses:
        rule = str(status.get("RuleConfigurationName", ""))
        report = reports.get(rule)
        count = len(report.get("Findings") or []) if report is not None else None
        cell = "not found" if count is None else str(count)
        if rule in profiler and status in (description.get("ProfilerRuleEvaluationStatuses") or []):
            cell = esc(_profiler_findings(profiler[rule]))
        rows.append([esc(rule), esc(status.get("RuleEvaluationJobArn") or ""), esc(rule_output_uri(description, rule) or ""),
                     cell])  # fmt: skip
        if report is not None and _findings_table(report):
            findings.append(f"<h3>{esc(rule)}</h3>{_findings_table(report)}")
    header = ("rule", "evaluation job", "rule output", "findings (rule-report.json; profiler rules: profiler-reports)")
    return "<h2>Rule jobs</h2>" + table(header, rows, cls="rule-jobs") + "".join(findings)


def _section_trial(trial: Any) -> str:
    summary = summarize_trial(trial)
    rows = [
        [
            esc(m.mode if m.mode != "GLOBAL" else "GLOBAL (no mode set)"),
            str(len(m.steps)),
            esc(format_steps(m.global_steps)),
        ]
        for m in summary.modes
    ]
    colls = ", ".join(f"{esc(k)} ({v})" for k, v in summary.collections.items() if v)
    steps_table = table(("mode", "steps", "global steps"), rows, cls="modes") if rows else "<p>No steps were saved.</p>"
    return (
        "<h2>Saved tensors</h2>"
        f"<p>Workers: {esc(', '.join(summary.workers))}. "
        f"{len(summary.tensors)} tensors. Collections: {colls}.</p>" + steps_table
    )


def job_report_html(description: Mapping[str, Any], *, trial: Any = None) -> str:
    """Render the report of a job as one HTML document.

    Args:
        description: the job's ``describe_training_job`` response.
        trial: the job's trial; opened from :func:`debug_output_uri` when None.

    Returns:
        The HTML text.

    .. versionadded:: 0.1
    """
    job = str(description.get("TrainingJobName", "?"))
    summary = rule_summary(description)
    if trial is None:
        uri = debug_output_uri(description)
        if uri is not None:
            try:
                trial = open_trial(uri)
            except DebuggerExtError:
                trial = None
    head = (
        f"<h1>Debugger report: {esc(job)}</h1>"
        f"<p>Status: <b>{esc(description.get('TrainingJobStatus', '?'))}</b>"
        f" ({esc(description.get('SecondaryStatus', ''))})</p>"
    )
    reason = description.get("FailureReason")
    if reason:
        head += f"<p>Failure reason: {esc(reason)}</p>"
    reports = load_rule_reports(description)
    body = [head, "<h2>Rule summary</h2>", summary.to_html(), _section_rule_jobs(description, reports)]
    if trial is None:
        body.append("<p>No debug output was found for this job, so there are no tensor plots.</p>")
    else:
        body += [_section_trial(trial), _section_losses(trial), _section_flagged(description, trial, reports)]
    return page(f"Debugger report: {job}", body, css=_STYLE)


def write_job_report(description: Mapping[str, Any], out: str | Path, *, trial: Any = None) -> Path:
    """Write :func:`job_report_html` to ``out`` and return the path.

    .. versionadded:: 0.1
    """
    path = Path(out)
    path.write_text(job_report_html(description, trial=trial), encoding="utf-8")
    return path
