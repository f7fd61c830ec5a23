"""One plot of a report (job report, profiler report, XGBoost report): its data, the y axis it needs, and its drawing.

A :class:`PlotData` holds what a plot shows (series over steps, the rule's thresholds, the
steps where the rule fired). :func:`choose_yscale` picks a log axis when the values span
orders of magnitude and a symmetric log axis when signs mix; steps whose value is NaN or
infinite are drawn as red crosses at the axis edge. :func:`plot_html` writes the PNG with
the data next to it as ``<script type="application/json" class="plot-data">``, so a reader
(or a test) can check what was drawn.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from ._html import esc, png_img

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["LOG_SPAN", "PlotData", "Threshold", "choose_yscale", "draw_plot", "figure_png", "json_number", "plot_html"]

LOG_SPAN = 1e3
"""Values whose magnitudes span at least this factor (three orders of magnitude) get a log axis."""

_MAX_FIRED_LINES = 50


@attrs.frozen(kw_only=True)
class Threshold:
    """A threshold of the rule: a horizontal line, or a mark at one step when ``step`` is set."""

    label: str
    value: float
    step: int | None = None


@attrs.frozen(kw_only=True)
class PlotData:
    """What one plot shows.

    Attributes:
        title: the plot's title.
        ylabel: what the y values are.
        series: ``{label: (steps, values)}``; values may be NaN or infinite.
        thresholds: the rule's thresholds.
        fired_steps: steps where the rule fired (faint red vertical lines).
        legend_title: title of the legend of the series.
        tensor_nonfinite_steps: steps where the plotted tensor holds NaN or inf although the
            plotted quantity (say, its percent of zeros) is finite.
    """

    title: str
    ylabel: str
    series: Mapping[str, tuple[Sequence[int], Sequence[float]]]
    thresholds: tuple[Threshold, ...] = ()
    fired_steps: tuple[int, ...] = ()
    legend_title: str | None = None
    tensor_nonfinite_steps: tuple[int, ...] = ()

    def nonfinite_steps(self) -> list[int]:
        """The steps where some series is NaN or infinite, sorted."""
        bad = {int(s) for xs, ys in self.series.values() for s, y in zip(xs, ys, strict=True) if not math.isfinite(y)}
        return sorted(bad.union(self.tensor_nonfinite_steps))

    def yscale(self) -> tuple[str, float | None]:
        """The y scale for the finite values and thresholds: see :func:`choose_yscale`."""
        values = [y for _xs, ys in self.series.values() for y in ys]
        return choose_yscale([*values, *(t.value for t in self.thresholds)])

    def to_json(self) -> dict[str, Any]:
        """The data as drawn: series (non-finite values as "nan"/"inf"/"-inf"), scale, markers."""
        scale, linthresh = self.yscale()
        return {
            "title": self.title,
            "ylabel": self.ylabel,
            "yscale": scale,
            "linthresh": linthresh,
            "series": [
                {"label": label, "steps": [int(s) for s in xs], "values": [json_number(y) for y in ys]}
                for label, (xs, ys) in self.series.items()
            ],
            "nonfinite_steps": self.nonfinite_steps(),
            "thresholds": [attrs.asdict(t) for t in self.thresholds],
            "fired_steps": list(self.fired_steps),
        }


def json_number(value: float) -> float | str:
    """``value``, or ``"nan"``, ``"inf"``, ``"-inf"`` (JSON has no non-finite numbers)."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return float(value)


def _power_floor(x: float) -> float:
    return float(10.0 ** math.floor(math.log10(x)))


def choose_yscale(values: Iterable[float]) -> tuple[str, float | None]:
    """The y scale that shows ``values`` (non-finite ones are ignored).

    Returns:
        ``("log", None)`` when all values are positive and the largest is at least
        :data:`LOG_SPAN` times the smallest; ``("symlog", linthresh)`` when some are zero
        or negative and the largest magnitude is at least :data:`LOG_SPAN` times the lower
        quartile of the non-zero magnitudes (the linear band around zero is that quartile,
        rounded down to a power of ten); else ``("linear", None)``.
    """
    finite = np.array([v for v in values if math.isfinite(v)], dtype=np.float64)
    mags = np.abs(finite[finite != 0])
    if mags.size == 0:
        return "linear", None
    if finite.min() > 0:
        return ("log", None) if mags.max() >= LOG_SPAN * mags.min() else ("linear", None)
    low = float(np.percentile(mags, 25))
    if mags.max() >= LOG_SPAN * low:
        return "symlog", _power_floor(low)
    return "linear", None


def _symlog_ticks(lo: float, hi: float, linthresh: float) -> list[float]:
    """0 and at most about five powers of ten each side, none as close to 0 as ``linthresh`` (labels would overlap)."""
    first = math.floor(math.log10(linthresh))
    decades = [math.ceil(math.log10(end)) - first for end in (hi, -lo) if end > linthresh]
    step = max(1, math.ceil(sum(decades) / 8))
    ticks = [0.0]
    for sign, end in ((1.0, hi), (-1.0, -lo)):
        if end > linthresh:
            ticks += [sign * 10.0**k for k in range(first + step, math.ceil(math.log10(end)) + 1, step)]
    return sorted(ticks)


def draw_plot(data: PlotData, *, ax: Any = None) -> Figure:
    """Draw ``data`` into ``ax`` (a new figure when None) and return the figure."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FixedLocator, LogLocator, MaxNLocator

    if ax is None:
        fig = Figure(figsize=(6.4, 3.6), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    for label, (xs, ys) in data.series.items():
        # a NaN breaks the line: the curve is not drawn through a step without a value
        ax.plot(list(xs), [y if math.isfinite(y) else math.nan for y in ys], marker="o", markersize=3, label=label)
    scale, linthresh = data.yscale()
    if scale == "symlog":
        ax.set_yscale("symlog", linthresh=linthresh)
        finite = [y for _xs, ys in data.series.values() for y in ys if math.isfinite(y)]
        ax.yaxis.set_major_locator(FixedLocator(_symlog_ticks(min(finite), max(finite), linthresh or 1.0)))
        if min(finite) >= 0:  # no negative half for counts, norms and ratios that hit 0
            ax.set_ylim(bottom=0)
    elif scale == "log":
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, numticks=9))
    lines = [t for t in data.thresholds if t.step is None and (scale != "log" or t.value > 0)]
    for i, t in enumerate(lines):
        ax.axhline(
            t.value,
            color="tab:red",
            linestyle="--",
            linewidth=1.2,
            alpha=0.8 - 0.2 * (i % 2),
            label=f"{t.label} = {t.value:.4g}",
        )
    marks = [t for t in data.thresholds if t.step is not None and (scale != "log" or t.value > 0)]
    if marks:
        ax.scatter(
            [t.step for t in marks],
            [t.value for t in marks],
            marker="_",
            s=160,
            color="tab:red",
            linewidths=2,
            label=marks[0].label,
            zorder=3,
        )
    for step in data.fired_steps[:_MAX_FIRED_LINES]:
        ax.axvline(step, color="red", alpha=0.2, linewidth=1)
    bad = data.nonfinite_steps()
    if bad:
        edge = ax.get_xaxis_transform()  # x in data, y in axes fraction
        for step in bad:
            ax.axvline(step, color="darkred", linestyle=":", linewidth=1)
        ax.scatter(
            bad,
            [0.97] * len(bad),
            transform=edge,
            marker="x",
            s=40,
            color="darkred",
            label=f"NaN/inf ({len(bad)} step{'s' if len(bad) > 1 else ''})",
            zorder=4,
            clip_on=False,
        )
    ax.set_title(data.title)
    ax.set_xlabel("global step")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(data.ylabel + {"log": " (log)", "symlog": " (symlog)"}.get(scale, ""))
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(title=data.legend_title, fontsize="small")
    return fig


def figure_png(fig: Figure, *, dpi: int = 100) -> bytes:
    """Render a figure to PNG bytes with the Agg canvas."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def plot_html(data: PlotData, *, wide: bool = False) -> str:
    """A ``<figure class="plot">``: the PNG of :func:`draw_plot` and :meth:`PlotData.to_json`.

    ``wide`` adds the class ``wide`` (a full-width plot; the others sit two to a row).
    """
    doc = json.dumps(data.to_json(), allow_nan=False).replace("</", "<\\/")
    scale = data.yscale()[0]
    return (
        f'<figure class="plot{" wide" if wide else ""}" data-yscale="{esc(scale)}">{png_img(figure_png(draw_plot(data)), data.title)}'
        f'<script type="application/json" class="plot-data">{doc}</script></figure>'
    )
