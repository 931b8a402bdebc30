"""Block diagrams of the chapter's models, drawn with matplotlib.

The diagrams are ordinary matplotlib figures made of boxes
(``matplotlib.patches.FancyBboxPatch``) and arrows (``Axes.annotate``), in the
chapter style of ``d2lutil.plotting``. So they are stored in a notebook as PNG
output like every other figure and show up wherever the notebook's outputs do
(JupyterLab, Colab, the rendered pages, the slides), without any image file
next to the notebook. The fonts are large and the words few, for a projector.

Each function returns the ``matplotlib.figure.Figure`` it made (like
``plotting.show_heatmaps``). In a notebook, end the cell with
``_ = diagrams.multihead_attention(num_heads=3)``: the inline backend shows the
figure once. Elsewhere, close it with ``plt.close(fig)`` when done. Nothing is
random: the same call draws the same picture.
"""

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

from .plotting import use_chapter_style
from .shapes import check_positive_int

__all__ = ["copy_both_task", "multihead_attention", "MAX_DRAWN_HEADS"]

#: At most this many head columns are drawn; with more heads the diagram shows
#: heads 1 and 2, an ellipsis, and head ``num_heads``.
MAX_DRAWN_HEADS = 4

# Colour-blind-safe colours (Okabe-Ito) for the three inputs and their paths.
_QUERY, _KEY, _VALUE = "#0072B2", "#E69F00", "#009E73"
_GRAY, _INK = "#666666", "#222222"
_FONT = 16       # box labels
_SMALL = 14      # notes next to boxes and arrows


def _canvas(width, height):
    """A figure whose data units are inches, with no axes drawn."""
    use_chapter_style()
    fig, ax = plt.subplots(figsize=(width, height))
    fig.subplots_adjust(left=0, right=1, bottom=0, top=1)
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


def _box(ax, x, y, width, height, text, *, color=_INK, fill=None, fontsize=_FONT,
         linestyle="-", text_color=None):
    """A rounded box centred at (x, y) with ``text`` in its middle; returns its edges."""
    ax.add_patch(FancyBboxPatch(
        (x - width / 2, y - height / 2), width, height,
        boxstyle="round,pad=0,rounding_size=0.08", linewidth=2, linestyle=linestyle,
        edgecolor=color, facecolor=fill if fill is not None else "white"))
    if text:
        ax.text(x, y, text, ha="center", va="center", fontsize=fontsize,
                color=text_color or _INK)
    return {"left": x - width / 2, "right": x + width / 2,
            "bottom": y - height / 2, "top": y + height / 2, "x": x, "y": y}


def _arrow(ax, start, end, *, color=_INK, linestyle="-", linewidth=2):
    """An arrow from ``start`` to ``end`` (points in inches)."""
    ax.annotate("", xy=end, xytext=start,
                arrowprops={"arrowstyle": "-|>,head_length=0.5,head_width=0.25",
                            "color": color, "linewidth": linewidth,
                            "linestyle": linestyle, "shrinkA": 0, "shrinkB": 0})


def _light(color):
    """A pale fill of ``color`` for the inside of a box."""
    return color + "22"


def copy_both_task():
    """Draw the copy-both task of notebook 1 and return the Figure.

    Two positions hold values v1 and v2; their keys k1 and k2 only mark which
    position is which. One query gives the weights alpha_1 and alpha_2, the head
    hands on the single mixture m = alpha_1 v1 + alpha_2 v2 (width d), and a
    readout W has to predict the target [v1; v2], twice as wide (2d).
    """
    fig, ax = _canvas(11.6, 4.4)
    row_1, row_2 = 3.0, 1.2
    middle = (row_1 + row_2) / 2
    # One query compares itself with the two keys (dashed: it sets the weights).
    query = _box(ax, 0.85, middle, 1.2, 0.7, "query", color=_QUERY, fill=_light(_QUERY))
    mix_in = []
    for i, y in ((1, row_1), (2, row_2)):
        key = _box(ax, 2.75, y, 0.75, 0.7, rf"$\mathbf{{k}}_{i}$", color=_KEY,
                   fill=_light(_KEY))
        value = _box(ax, 3.55, y, 0.75, 0.7, rf"$\mathbf{{v}}_{i}$", color=_VALUE,
                     fill=_light(_VALUE))
        _arrow(ax, (query["right"], query["y"]), (key["left"], y),
               color=_QUERY, linestyle="--")
        note_y = y + 0.6 if i == 1 else y - 0.6
        ax.text(3.15, note_y, f"position {i}", ha="center", va="center",
                fontsize=_SMALL, color=_GRAY)
        mix_in.append((value["right"], y))
    # The head's single output: one convex mixture of the values.
    mixture = _box(ax, 6.6, middle, 1.0, 0.8, r"$\mathbf{m}$", color=_VALUE,
                   fill=_light(_VALUE))
    ends = (middle + 0.2, middle - 0.2)
    for i, (start, end_y) in enumerate(zip(mix_in, ends, strict=True), start=1):
        _arrow(ax, start, (mixture["left"], end_y), color=_VALUE)
        label_y = start[1] - 0.32 if i == 1 else start[1] + 0.32
        ax.text(4.95, label_y, rf"$\alpha_{i}$", ha="center", va="center",
                fontsize=_FONT + 2, color=_VALUE)
    ax.text(mixture["x"], mixture["top"] + 0.45,
            r"$\alpha_1\mathbf{v}_1 + \alpha_2\mathbf{v}_2$",
            ha="center", va="center", fontsize=_SMALL)
    ax.text(mixture["x"], mixture["bottom"] - 0.35, "width $d$", ha="center",
            va="center", fontsize=_SMALL, color=_GRAY)
    # A readout W maps the mixture to a prediction of the target, width 2d.
    readout = _box(ax, 8.2, middle, 0.9, 0.8, r"$\mathbf{W}$")
    ax.text(readout["x"], readout["top"] + 0.45, "readout", ha="center", va="center",
            fontsize=_SMALL)
    _arrow(ax, (mixture["right"], middle), (readout["left"], middle))
    half = 1.0  # each value has width d, drawn as 1 inch, like the mixture
    left = 9.55
    for i in (1, 2):
        _box(ax, left + (i - 0.5) * half, middle, half, 0.8, rf"$\mathbf{{v}}_{i}$",
             color=_VALUE, fill=_light(_VALUE))
    _arrow(ax, (readout["right"], middle), (left, middle))
    ax.text(left + half, middle + 0.85, "target", ha="center", va="center",
            fontsize=_SMALL)
    ax.text(left + half, middle - 0.75, "width $2d$", ha="center", va="center",
            fontsize=_SMALL, color=_GRAY)
    return fig


def _drawn_heads(num_heads):
    """The head numbers to draw, with None where an ellipsis stands for the rest."""
    if num_heads <= MAX_DRAWN_HEADS:
        return list(range(1, num_heads + 1))
    return [1, 2, None, num_heads]


def multihead_attention(num_heads=3):
    """Draw multi-head attention with ``num_heads`` heads and return the Figure.

    From top to bottom: the inputs (queries, keys, values); for each head i its
    own projections W_q^(i), W_k^(i), W_v^(i) and its scaled dot-product
    attention; the concatenation of the head outputs; the output projection
    W_o; the output. At most ``MAX_DRAWN_HEADS`` heads are drawn one by one:
    with more, heads 1 and 2, an ellipsis and the last head stand for all.

    Args:
        num_heads: the number of heads h, a positive int.
    Raises TypeError or ValueError naming ``num_heads`` when it is not a
    positive int.
    """
    check_positive_int("num_heads", num_heads)
    columns = _drawn_heads(num_heads)
    pitch = 2.55                                # inches per head column
    width = max(pitch * len(columns) + 0.6, 6.6)
    height = 7.6
    fig, ax = _canvas(width, height)
    centres = [width / 2 + (j - (len(columns) - 1) / 2) * pitch for j in range(len(columns))]
    colours = (_QUERY, _KEY, _VALUE)

    # Inputs, spread over the width of the drawn heads.
    input_y, input_w = 7.05, 1.45
    spread = min(pitch, (width - 2 * input_w) / 2)
    names = ("queries", "keys", "values")
    inputs = [_box(ax, width / 2 + (j - 1) * spread, input_y, input_w, 0.65, name,
                   color=c, fill=_light(c))
              for j, (name, c) in enumerate(zip(names, colours, strict=True))]

    group_top, group_bottom = 6.05, 2.75
    proj_y, attn_y = 5.5, 4.05
    concat = _box(ax, width / 2, 2.05, min(pitch * len(columns) - 0.4, width - 0.6), 0.65,
                  "concat")
    for head, x in zip(columns, centres, strict=True):
        if head is None:
            ax.text(x, (group_top + group_bottom) / 2, r"$\cdots$", ha="center",
                    va="center", fontsize=_FONT + 10)
            continue
        # One head: a dashed frame around its projections and its attention.
        _box(ax, x, (group_top + group_bottom) / 2, pitch - 0.2, group_top - group_bottom,
             "", color=_GRAY, linestyle="--", fill="none")
        ax.text(x - pitch / 2 + 0.2, group_bottom + 0.3, f"head {head}", ha="left",
                va="center", fontsize=_SMALL, color=_GRAY)
        attention = _box(ax, x, attn_y, 1.9, 1.15, "scaled\ndot-product\nattention",
                         fontsize=_SMALL, fill="#f2f2f2")
        for k, (sub, c, source) in enumerate(zip("qkv", colours, inputs, strict=True)):
            px = x + (k - 1) * 0.76
            proj = _box(ax, px, proj_y, 0.7, 0.62, rf"$\mathbf{{W}}_{sub}^{{({head})}}$",
                        color=c, fill=_light(c), fontsize=_SMALL + 1)
            _arrow(ax, (source["x"], source["bottom"]), (px, proj["top"]), color=c,
                   linewidth=1.5)
            _arrow(ax, (px, proj["bottom"]), (px, attention["top"]), color=c,
                   linewidth=1.5)
        _arrow(ax, (x, attention["bottom"]), (x, concat["top"]))
    output_proj = _box(ax, width / 2, 1.05, 1.0, 0.62, r"$\mathbf{W}_o$")
    _arrow(ax, (width / 2, concat["bottom"]), (width / 2, output_proj["top"]))
    _arrow(ax, (width / 2, output_proj["bottom"]), (width / 2, 0.35))
    ax.text(width / 2 + 0.15, 0.4, "output", ha="left", va="center", fontsize=_FONT)
    heads = "head" if num_heads == 1 else "heads"
    ax.text(width - 0.25, 2.05 - 0.55, f"$h = {num_heads}$ {heads}", ha="right",
            va="center", fontsize=_SMALL, color=_GRAY)
    return fig
