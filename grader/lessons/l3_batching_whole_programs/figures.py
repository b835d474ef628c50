"""Lesson 3's pictures: a batched while loop's runs per example, and lax.map's memory against its
equations. Matplotlib is imported inside the drawing functions: the judge loads nothing here."""
from __future__ import annotations

ACTIVE, HELD = "#4e79a7", "#e6e6e6"


def trips_figure(limits, per_example, runs):
    """One row per example, one box per run of the batched body: blue while the example still
    iterates, grey while the loop's select holds it (its own loop would have stopped)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch, Rectangle
    fig = Figure(figsize=(7, 0.45 * len(limits) + 1.2))
    ax = fig.add_subplot()
    for row, (n, seen) in enumerate(zip(limits, per_example)):
        y = len(limits) - 1 - row
        for run, counter in enumerate(seen):
            colour = ACTIVE if run < n else HELD
            ax.add_patch(Rectangle((run, y), 0.9, 0.8, facecolor=colour, edgecolor="#555555"))
            ax.text(run + 0.45, y + 0.4, str(counter), ha="center", va="center", fontsize=8)
    ax.set_xlim(-0.2, runs + 0.2)
    ax.set_ylim(-0.2, len(limits))
    ax.set_yticks([len(limits) - 1 - r + 0.4 for r in range(len(limits))],
                  [f"example {r} (n={n})" for r, n in enumerate(limits)])
    ax.set_xticks([r + 0.45 for r in range(runs)], [str(r + 1) for r in range(runs)])
    ax.set_xlabel("run of the batched loop body (the number in a box: the counter it saw)")
    ax.legend([Patch(facecolor=ACTIVE), Patch(facecolor=HELD)],
              ["still iterating", "finished: held by the select"], loc="lower center",
              bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False, fontsize=8)
    fig.tight_layout()
    return fig


def map_figure(rows):
    """Largest array against number of equations for each way of mapping (a row of map_costs)."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(6, 3.2))
    ax = fig.add_subplot()
    for r in rows:
        ax.scatter(r["equations"], r["largest_bytes"] / 1024, color="#f28e2b" if r["how"] == "vmap"
                   else "#4e79a7")
        ax.annotate(r["how"].replace("lax.map ", ""), (r["equations"], r["largest_bytes"] / 1024),
                    textcoords="offset points", xytext=(5, 3), fontsize=8)
    ax.set_xlabel("equations in the program (inner programs included)")
    ax.set_ylabel("largest array (KiB)")
    ax.set_yscale("log")
    fig.tight_layout()
    return fig


def show(fig) -> None:
    from IPython.display import display
    display(fig)


__all__ = ["map_figure", "show", "trips_figure"]
