"""Summaries, plots and HTML reports built from trials and finished jobs.

.. versionadded:: 0.1
"""

from __future__ import annotations

from ..rules._summary import RuleRow, RuleSummary, rule_summary
from ._job_report import (
    debug_output_uri,
    flagged_tensors,
    job_report_html,
    load_rule_reports,
    loss_tensors,
    rule_output_uri,
    write_job_report,
)
from ._local_job import (
    JOB_REPORT_FILE,
    describe_local_job,
    profiler_output_dir,
    write_job_reports,
    write_local_job_reports,
)
from ._plots import (
    REDUCTIONS,
    figure_png,
    plot_series,
    plot_tensor,
    reduce_value,
    save_tensor_plot,
    tensor_series,
)
from ._summary import (
    ModeSteps,
    TensorRow,
    TrialSummary,
    format_steps,
    open_trial,
    summarize_trial,
)

__all__ = [
    "JOB_REPORT_FILE",
    "REDUCTIONS",
    "ModeSteps",
    "RuleRow",
    "RuleSummary",
    "TensorRow",
    "TrialSummary",
    "debug_output_uri",
    "describe_local_job",
    "figure_png",
    "flagged_tensors",
    "format_steps",
    "job_report_html",
    "load_rule_reports",
    "loss_tensors",
    "open_trial",
    "plot_series",
    "plot_tensor",
    "profiler_output_dir",
    "reduce_value",
    "rule_output_uri",
    "rule_summary",
    "save_tensor_plot",
    "summarize_trial",
    "tensor_series",
    "write_job_report",
    "write_job_reports",
    "write_local_job_reports",
]
