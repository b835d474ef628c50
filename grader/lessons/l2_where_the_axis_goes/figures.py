"""Lesson 2's picture: where the batch axis sits in every array of a batched jaxpr.

One row per equation (plus the program's inputs and outputs); each array is a row of boxes, one
box per axis, labelled with its length. A batch axis is found by its length: pick batch sizes that
no other axis has (e.g. 7, or 2, 3, 4 for three nested vmaps) and every box of that length is
coloured for its vmap level. Size-1 axes, the ones a rule inserts so an unmapped operand
broadcasts, are hatched: they are the evidence that nothing was copied per example.
"""
from __future__ import annotations

from dataclasses import dataclass

from ... import core

LEVEL_COLOURS = ("#f28e2b", "#4e79a7", "#59a14f")
PLAIN, EDGE, SIZE1 = "#ffffff", "#555555", "#e6e6e6"


@dataclass(frozen=True)
class ArrayAxes:
    """One array: its shape and, per axis, the vmap level whose batch axis it is (or None)."""
    shape: tuple[int, ...]
    levels: tuple[int | None, ...]

    def batch_axis(self, level: int = 0) -> int | None:
        """Position of ``level``'s batch axis in this array, or None when it has none."""
        hits = [i for i, lv in enumerate(self.levels) if lv == level]
        return hits[0] if hits else None


@dataclass(frozen=True)
class FlowRow:
    label: str
    inputs: tuple[ArrayAxes, ...]
    outputs: tuple[ArrayAxes, ...]


def _axes(shape, batch_sizes) -> ArrayAxes:
    levels = tuple(batch_sizes.index(d) if d in batch_sizes else None for d in shape)
    return ArrayAxes(tuple(shape), levels)


def _label(eqn) -> str:
    params = dict(eqn.params)
    for name in ("permutation", "axes", "dimension_numbers", "broadcast_dimensions"):
        if name in params:
            value = str(params[name]).replace(" ", "").replace(",)", ")")
            return f"{eqn.primitive} {value}"
    return eqn.primitive


def flow(jaxpr, batch_sizes) -> list[FlowRow]:
    """Rows of the picture as data: program inputs, each equation, program outputs."""
    sizes = tuple(batch_sizes) if isinstance(batch_sizes, (tuple, list)) else (batch_sizes,)
    sig = core.signature(jaxpr)
    rows = [FlowRow("inputs", (), tuple(_axes(s, sizes) for s in sig["in"]))]
    for eqn in core.summarize(jaxpr):
        rows.append(FlowRow(_label(eqn), tuple(_axes(s, sizes) for s in eqn.in_shapes),
                            tuple(_axes(s, sizes) for s in eqn.out_shapes)))
    rows.append(FlowRow("outputs", tuple(_axes(s, sizes) for s in sig["out"]), ()))
    return rows


def positions(rows, level: int = 0) -> list[tuple]:
    """Per equation row, the batch-axis position in each output (the part a lesson asserts)."""
    return [tuple(a.batch_axis(level) for a in r.outputs) for r in rows[1:-1]]


BOX, GAP, LABEL_W = 0.8, 0.45, 7.0


def _draw_array(ax, x, y, arr: ArrayAxes) -> float:
    """Draw one array at (x, y); returns the x after it."""
    from matplotlib.patches import Circle, Rectangle  # drawing only: the judge loads this module
    if not arr.shape:
        ax.add_patch(Circle((x + 0.25, y + 0.35), 0.14, facecolor=PLAIN, edgecolor=EDGE))
        return x + 0.5 + GAP
    for size, level in zip(arr.shape, arr.levels):
        colour = LEVEL_COLOURS[level % 3] if level is not None else SIZE1 if size == 1 else PLAIN
        ax.add_patch(Rectangle((x, y), BOX, 0.7, facecolor=colour, edgecolor=EDGE,
                               hatch="///" if size == 1 and level is None else None))
        ax.text(x + BOX / 2, y + 0.35, str(size), ha="center", va="center", fontsize=8)
        x += BOX
    return x + GAP


def draw(jaxpr, batch_sizes, title: str = "", width: float = 10.0):
    """Draw the flow of the batch axis through ``jaxpr``; returns the Figure.

    The Figure is not registered with pyplot, so it appears exactly once, where ``show`` (or the
    notebook's display of the returned object) puts it, whatever the matplotlib backend.
    """
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle
    rows = flow(jaxpr, batch_sizes)
    sizes = tuple(batch_sizes) if isinstance(batch_sizes, (tuple, list)) else (batch_sizes,)
    fig = Figure(figsize=(width, 0.55 * len(rows) + 0.9))
    ax = fig.add_subplot()
    right = LABEL_W
    for i, row in enumerate(rows):
        y = len(rows) - 1 - i
        ax.text(0.1, y + 0.35, row.label, va="center", fontsize=9, family="monospace",
                weight="bold" if row.label in ("inputs", "outputs") else "normal")
        x = LABEL_W
        for arr in row.inputs:
            x = _draw_array(ax, x, y, arr)
        if row.inputs and row.outputs:
            ax.annotate("", xy=(x + 0.6, y + 0.35), xytext=(x, y + 0.35),
                        arrowprops={"arrowstyle": "->", "color": EDGE})
            x += 0.9
        for arr in row.outputs:
            x = _draw_array(ax, x, y, arr)
        right = max(right, x)
    handles = [Rectangle((0, 0), 1, 1, facecolor=LEVEL_COLOURS[i % 3], edgecolor=EDGE)
               for i in range(len(sizes))]
    handles.append(Rectangle((0, 0), 1, 1, facecolor=SIZE1, edgecolor=EDGE, hatch="///"))
    handles.append(Line2D([], [], marker="o", linestyle="", markerfacecolor=PLAIN,
                          markeredgecolor=EDGE, markersize=7))
    names = [f"batch axis (size {s})" if len(sizes) == 1 else f"vmap level {i} (size {s})"
             for i, s in enumerate(sizes)] + ["size-1 axis (no copy)", "scalar (no axes)"]
    ax.legend(handles, names, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(names),
              fontsize=8, frameon=False)
    ax.set_xlim(0, max(right, 16.0))
    ax.set_ylim(-0.2, len(rows))
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10, pad=22)
    fig.tight_layout()
    return fig


def show(jaxpr, batch_sizes, title: str = "") -> None:
    """Draw and display the picture in a notebook (one display, no stray pyplot figure)."""
    from IPython.display import display
    display(draw(jaxpr, batch_sizes, title))


__all__ = ["draw", "flow", "positions", "show"]
