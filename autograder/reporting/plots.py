"""The class report's figures, drawn on matplotlib's Agg canvas (no display, no pyplot: no
backend to select and no global figure registry to close)."""

from __future__ import annotations

import functools
import io
import warnings

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

WIDTH, HEIGHT = 6.4, 3.6
#: Labels are student text (file names): drawn as they are, never parsed as mathtext or TeX
#: (``grade$\\foo$.ipynb`` would otherwise stop the whole report with a parse error).
PLAIN_TEXT = {"text.usetex": False, "text.parse_math": False}


def _plain(draw):
    """Run ``draw`` (and its savefig, where text is laid out) with ``PLAIN_TEXT``."""
    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(PLAIN_TEXT), warnings.catch_warnings():
            # a name in a script the font lacks (CJK, with matplotlib's DejaVu Sans) is drawn
            # as boxes, and the HTML beside the figure spells it: one warning per glyph on
            # the staff's terminal said nothing they could act on (red team rt-s3)
            warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from",
                                    category=UserWarning)
            return draw(*args, **kwargs)
    return wrapper


def _axes(height: float):
    """A new figure ``WIDTH`` by ``height`` inches on its own Agg canvas, and its one axes."""
    fig = Figure(figsize=(WIDTH, height))
    FigureCanvasAgg(fig)
    return fig, fig.subplots()


def _png(fig: Figure) -> bytes:
    """The figure as PNG bytes."""
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    return buf.getvalue()


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()


@_plain
def score_distribution(percents: list[float]) -> bytes:
    """Histogram of total scores, in percent, ten bins from 0 to 100."""
    fig, ax = _axes(HEIGHT)
    ax.hist([100 * p for p in percents], bins=range(0, 101, 10), color="#4c72b0",
            edgecolor="white")
    ax.set(xlabel="total score (%)", ylabel="submissions", title="Score distribution",
           xlim=(0, 100))
    ax.yaxis.get_major_locator().set_params(integer=True)
    return _png(fig)


@_plain
def horizontal_bars(labels: list[str], values: list[float], *, title: str, xlabel: str,
                    color: str = "#4c72b0", xmax: float | None = None,
                    integer: bool = False) -> bytes:
    """One labelled bar per item, top to bottom in the given order; ``integer``: counts, so
    the axis ticks only whole numbers."""
    fig, ax = _axes(max(HEIGHT, 0.35 * len(labels) + 1.2))
    if not labels:
        _empty(ax, "nothing to show")
    else:
        ax.barh(range(len(labels)), values, color=color)
        ax.set_yticks(range(len(labels)), labels)
        ax.invert_yaxis()
        ax.set_xlabel(xlabel)
        if xmax is not None:
            ax.set_xlim(0, xmax)
        if integer:
            ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_title(title)
    return _png(fig)
