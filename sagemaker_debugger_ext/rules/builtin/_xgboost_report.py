"""CreateXgboostReport: an HTML training report from an XGBoost trial (not a check)."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any

import numpy as np

from ...render._figure import PlotData, plot_html
from .._result import RuleResult
from ._base import BuiltinRule
from ._classification import class_ids

__all__ = ["REPORT_FILE", "CreateXgboostReport"]

REPORT_FILE = "xgboost_report.html"
_METRIC_PREFIXES = ("train", "validation", "valid", "eval", "test")


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _plain(value: Any) -> str:
    """A hyperparameter as it was given: ``0.3``, ``logloss`` (saved as one-element arrays)."""
    arr = np.asarray(value)
    return str(arr.reshape(-1)[0]) if arr.size == 1 else str(arr.tolist())


class CreateXgboostReport(BuiltinRule):
    """Writes ``xgboost_report.html`` to the rule output at the end of training: metric
    (loss) curves, feature importance, confusion matrix, label/prediction distributions
    and hyperparameters, each plot a PNG embedded as a data URI. Never fires."""

    DESCRIPTION = (
        "writes xgboost_report.html (metric curves, feature importance, confusion matrix, distributions); never fires"
    )
    PARAMETERS = ()

    def evaluate(self, step: int) -> RuleResult:
        return RuleResult.not_met()

    # --- data -------------------------------------------------------------------------
    def _series(self, name: str) -> tuple[list[int], list[float]]:
        xs, ys = [], []
        for s in self.steps_of(name):
            v = self.value_at(name, s)
            if v is not None and v.size == 1:
                xs.append(s)
                ys.append(float(v.reshape(())))
        return xs, ys

    def _latest(self, name: str) -> np.ndarray | None:
        steps = self.steps_of(name)
        return self.value_at(name, steps[-1]) if steps else None

    def _metrics(self) -> list[str]:
        names = set(self.select_tensors(["metrics"]))
        names.update(
            n for n in self.base_trial.tensor_names() if n.split("-", 1)[0].lower() in _METRIC_PREFIXES and "-" in n
        )
        return sorted(names)

    def _importances(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for name in self.select_tensors(regexes=[r"(.*/)?feature_importance/"]):
            parts = name.split("feature_importance/", 1)[1].split("/", 1)
            v = self._latest(name)
            if len(parts) == 2 and v is not None and v.size == 1:
                out.setdefault(parts[0], {})[parts[1]] = float(v.reshape(()))
        return out

    # --- report -----------------------------------------------------------------------
    def finalize(self, output_dir: Path) -> None:
        """Write the HTML report into ``output_dir``."""
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        sections: list[str] = []

        def figure(title: str, draw: Any, note: str = "") -> None:
            fig, ax = plt.subplots(figsize=(6.5, 3.6))
            draw(ax)
            ax.set_title(title)
            sections.append(f"<h2>{html.escape(title)}</h2>{note}<img alt='{html.escape(title)}' src='{_png(fig)}'/>")
            plt.close(fig)

        metrics = self._metrics()
        if metrics:  # log axis when the metrics span orders of magnitude, NaN/inf rounds marked
            curves = PlotData(
                title="Loss and metric curves",
                ylabel="metric value",
                series={m: self._series(m) for m in metrics},
                legend_title="metric",
            )
            sections.append(f"<h2>Loss and metric curves</h2>{plot_html(curves)}")
        for kind, values in sorted(self._importances().items()):
            top = sorted(values.items(), key=lambda kv: kv[1], reverse=True)[:20]

            def draw_imp(ax: Any, top: list[tuple[str, float]] = top) -> None:
                ax.barh([k for k, _ in top][::-1], [v for _, v in top][::-1])
                ax.set_xlabel("importance")

            figure(f"Feature importance ({kind})", draw_imp)
        labels_names = self.select_tensors(regexes=[r"(.*/)?labels$"])
        pred_names = self.select_tensors(regexes=[r"(.*/)?predictions$"])
        y = self._latest(labels_names[0]) if labels_names else None
        p = self._latest(pred_names[0]) if pred_names else None
        if y is not None and p is not None:
            yc, pc = class_ids(y), class_ids(p)
            classification = (
                y.size and np.all(np.mod(y.ravel(), 1) == 0) and len(np.unique(yc)) <= 50 and yc.shape == pc.shape
            )
            if classification:
                k = int(max(yc.max(), pc.max())) + 1
                matrix = np.zeros((k, k), dtype=np.int64)
                np.add.at(matrix, (yc, pc), 1)

                def draw_cm(ax: Any) -> None:
                    ax.imshow(matrix, cmap="Blues")
                    dark = matrix.max() / 2
                    for (i, j), n in np.ndenumerate(matrix):
                        ax.text(j, i, str(n), ha="center", va="center", color="white" if n > dark else "black")
                    ax.set_xticks(range(k))
                    ax.set_yticks(range(k))
                    ax.set_xlabel("predicted class")
                    ax.set_ylabel("label (class)")

                accuracy = float(np.trace(matrix)) / max(int(matrix.sum()), 1)
                figure("Confusion matrix", draw_cm, f"<p>Accuracy: {accuracy:.4f}</p>")

            def draw_dist(ax: Any) -> None:
                ax.hist(np.asarray(y, dtype=np.float64).ravel(), bins=30, alpha=0.6, label="labels")
                ax.hist(np.asarray(p, dtype=np.float64).ravel(), bins=30, alpha=0.6, label="predictions")
                ax.legend()

            figure("Label and prediction distributions", draw_dist)
        hps = {
            n.split("hyperparameters/", 1)[1]: self._latest(n)
            for n in self.select_tensors(regexes=[r"(.*/)?hyperparameters/"])
        }
        if hps:
            rows = "".join(
                f"<tr><td>{html.escape(k)}</td><td>{html.escape(_plain(v))}</td></tr>" for k, v in sorted(hps.items())
            )
            sections.append(f"<h2>Hyperparameters</h2><table>{rows}</table>")
        steps = self.base_trial.steps()
        modes = sorted({self.mode_of(s)[0].name for s in steps}) if steps else []
        summary = f"<p>{len(steps)} steps saved (modes: {', '.join(modes) or 'none'}); {len(self.base_trial.tensor_names())} tensors.</p>"
        if not sections:
            sections.append("<p>No XGBoost metrics, feature importances, labels or predictions were saved.</p>")
        page = (
            "<!DOCTYPE html><html><head><meta charset='utf-8'><title>XGBoost training report</title>"
            "<style>body{font-family:sans-serif;max-width:60em;margin:auto}img{max-width:100%}"
            "td{border:1px solid #ccc;padding:2px 6px}figure.plot{margin:0}</style></head><body>"
            f"<h1>XGBoost training report</h1>{summary}{''.join(sections)}</body></html>"
        )
        output_dir.mkdir(parents=True, exist_ok=True)
        (output_dir / REPORT_FILE).write_text(page, encoding="utf-8")
