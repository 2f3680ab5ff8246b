"""Deterministic SVG charts (matplotlib, Agg) for the compliance report, as inline markup."""

# Determinism: a fixed `svg.hashsalt` per chart (ids stay unique when several charts share one
# page), no Date or Creator metadata, text as <text> elements (`svg.fonttype = none`) so the
# HTML and the PDF use the document's own fonts, Chinese included. Figures are built through the
# object API (no pyplot state), each on its own Agg canvas, so charts can be drawn from any
# thread and matplotlib's global backend is never switched (a notebook that imports slacheck
# keeps its own). matplotlib and numpy load when the first chart is drawn (the `charts` extra):
# the data classes and colours here are all a draft needs.

from __future__ import annotations

import datetime as dt
import io
import math
import re
import unicodedata
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from slacheck.messages import NC_, MessageCode, Param, render
from slacheck.render.figure import apart
from slacheck.render.format import Formatter, window_kind

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

__all__ = [
    "PART_COLOURS",
    "VERDICT_COLOURS",
    "ChartWord",
    "Distribution",
    "MonthlyPoint",
    "PeakPoint",
    "latency_distribution",
    "monthly_compliance",
    "peak_vs_off_peak",
    "share_label",
    "time_breakdown",
]

VERDICT_COLOURS: dict[str, str] = {
    "met": "#1a7f37",
    "breached": "#cf222e",
    "indeterminate": "#bf8700",
    "not_measurable": "#6e7781",
    "no_data": "#8c959f",
}
PART_COLOURS: dict[str, str] = {
    "model": "#0969da",
    "network": "#8250df",
    "queue": "#bf3989",
    "unsplit": "#54aeff",
    "tool": "#1a7f37",
    "retrieval": "#4ac26b",
    "retries": "#cf222e",
    "gaps": "#afb8c1",
}
_INK = "#24292f"
_GRID = "#d0d7de"
#: the document's own font first: weasyprint draws SVG text with the first family it has
_FONTS = ["Noto Sans CJK SC", "DejaVu Sans"]


@dataclass(frozen=True, slots=True)
class Distribution:
    """One latency term's measured values over the period, and where they were measured."""

    term_id: str
    values: npt.NDArray[np.float64]
    threshold: float
    at_most: bool
    unit: str  # "ms" or "tokens/s"
    percentile: float | None  # the occurrence objective's percentile, if any
    measured_at: str  # the point the values were read at
    #: "upper" (a later point stands in: values ≥ the contracted ones), "lower" (whole-request
    #: speed stands in for generation speed: values ≤ the contracted ones), "mixed" (each
    #: unit's own value where recorded, else such a bound, as the check counts), or None
    bound: str | None
    monthly: tuple[tuple[str, float], ...]  # (window, observed) as the check reported them
    unit_word: str = "calls"  # what one value is: "calls" or "tasks"


@dataclass(frozen=True, slots=True)
class MonthlyPoint:
    """One term-window as the check reported it, against the figure its criterion compares
    ``observed`` with: the latency threshold for an occurrence term, the share of slices that
    must pass (``slices_passing_percent``) for a time-slice term."""

    term_id: str
    window: str
    verdict: str
    observed: float | None
    target: float
    at_most: bool = True  # the observed figure must stay at or below the target

    @property
    def share(self) -> float | None:
        """``observed`` as a percentage of ``target``: the bar's height."""
        if self.observed is None or self.target == 0:
            return None
        return 100.0 * self.observed / self.target


@dataclass(frozen=True, slots=True)
class PeakPoint:
    window: str
    p95_at_peak: float | None
    p95_off_peak: float | None
    peak_minutes: int


@contextmanager
def _style(fmt: Formatter, salt: str) -> Iterator[None]:
    import matplotlib

    rc = matplotlib.rc_context(
        {
            "svg.hashsalt": f"slacheck-{salt}",
            "svg.fonttype": "none",
            "font.family": "sans-serif",
            "font.sans-serif": _FONTS,
            "font.size": 8,
            "axes.edgecolor": _GRID,
            "axes.labelcolor": _INK,
            "axes.titlesize": 9,
            "xtick.color": _INK,
            "ytick.color": _INK,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "legend.frameon": False,
            "path.simplify": True,
            # contract text (term ids) is drawn as text, never parsed as $math$
            "text.parse_math": False,
        }
    )
    with rc, warnings.catch_warnings():
        # a machine without the CJK font still gets correct SVG text (the viewer's fonts draw
        # it); matplotlib only measures the label with a fallback font (matplotlib < 3.9 says
        # "missing from current font")
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from (current )?font")
        warnings.filterwarnings("ignore", message=r"findfont")
        yield


class ChartWord(MessageCode):
    """Every word drawn in a chart (axis labels, legends, markers, the screen-reader label),
    worded in the catalogue like any other message."""

    DISTRIBUTION = NC_(
        "chart.distribution", "{term}: distribution of {point} against the threshold"
    )
    NO_MEASUREMENTS = NC_("chart.no_measurements", "no measurements in the period")
    THRESHOLD = NC_("chart.threshold", "threshold {value}")
    AXIS_UPPER = NC_("chart.axis.upper", "{point} (upper bound)")
    AXIS_LOWER = NC_("chart.axis.lower", "{point} (lower bound)")
    AXIS_MIXED = NC_("chart.axis.mixed", "{point} (a bound where not recorded)")
    AXIS_TOKENS_PER_SECOND = NC_("chart.axis.tokens_per_second", "{axis} (tokens/s)")
    COUNT_TASKS = NC_("chart.count.tasks", "tasks (n = {n})")
    COUNT_CALLS = NC_("chart.count.calls", "calls (n = {n})")
    BREAKDOWN = NC_("chart.breakdown", "Where agent task time goes")
    NO_TASK_TIMES = NC_("chart.no_task_times", "no task times in the traces")
    MEAN_PER_TASK = NC_("chart.mean_per_task", "mean time per task (ms / s)")
    MONTHLY = NC_("chart.monthly", "Latency terms per window: observed ÷ threshold")
    NO_LATENCY_TERMS = NC_("chart.no_latency_terms", "no latency terms")
    SHARE_OF_THRESHOLD = NC_("chart.share_of_threshold", "observed ÷ threshold (%)")
    CALENDAR_MONTH = NC_("chart.calendar_month", "calendar month")
    PEAK = NC_("chart.peak", "p95 full response time: peak vs off-peak")
    NO_PEAK = NC_("chart.no_peak", "the contract defines no peak")
    OFF_PEAK_BARS = NC_("chart.legend.off_peak", "off-peak")
    PEAK_BARS = NC_("chart.legend.peak", "peak")
    NO_PEAK_MINUTES = NC_("chart.no_peak_minutes", "no peak minutes")
    P95_FULL_RESPONSE = NC_("chart.p95_full_response", "p95 full response time")


def _say(fmt: Formatter, code: ChartWord, **params: Param) -> str:
    """``code`` in the chart's language, from the catalogue."""
    return render(code(**params), fmt.lang)


def _figure(width: float = 7.5, height: float = 2.6) -> Figure:
    """A figure on its own Agg canvas: no pyplot, no global backend."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=72, layout="constrained")
    FigureCanvasAgg(fig)
    fig.patch.set_alpha(0.0)
    return fig


_XML_HEAD = re.compile(r"\A.*?(?=<svg)", re.S)
_ID = re.compile(r' id="([^"]+)"')
_REF = re.compile(r"#([^\s\"')]+)")


def _drop_unused_ids(svg: str) -> str:
    """Remove ids nothing points at (matplotlib names every group `figure_1`, `axes_1`, …), so
    several charts on one page do not repeat ids; salted clip-path ids stay."""
    used = set(_REF.findall(svg))
    return _ID.sub(lambda m: m.group(0) if m.group(1) in used else "", svg)


def _svg(fig: Figure, label: str) -> Markup:
    """The figure as inline SVG: XML header and DOCTYPE removed, labelled for screen readers."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, transparent=True)
    text = _drop_unused_ids(_XML_HEAD.sub("", buf.getvalue(), count=1))
    safe_label = Markup.escape(label)
    text = text.replace("<svg ", f'<svg role="img" aria-label="{safe_label}" ', 1)
    # the SVG is matplotlib's own output: every label in it was escaped by its writer
    return Markup(text.strip())


#: a label drawn over bars and lines sits on a pale patch, so the lines never cross its words
_UNDER_TEXT = {"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 0.5}


def _axis_ms(fmt: Formatter) -> FuncFormatter:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _pos: fmt.duration(v) if v >= 0 else "")


def _empty(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#57606a")
    ax.set_xticks([])
    ax.set_yticks([])


def latency_distribution(d: Distribution, fmt: Formatter) -> Markup:
    """Histogram of a latency term's values, with the threshold and each month's observed
    percentile as the check reported it."""
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    point = fmt.point(d.measured_at)
    label = _say(fmt, ChartWord.DISTRIBUTION, term=d.term_id, point=point)
    with _style(fmt, f"dist-{d.term_id}"):
        fig = _figure(7.5, 2.4)
        ax = fig.add_subplot()
        values = d.values[np.isfinite(d.values)]
        if values.size == 0:
            _empty(ax, _say(fmt, ChartWord.NO_MEASUREMENTS))
            return _svg(fig, label)
        hi = float(max(d.threshold * 1.25, np.quantile(values, 0.995)))
        lo = 0.0
        clipped = np.clip(values, lo, hi)
        # bin edges on the threshold, so each bin lies wholly on one side of it
        below = max(1, round(40 * (d.threshold - lo) / (hi - lo)))
        edges = np.unique(
            np.concatenate(
                (np.linspace(lo, d.threshold, below + 1), np.linspace(d.threshold, hi, 41 - below))
            )
        )
        counts, edges = np.histogram(clipped, bins=edges)
        # two filled step outlines (passing, failing) instead of one rectangle per bin: the SVG
        # stays small and quick to lay out in the PDF
        left = edges[:-1] < d.threshold
        good = left if d.at_most else ~left
        for mask, colour in ((good, VERDICT_COLOURS["met"]), (~good, VERDICT_COLOURS["breached"])):
            ax.stairs(np.where(mask, counts, 0), edges, fill=True, color=colour, alpha=0.55)
        ax.axvline(d.threshold, color=VERDICT_COLOURS["breached"], linewidth=1.6)
        top = float(counts.max()) if counts.size else 1.0
        ax.text(
            d.threshold,
            top * 1.04,
            _say(fmt, ChartWord.THRESHOLD, value=_value(fmt, d.threshold, d.unit)) + " ",
            color=VERDICT_COLOURS["breached"],
            va="bottom",
            ha="right",
            bbox=_UNDER_TEXT,
        )
        pct = fmt.percentile(d.percentile) if d.percentile is not None else ""
        for i, (window, observed) in enumerate(d.monthly):
            x = min(observed, hi)
            ax.axvline(x, color=_INK, linewidth=0.9, linestyle=(0, (3, 2)))
            text = f"{pct} {fmt.window_short(window)}: {_value(fmt, observed, d.unit)}"
            # each window's label on its own line, on the side of its marker with more room
            right = x > lo + 0.6 * (hi - lo)
            ax.text(
                x,
                top * (0.9 - 0.13 * i),
                f"{text} " if right else f" {text}",
                color=_INK,
                fontsize=8,
                va="top",
                ha="right" if right else "left",
                bbox=_UNDER_TEXT,
            )
        ax.set_ylim(0, top * 1.18)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=4))
        if d.unit == "ms":
            ax.xaxis.set_major_formatter(_axis_ms(fmt))
        ax.set_xlim(lo, hi)
        n = fmt.count(values.size)
        bound = {
            "upper": ChartWord.AXIS_UPPER,
            "lower": ChartWord.AXIS_LOWER,
            "mixed": ChartWord.AXIS_MIXED,
        }.get(d.bound or "")
        axis = point if bound is None else _say(fmt, bound, point=point)
        if d.unit != "ms":
            axis = _say(fmt, ChartWord.AXIS_TOKENS_PER_SECOND, axis=axis)
        what = ChartWord.COUNT_TASKS if d.unit_word == "tasks" else ChartWord.COUNT_CALLS
        ax.set_xlabel(axis)
        ax.set_ylabel(_say(fmt, what, n=n))
        ax.grid(axis="y", color=_GRID, linewidth=0.6)
        ax.set_axisbelow(True)
        return _svg(fig, label)


def share_label(share: float) -> str:
    """A bar's observed ÷ threshold in whole percent, or with the decimals that tell it from
    the threshold's 100 % when it is not the threshold (a breach by 0.2 % reads "100.2%")."""
    return apart(share, 100.0, lambda x, d: f"{x:.{d}f}%", 0, most=6)


def _value(fmt: Formatter, v: float, unit: str) -> str:
    return fmt.duration(v) if unit == "ms" else fmt.observed(v, unit)


def time_breakdown(parts: Sequence[tuple[str, float, float]], fmt: Formatter) -> Markup:
    """Where task time goes: mean ms per task for each part (name, per-task ms, share)."""
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    label = _say(fmt, ChartWord.BREAKDOWN)
    shown = [(n, ms, share) for n, ms, share in parts if ms > 0]
    with _style(fmt, "breakdown"):
        fig = _figure(7.5, 0.5 + 0.26 * max(len(shown), 2))
        ax = fig.add_subplot()
        if not shown:
            _empty(ax, _say(fmt, ChartWord.NO_TASK_TIMES))
            return _svg(fig, label)
        names = [fmt.name("part", n) for n, _, _ in shown]
        y = np.arange(len(shown))[::-1]
        widths = np.array([ms for _, ms, _ in shown])
        ax.barh(y, widths, color=[PART_COLOURS.get(n, _GRID) for n, _, _ in shown], height=0.62)
        ax.set_yticks(y, names)
        ax.xaxis.set_major_formatter(_axis_ms(fmt))
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
        right = float(widths.max()) * 1.32
        ax.set_xlim(0, right)
        for yi, (_name, ms, share) in zip(y, shown, strict=True):
            ax.text(ms + right * 0.01, yi, f"{fmt.duration(ms)} ({fmt.ratio(share)})", va="center")
        ax.set_xlabel(_say(fmt, ChartWord.MEAN_PER_TASK))
        ax.grid(axis="x", color=_GRID, linewidth=0.6)
        ax.set_axisbelow(True)
        ax.tick_params(axis="y", length=0)
        return _svg(fig, label)


#: panels per row of the small multiples, and each panel's height (inches)
_PANEL_COLUMNS = 4
_PANEL_HEIGHT = 1.6


def _tick(fmt: Formatter, label: str) -> str:
    """A window's label under its bar in a small panel, the year left to the report's period:
    "Jul" / "7月", "Q3" / "第三季度", a rolling window by its first day, "31 Jul" / "7月31日"."""
    kind = window_kind(label)
    try:
        if kind == "rolling_30_days":
            day = dt.date.fromisoformat(label.split("/", 1)[0])
            if fmt.zh:
                return f"{day.month}月{day.day}日"
            return f"{day.day} {fmt.window_short(day.strftime('%Y-%m')).split()[0]}"
        if kind == "calendar_quarter":
            return fmt.window(label).split()[0] if not fmt.zh else fmt.window(label)[5:]
        if fmt.zh:
            return f"{int(label[5:7])}月"
        return fmt.window_short(label).split()[0]
    except ValueError:
        return label


def _width(text: str) -> int:
    """Display width: a CJK character takes two columns."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _fit_middle(text: str, width: int) -> str:
    """``text`` within ``width`` columns, cut in the middle so both ends stay: term ids differ
    at their start (L01, L02) or at their end (…-p95-monthly, …-p99-quarterly)."""
    if _width(text) <= width:
        return text
    head, tail = "", ""
    chars = list(text)
    while chars:
        if _width(head) + _width(tail) + _width(chars[0]) >= width:
            break
        head += chars.pop(0)
        if chars and _width(head) + _width(tail) + _width(chars[-1]) < width:
            tail = chars.pop() + tail
    return head + "…" + tail


_ID_JOINT = re.compile(r"(?<=[-_/:. ])")


def _wrap_id(text: str, width: int = 30, lines: int = 2) -> str:
    """A term id on at most ``lines`` lines of ``width`` columns (a small panel's width),
    broken after its hyphens (and ``_ / : .``); what still does not fit is cut in the middle
    of the last line. The full id stays in the tables."""
    out: list[str] = []
    line = ""
    for piece in _ID_JOINT.split(text):
        if line and _width(line) + _width(piece) > width and len(out) < lines - 1:
            out.append(_fit_middle(line, width))
            line = ""
        line += piece
    out.append(_fit_middle(line, width))
    return "\n".join(out)


def monthly_compliance(
    points: Sequence[MonthlyPoint], windows: Sequence[str], fmt: Formatter
) -> Markup:
    """Small multiples: one panel per latency term, in the contract's order, with its own
    windows (months, rolling 30-day windows or the quarter) and each window's observed figure
    as a share of its threshold (100 % is the threshold), coloured by the window's verdict."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    label = _say(fmt, ChartWord.MONTHLY)
    terms = list(dict.fromkeys(p.term_id for p in points))
    with _style(fmt, "monthly"):
        if not terms or not windows:
            fig = _figure(7.5, 1.2)
            _empty(fig.add_subplot(), _say(fmt, ChartWord.NO_LATENCY_TERMS))
            return _svg(fig, label)
        order = {w: i for i, w in enumerate(windows)}
        columns = min(_PANEL_COLUMNS, len(terms))
        rows = math.ceil(len(terms) / columns)
        fig = _figure(7.5, 0.45 + _PANEL_HEIGHT * rows)
        # room between rows: a panel's two-line title clears the tick labels above it
        engine = fig.get_layout_engine()
        if isinstance(engine, ConstrainedLayoutEngine):
            engine.set(h_pad=0.06, hspace=0.04)
        axes = fig.subplots(rows, columns, squeeze=False, sharey=True)
        shares = [p.share for p in points if p.share is not None]
        top = math.ceil(max([100.0, *shares]) * 1.2 / 25) * 25
        seen: dict[str, None] = {}
        for n, term in enumerate(terms):
            ax = axes[n // columns][n % columns]
            own = sorted(
                (p for p in points if p.term_id == term),
                key=lambda p: (order.get(p.window, len(order)), p.window),
            )
            kind = window_kind(own[0].window)
            side = "≤" if own[0].at_most else "≥"
            name = fmt.name("window", kind)
            ax.set_title(f"{_wrap_id(term)}\n{side} 100% · {name}", fontsize=7, loc="left", pad=3)
            for x, p in enumerate(own):
                share = p.share
                if p.observed is None or share is None:
                    ax.text(x, 2, "—", ha="center", va="bottom", color="#57606a", fontsize=7)
                    continue
                faded = p.verdict in ("no_data", "indeterminate", "not_measurable")
                seen[p.verdict] = None
                ax.bar(
                    x,
                    min(share, top),
                    width=0.7,
                    color=VERDICT_COLOURS.get(p.verdict, _GRID),
                    alpha=0.45 if faded else 0.9,
                    hatch="///" if faded else None,
                    linewidth=0,
                )
                ax.text(
                    x,
                    min(share, top),
                    share_label(share),
                    ha="center",
                    va="bottom",
                    fontsize=6,
                    bbox=_UNDER_TEXT,
                )
            ax.axhline(100, color=_INK, linewidth=0.8, linestyle=(0, (4, 2)))  # the threshold
            ax.set_xticks(range(len(own)), [_tick(fmt, p.window) for p in own], fontsize=6)
            ax.tick_params(axis="x", length=0, pad=2)
            ax.tick_params(axis="y", labelsize=6)
            # at least four slots, so one quarter's bar is as wide as one month's
            ax.set_xlim(-0.6, max(len(own), 4) - 0.4)
            ax.set_ylim(0, top * 1.12)
            ax.yaxis.set_major_locator(MaxNLocator(nbins=4))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:.0f}%"))
            ax.grid(axis="y", color=_GRID, linewidth=0.5)
            ax.set_axisbelow(True)
        for n in range(len(terms), rows * columns):
            axes[n // columns][n % columns].set_visible(False)
        fig.supylabel(_say(fmt, ChartWord.SHARE_OF_THRESHOLD), fontsize=7)
        handles = [
            Patch(color=VERDICT_COLOURS[v], alpha=0.9, label=fmt.verdict(v))
            for v in VERDICT_COLOURS
            if v in seen
        ]
        if handles:
            fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=7)
        return _svg(fig, label)


def peak_vs_off_peak(points: Sequence[PeakPoint], fmt: Formatter) -> Markup:
    """Per month: p95 full-response time of calls in peak minutes against the rest."""
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    label = _say(fmt, ChartWord.PEAK)
    with _style(fmt, "peak"):
        fig = _figure(7.5, 2.1)
        ax = fig.add_subplot()
        if not points:
            _empty(ax, _say(fmt, ChartWord.NO_PEAK))
            return _svg(fig, label)
        x = np.arange(len(points))
        off = [p.p95_off_peak for p in points]
        at = [p.p95_at_peak for p in points]
        off_name = _say(fmt, ChartWord.OFF_PEAK_BARS)
        at_name = _say(fmt, ChartWord.PEAK_BARS)
        ax.bar(x - 0.18, [v or 0.0 for v in off], width=0.34, color="#54aeff", label=off_name)
        ax.bar(x + 0.18, [v or 0.0 for v in at], width=0.34, color="#bf3989", label=at_name)
        top = max([v for v in (*off, *at) if v is not None] or [1.0])
        for xi, p in zip(x, points, strict=True):
            for dx, v in ((-0.18, p.p95_off_peak), (0.18, p.p95_at_peak)):
                if v is not None:
                    ax.text(xi + dx, v, fmt.duration(v), ha="center", va="bottom", fontsize=7)
            if p.p95_at_peak is None:
                none = _say(fmt, ChartWord.NO_PEAK_MINUTES)
                ax.text(
                    xi + 0.18,
                    top * 0.04,
                    none,
                    ha="center",
                    va="bottom",
                    fontsize=7,
                    rotation=90,
                    color="#57606a",
                )
        ax.set_xticks(x, [fmt.window_short(p.window) for p in points])
        ax.yaxis.set_major_formatter(_axis_ms(fmt))
        ax.yaxis.set_major_locator(MaxNLocator(nbins=4))
        ax.set_ylim(0, top * 1.2)
        ax.set_ylabel(_say(fmt, ChartWord.P95_FULL_RESPONSE))
        ax.set_xlabel(_say(fmt, ChartWord.CALENDAR_MONTH))
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.grid(axis="y", color=_GRID, linewidth=0.6)
        ax.set_axisbelow(True)
        return _svg(fig, label)
