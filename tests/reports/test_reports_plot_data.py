"""Reports that show the problem: log axes, NaN/inf markers, thresholds, table values on the plotted curve.

The job report is built from real trials and real rule runs, then parsed: each plot carries its
data as ``<script type="application/json" class="plot-data">`` next to the PNG.
"""

from __future__ import annotations

import json
import math
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from synthetic_trial import write_trial

from sagemaker_debugger_ext.modes import ModeKeys
from sagemaker_debugger_ext.render._figure import PlotData, choose_yscale, draw_plot
from sagemaker_debugger_ext.reports import job_report_html, open_trial, rule_output_uri, summarize_trial
from sagemaker_debugger_ext.rules._run_rule import RunRequest, run_rule


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([1.0, 0.5, 0.2], ("linear", None)),
        ([1.0, 1e-2, 1e-4], ("log", None)),
        ([2.0, 1e3, math.nan, math.inf], ("linear", None)),
        ([0.01, 0.003, -1e-5, -0.005], ("linear", None)),
        ([-3.0, 0.5, 2.0, -1e5, 4e6], ("symlog", 1.0)),
        ([0.0, 0.0, 0.2, 0.3, 500.0], ("symlog", 0.1)),
        ([math.nan, math.nan], ("linear", None)),
    ],
    ids=["narrow", "positive-wide", "nonfinite-ignored", "sign-crossing-narrow", "mixed-wide", "zeros-wide", "all-nan"],
)
def test_choose_yscale(values, expected):
    """Log for positive values spanning 3 decades, symlog when signs mix or zeros occur and magnitudes span."""
    assert choose_yscale(values) == expected


def test_draw_plot_marks_nonfinite_steps_and_breaks_the_line():
    """NaN/inf steps are listed, crossed at the top edge, and the curve is not drawn through them."""
    data = PlotData(title="t", ylabel="v", series={"TRAIN": ([0, 1, 2, 3], [1.0, math.nan, math.inf, 1e-4])})
    assert data.nonfinite_steps() == [1, 2]
    ax = draw_plot(data).axes[0]
    assert ax.get_yscale() == "log"
    ys = ax.lines[0].get_ydata()
    assert math.isnan(ys[1]) and math.isnan(ys[2])
    assert any("NaN/inf (2 steps)" in t.get_text() for t in ax.get_legend().get_texts())
    assert data.to_json()["series"][0]["values"] == [1.0, "nan", "inf", 1e-4]


class _Report(HTMLParser):
    """The plot data of each rule section (and of the loss curves), and the rows of each table."""

    def __init__(self) -> None:
        super().__init__()
        self.rule: str | None = None
        self.plots: dict[str | None, list[dict[str, Any]]] = {}
        self.tables: dict[str | None, list[list[list[str]]]] = {}
        self._script = False
        self._cell: list[str] | None = None
        self._row: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.rule = a.get("data-rule")
        elif tag == "script" and a.get("class") == "plot-data":
            self._script = True
        elif tag == "table":
            self.tables.setdefault(self.rule, []).append([])
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "section":
            self.rule = None
        elif tag == "script":
            self._script = False
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[self.rule][-1].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._script:
            self.plots.setdefault(self.rule, []).append(json.loads(data))
        elif self._cell is not None:
            self._cell.append(data)


def _parse(page: str) -> _Report:
    report = _Report()
    report.feed(page)
    return report


def _run_rules(description: dict[str, Any], trial_path: Path) -> None:
    """Run each configured rule on the trial as a rule container does; fill the evaluation statuses."""
    statuses = []
    for cfg in description["DebugRuleConfigurations"]:
        name = cfg["RuleConfigurationName"]
        out = Path(rule_output_uri(description, name).removeprefix("file://"))
        outcome = run_rule(
            RunRequest(
                trial_path=str(trial_path),
                rule_name=name,
                parameters=cfg["RuleParameters"],
                output_dir=out,
                trial_wait_s=0,
            )
        )
        statuses.append(
            {
                "RuleConfigurationName": name,
                "RuleEvaluationStatus": outcome.status.value,
                "StatusDetails": outcome.details,
            }
        )
    description["DebugRuleEvaluationStatuses"] = statuses


def _description(tmp_path: Path, rules: dict[str, dict[str, str]]) -> dict[str, Any]:
    return {
        "TrainingJobName": "job",
        "TrainingJobStatus": "Completed",
        "OutputDataConfig": {"S3OutputPath": (tmp_path / "out").as_uri()},
        "DebugRuleConfigurations": [{"RuleConfigurationName": k, "RuleParameters": v} for k, v in rules.items()],
    }


def _point(plot: dict[str, Any], step: int) -> float | str:
    for series in plot["series"]:
        if step in series["steps"]:
            return series["values"][series["steps"].index(step)]
    raise AssertionError(f"step {step} not plotted in {plot['title']}")


@pytest.fixture(scope="module")
def diverging(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Any]:
    """A trial whose loss falls four decades then turns NaN, and whose gradient vanishes; rules run on it."""
    tmp_path = tmp_path_factory.mktemp("diverging")
    rng = np.random.default_rng(0)
    steps = {}
    for s in range(12):
        grad = rng.standard_normal((4, 4)) * (1e-2 if s < 6 else 1e-9)
        steps[s] = {
            "loss": np.float32(10.0 ** -(s / 2) if s < 10 else np.nan),
            "gradient/fc.weight": grad.astype(np.float32),
        }
    root = write_trial(
        tmp_path / "trial",
        steps,
        collections={"losses": ["loss"], "gradients": ["^gradient/"]},
        modes={s: (ModeKeys.TRAIN, s) for s in steps},
    )
    description = _description(
        tmp_path,
        {
            "VanishingGradient": {"rule_to_invoke": "VanishingGradient", "threshold": "1e-6"},
            "ExplodingTensor": {"rule_to_invoke": "ExplodingTensor", "collection_names": "losses"},
        },
    )
    _run_rules(description, root)
    return description, open_trial(root)


def test_loss_curve_log_axis_and_nan_marker(diverging):
    """A loss spanning five decades is on a log axis; its NaN steps are the marked ones."""
    description, trial = diverging
    report = _parse(job_report_html(description, trial=trial))
    (loss,) = report.plots[None]
    assert loss["yscale"] == "log"
    assert loss["nonfinite_steps"] == [10, 11]
    assert _point(loss, 10) == "nan" and _point(loss, 4) == pytest.approx(1e-2)


def test_vanishing_gradient_threshold_drawn_and_table_on_the_curve(diverging):
    """The rule's threshold is a line, the axis is log, and every table value is the plotted mean |g| at that step."""
    description, trial = diverging
    report = _parse(job_report_html(description, trial=trial))
    (plot,) = report.plots["VanishingGradient"]
    assert plot["ylabel"] == "mean |gradient|" and plot["yscale"] == "log"
    assert plot["thresholds"] == [{"label": "threshold", "value": 1e-6, "step": None}]
    ((header, *rows),) = report.tables["VanishingGradient"]
    assert header[:4] == ["step", "mode", "tensor", "value"]
    assert [int(r[0]) for r in rows] == [6, 7, 8, 9, 10, 11]
    for step, _mode, tensor, value, *_ in rows:
        assert tensor == "gradient/fc.weight"
        assert _point(plot, int(step)) == pytest.approx(float(value), rel=1e-5)
    assert plot["fired_steps"][:1] == [6]


def test_exploding_tensor_plot_marks_the_findings_steps(diverging):
    """ExplodingTensor's plot is the loss with its NaN steps marked: exactly the steps of the findings."""
    description, trial = diverging
    report = _parse(job_report_html(description, trial=trial))
    (plot,) = report.plots["ExplodingTensor"]
    ((_header, *rows),) = report.tables["ExplodingTensor"]
    assert sorted({int(r[0]) for r in rows}) == plot["nonfinite_steps"] == [10, 11]


def test_feature_importance_overweight_table_is_the_plotted_share(tmp_path):
    """FeatureImportanceOverweight's table value (top-3 share) is the plotted share at each step, threshold drawn."""
    xgb = pytest.importorskip("xgboost")
    import sagemaker_debugger_ext.xgboost as smx
    from sagemaker_debugger_ext.hooks import TrainingContext

    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 6))
    y = 3 * x[:, 0] - 2 * x[:, 1] + 0.1 * rng.normal(size=200)
    hook = smx.Hook(
        out_dir=tmp_path / "trial",
        save_config=smx.SaveConfig(save_interval=2),
        context=TrainingContext(),
        include_collections=["metrics", "feature_importance"],
    )
    xgb.train(
        {"max_depth": 3, "seed": 0},
        xgb.DMatrix(x, label=y),
        num_boost_round=8,
        evals=[(xgb.DMatrix(x, label=y), "train")],
        callbacks=[hook],
        verbose_eval=False,
    )
    hook.close()
    description = _description(tmp_path, {"FIO": {"rule_to_invoke": "FeatureImportanceOverweight", "threshold": "0.6"}})
    _run_rules(description, tmp_path / "trial")
    assert description["DebugRuleEvaluationStatuses"][0]["RuleEvaluationStatus"] == "IssuesFound"
    report = _parse(job_report_html(description, trial=open_trial(tmp_path / "trial")))
    (plot,) = report.plots["FIO"]
    assert plot["ylabel"] == "top-3 share"
    assert plot["thresholds"] == [{"label": "threshold", "value": 0.6, "step": None}]
    ((_header, *rows),) = report.tables["FIO"]
    assert rows
    for step, _mode, _tensor, value, *_ in rows:
        assert _point(plot, int(step)) == pytest.approx(float(value), rel=1e-5)
    # the steps-per-mode table of a trial without modes is filled
    modes = next(t for t in report.tables[None] if t[0] == ["mode", "steps", "global steps"])
    assert modes[1] == ["GLOBAL (no mode set)", "4", "0..6 every 2"]


def test_summary_of_trial_without_modes(tmp_path):
    """Steps saved without a mode are one GLOBAL row; steps with modes keep theirs."""
    steps = {s: {"loss": np.float32(1.0)} for s in range(4)}
    modes = {0: (ModeKeys.GLOBAL, 0), 1: (ModeKeys.GLOBAL, 1), 2: (ModeKeys.EVAL, 0), 3: (ModeKeys.EVAL, 1)}
    trial = open_trial(write_trial(tmp_path / "t", steps, collections={"losses": ["loss"]}, modes=modes))
    rows = {m.mode: m.global_steps for m in summarize_trial(trial).modes}
    assert rows == {"GLOBAL": (0, 1), "EVAL": (2, 3)}
