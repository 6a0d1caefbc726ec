"""What every figure the project draws must satisfy, checked on the rendered figure (Agg).

* every axes with data has an x and a y label, each with a unit in brackets or parentheses
  (a shared x axis needs its label on the bottom row only);
* no legend covers a data point of any line, bar or scatter;
* no text drawn inside an axes (a summary box, a label) covers a data point of that axes;
* titles, texts, annotations and legends do not overlap one another;
* tick labels of one axis do not overlap each other.
"""

from __future__ import annotations

import re

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

UNIT = re.compile(r"[\[(][^\])]+[\])]")


def _data_points(ax) -> np.ndarray:
    """Display coordinates of the data drawn in ``ax`` (lines, bars, scatters)."""
    points = []
    for line in ax.get_lines():
        if line.get_gid() == "reference" or not line.get_visible():
            continue
        xy = np.column_stack(
            [np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)]
        )
        if (
            len(xy) == 2
            and (np.ptp(xy[:, 0]) == 0 or np.ptp(xy[:, 1]) == 0)
            and (line.get_transform() != ax.transData)
        ):
            continue  # axhline/axvline: a reference, not data
        points.append(line.get_transform().transform(xy[np.isfinite(xy).all(axis=1)]))
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_height() != 0:
            corners = patch.get_bbox().get_points()
            top = np.array(
                [[corners[:, 0].mean(), corners[1, 1] if patch.get_height() > 0 else corners[0, 1]]]
            )
            points.append(ax.transData.transform(top))
    for collection in ax.collections:
        if isinstance(collection, PathCollection):
            points.append(collection.get_offset_transform().transform(collection.get_offsets()))
    return np.vstack(points) if points else np.empty((0, 2))


def _overlaps(boxes) -> bool:
    boxes = [b for b in boxes if b.width > 0]
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


def _texts(fig: Figure, renderer) -> list[tuple[str, object, object]]:
    """``(name, window extent, axes or None)`` of every visible, non-empty text but tick and
    axis labels: the figure's title and texts, each axes' titles, texts and annotations."""
    found = []
    titles = [getattr(fig, "_suptitle", None), *fig.texts]
    candidates = [(t, None) for t in dict.fromkeys(t for t in titles if t)]  # once each
    for ax in fig.axes:
        candidates += [(t, None) for t in (ax.title, ax._left_title, ax._right_title)]
        candidates += [(t, ax) for t in ax.texts]
    for text, ax in candidates:
        if text.get_visible() and text.get_text().strip():
            found.append((repr(text.get_text()[:40]), text.get_window_extent(renderer), ax))
    return found


def figure_problems(fig: Figure) -> list[str]:
    """Every breach of the rules above, as readable lines (empty: the figure is fine)."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    problems: list[str] = []
    legends = [*fig.legends] + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    boxes = [legend.get_window_extent(renderer) for legend in legends]
    texts = _texts(fig, renderer)
    labelled = [*texts, *(("the legend", box, None) for box in boxes)]
    for i, (name, box, _) in enumerate(labelled):
        for other, other_box, _ in labelled[i + 1 :]:
            if box.width > 0 and other_box.width > 0 and box.overlaps(other_box):
                problems.append(f"{name} and {other} overlap")
    for index, ax in enumerate(fig.axes):
        points = _data_points(ax)
        if points.size == 0:
            continue
        name = ax.get_title() or ax.get_ylabel().replace("\n", " ") or f"axes {index}"
        ylabel = ax.get_ylabel()
        if not UNIT.search(ylabel):
            problems.append(f"{name}: y label {ylabel!r} has no unit")
        shared = ax.get_shared_x_axes().get_siblings(ax)
        xlabels = [other.get_xlabel() for other in shared]
        if not any(UNIT.search(label) for label in xlabels):
            problems.append(f"{name}: x label {ax.get_xlabel()!r} has no unit")
        for box in boxes:
            inside = (
                (points[:, 0] > box.x0)
                & (points[:, 0] < box.x1)
                & (points[:, 1] > box.y0)
                & (points[:, 1] < box.y1)
            )
            if inside.any():
                problems.append(f"{name}: the legend covers {int(inside.sum())} data points")
        for text, box, owner in texts:
            if owner is not ax:
                continue
            inside = (
                (points[:, 0] > box.x0)
                & (points[:, 0] < box.x1)
                & (points[:, 1] > box.y0)
                & (points[:, 1] < box.y1)
            )
            if inside.any():
                problems.append(f"{name}: the text {text} covers {int(inside.sum())} data points")
        for axis in ("x", "y"):
            labels = getattr(ax, f"get_{axis}ticklabels")()
            extents = [t.get_window_extent(renderer) for t in labels if t.get_text()]
            if _overlaps(extents):
                problems.append(f"{name}: {axis} tick labels overlap")
    return problems
