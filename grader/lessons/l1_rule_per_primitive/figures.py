"""Figures for lesson 1, "The rule per primitive".

``hidden_axis`` draws the value a BatchTracer holds next to the shape the function is shown;
``table_counts`` compares readings of the batching-rule tables as a bar chart. Both return a
closed figure of fixed size: a notebook shows it once, as the cell's value, and its ``text/plain``
line never changes. matplotlib is imported when a figure is drawn, not when the lesson's checks
are (the judge loads every lesson module).
"""
from __future__ import annotations

BATCH = "#e4572e"      # the batch axis
EXAMPLE = "#4c72b0"    # one example
GRID = "white"


def _grid(ax, x0, y0, rows, cols, cell, colour, alpha=1.0):
    from matplotlib.patches import Rectangle
    for r in range(rows):
        for c in range(cols):
            ax.add_patch(Rectangle((x0 + c * cell, y0 + (rows - 1 - r) * cell), cell, cell,
                                   facecolor=colour, edgecolor=GRID, linewidth=0.8, alpha=alpha))


def _as_matrix(shape):
    """Rows and columns to draw for a per-example shape (higher ranks fold into the columns)."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return 1, shape[0]
    cols = 1
    for d in shape[1:]:
        cols *= d
    return shape[0], cols


def hidden_axis(value_shape=(3, 7, 5), batch_dim=1):
    """The whole batch (one slab per example, batch axis highlighted) beside what ``f`` sees."""
    import matplotlib.pyplot as plt
    size = value_shape[batch_dim]
    seen = tuple(d for i, d in enumerate(value_shape) if i != batch_dim)
    rows, cols = _as_matrix(seen)
    cell, gap = 1.0, 0.9
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 2.8),
                                      gridspec_kw={"width_ratios": [3.2, 1]})
    for k in range(size):
        x0 = k * (cols * cell + gap)
        _grid(left, x0, 0, rows, cols, cell, BATCH, alpha=0.35 + 0.65 * (k + 1) / size)
        index = ", ".join(str(k) if i == batch_dim else ":" for i in range(len(value_shape)))
        left.text(x0 + cols * cell / 2, -0.4, f"val[{index}]", ha="center", va="top", fontsize=8)
    width = size * (cols * cell + gap) - gap
    left.annotate("", xy=(width, rows + 0.6), xytext=(0, rows + 0.6),
                  arrowprops=dict(arrowstyle="->", color=BATCH, lw=2))
    left.text(width / 2, rows + 0.9, f"batch axis: x.batch_dim == {batch_dim}, size {size}",
              ha="center", va="bottom", color=BATCH, fontsize=10)
    left.set_title(f"x.val.shape == {tuple(value_shape)}   (the whole batch, held by the tracer)",
                   fontsize=10)
    left.set_xlim(-0.5, width + 0.5)
    left.set_ylim(-1.6, rows + 2.0)
    _grid(right, 0, 0, rows, cols, cell, EXAMPLE)
    right.set_title(f"x.shape == {seen}\n(what the function is shown)", fontsize=10)
    right.set_xlim(-0.5, cols * cell + 0.5)
    right.set_ylim(-1.6, rows + 2.0)
    for ax in (left, right):
        ax.set_aspect("equal")
        ax.axis("off")
    fig.tight_layout()
    plt.close(fig)      # shown once, as the cell's value, never again by the inline backend
    return fig


def table_counts(readings):
    """Grouped bars: entries per rule table, one group per table, one bar per labelled reading.

    ``readings`` maps a label (e.g. "the seeds' reading") to ``{table_name: count}``.
    """
    import matplotlib.pyplot as plt
    tables = []
    for counts in readings.values():
        tables += [t for t in counts if t not in tables]
    fig, ax = plt.subplots(figsize=(9, 3.6))
    width = 0.8 / max(1, len(readings))
    colours = ["#999999", "#4c72b0", "#dd8452", "#55a868"]
    for i, (label, counts) in enumerate(readings.items()):
        xs = [t + (i - (len(readings) - 1) / 2) * width for t in range(len(tables))]
        ys = [counts.get(name, 0) for name in tables]
        bars = ax.bar(xs, ys, width * 0.95, label=label, color=colours[i % len(colours)])
        for bar, y, name in zip(bars, ys, tables):
            text = str(y) if name in counts else "not a dict"
            ax.text(bar.get_x() + bar.get_width() / 2, y + 2, text, ha="center", va="bottom",
                    fontsize=8)
    ax.set_xticks(range(len(tables)))
    ax.set_xticklabels(tables, fontsize=9)
    ax.set_ylabel("rules in the table")
    top = max((max(c.values(), default=0) for c in readings.values()), default=0)
    ax.set_ylim(0, top * 1.4 + 10)
    ax.legend(fontsize=8, loc="upper left", frameon=False)
    ax.set_title("Batching-rule tables: a reading, not a constant", fontsize=10)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    plt.close(fig)      # shown once, as the cell's value, never again by the inline backend
    return fig


__all__ = ["hidden_axis", "table_counts"]
