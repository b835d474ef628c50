"""Figures for lesson 4, "vmap meets autodiff".

``cost_chart`` draws, for batches of growing size, how many equations each gradient program
holds and how many elements its equations write: the loop's program grows with the batch, the
vmapped one keeps its length and grows in its shapes. It returns a closed figure of fixed size,
shown once as the cell's value; matplotlib is imported when a figure is drawn, not when the
lesson's checks are (the judge loads every lesson module).
"""
from __future__ import annotations

COLOURS = ("#8c8c8c", "#e4572e", "#4c72b0")


def cost_chart(by_size: dict):
    """``by_size``: ``{batch size: {program: core.Cost}}`` -> two bar charts side by side."""
    import matplotlib.pyplot as plt
    sizes = sorted(by_size)
    names = list(by_size[sizes[0]])
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
    width = 0.8 / len(names)
    for ax, field, title in ((axes[0], "equations", "equations in the program"),
                             (axes[1], "elements", "elements its equations write")):
        for i, (name, colour) in enumerate(zip(names, COLOURS)):
            xs = [j + (i - (len(names) - 1) / 2) * width for j in range(len(sizes))]
            ax.bar(xs, [getattr(by_size[s][name], field) for s in sizes], width, color=colour,
                   label=name)
        ax.set_xticks(range(len(sizes)), [f"B={s}" for s in sizes])
        ax.set_title(title, fontsize=10)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0].legend(fontsize=8, frameon=False)
    fig.tight_layout()
    plt.close(fig)      # shown once, as the cell's value, never again by the inline backend
    return fig


__all__ = ["cost_chart"]
