"""Figures for the chapter, in one style that stays legible on a projector.

Every helper takes tensors or arrays on any device (they are moved to the CPU
and detached), draws with matplotlib, and returns the matplotlib object it
made, so a notebook can add to it. Nothing here switches the notebook to SVG:
figures stay PNG, which nbval does not compare byte by byte.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch

__all__ = ["CHAPTER_STYLE", "use_chapter_style", "to_numpy", "plot_lines", "show_heatmaps"]

#: rcParams shared by every figure of the chapter.
CHAPTER_STYLE = {
    "figure.figsize": (6.0, 3.6),
    "figure.dpi": 100,
    "font.size": 12,
    "axes.titlesize": 13,
    "axes.labelsize": 12,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11,
    "legend.fontsize": 11,
    "axes.grid": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 2.0,
    "image.cmap": "Reds",
}


def use_chapter_style():
    """Apply ``CHAPTER_STYLE`` to every later figure of this session.

    The helpers below call it too. They do not draw inside ``plt.rc_context``:
    leaving that context restores ``interactive`` to its value from before the
    first figure, when Jupyter's inline backend had not yet switched it on, so
    every later figure of the notebook would silently not be shown.
    """
    plt.rcParams.update(CHAPTER_STYLE)


def to_numpy(x):
    """A CPU numpy array from a tensor (any device, with or without grad) or array-like."""
    if isinstance(x, torch.Tensor):
        return x.detach().to("cpu", torch.float64).numpy()
    return np.asarray(x, dtype=float)


def plot_lines(x, ys, *, xlabel, ylabel, title=None, logx=False, logy=False, hline=None,
               hline_label=None, marker=None, ax=None):
    """Plot one or more curves over the same x.

    Args:
        x: the shared x values, shape (n,).
        ys: a dict mapping each legend label to its y values, shape (n,).
        xlabel, ylabel, title: axis labels and an optional title.
        logx: use a base-2 log scale on the x axis (e.g. for head counts).
        logy: use a log scale on the y axis.
        hline: optional y value of a dashed reference line (``hline_label``).
        marker: optional matplotlib marker for the data points, e.g. "o".
        ax: axes to draw on; a new figure is made when None.
    Returns the axes.
    """
    use_chapter_style()
    if ax is None:
        _, ax = plt.subplots()
    xs = to_numpy(x)
    for label, y in ys.items():
        ax.plot(xs, to_numpy(y), label=label, marker=marker)
    if hline is not None:
        ax.axhline(hline, color="gray", linestyle="--", linewidth=1.5, label=hline_label)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if len(ys) > 1 or hline_label:
        ax.legend()
    return ax


def show_heatmaps(matrices, *, xlabel="Keys", ylabel="Queries", titles=None,
                  xticklabels=None, yticklabels=None, vmin=0.0, vmax=None,
                  colorbar_label="attention weight", cmap="Reds", figsize=None,
                  suptitle=None):
    """Draw a grid of heatmaps on one shared colour scale with one colour bar.

    Args:
        matrices: shape (num_rows, num_cols, num_queries, num_keys), e.g.
            attention weights of several heads or several examples.
        xlabel, ylabel: labels of the bottom row's x axes and the left column's y axes.
        titles: optional titles, a list of num_rows lists of num_cols strings.
        xticklabels, yticklabels: optional tick labels (e.g. letters) shared by all panels.
        vmin, vmax: the shared colour scale; vmax defaults to the largest entry.
        colorbar_label: label of the single colour bar.
        figsize: defaults to 2.4 inches per panel.
        suptitle: an optional title over the whole grid.
    Returns the figure.
    """
    data = to_numpy(matrices)
    if data.ndim != 4:
        raise ValueError(
            "matrices must be 4-D (num_rows, num_cols, num_queries, num_keys), "
            f"got shape {data.shape}"
        )
    num_rows, num_cols = data.shape[:2]
    if titles is not None and (len(titles) != num_rows or any(len(r) != num_cols for r in titles)):
        raise ValueError(f"titles must be {num_rows} lists of {num_cols} strings")
    vmax = float(data.max()) if vmax is None else vmax
    if figsize is None:
        figsize = (2.4 * num_cols + 1.2, 2.4 * num_rows + 0.4)
    use_chapter_style()
    fig, axes = plt.subplots(num_rows, num_cols, figsize=figsize, squeeze=False,
                             sharex=True, sharey=True, layout="constrained")
    for i in range(num_rows):
        for j in range(num_cols):
            ax = axes[i, j]
            image = ax.imshow(data[i, j], cmap=cmap, vmin=vmin, vmax=vmax,
                              aspect="auto", interpolation="nearest")
            if xticklabels is not None:
                ax.set_xticks(range(len(xticklabels)), labels=list(xticklabels))
            if yticklabels is not None:
                ax.set_yticks(range(len(yticklabels)), labels=list(yticklabels))
            if i == num_rows - 1:
                ax.set_xlabel(xlabel)
            if j == 0:
                ax.set_ylabel(ylabel)
            if titles is not None:
                ax.set_title(titles[i][j])
    fig.colorbar(image, ax=axes, shrink=0.8, label=colorbar_label)
    if suptitle:
        fig.suptitle(suptitle)
    return fig
