"""A tiny stand-in chapter for testing the tools: two notebooks and one solutions notebook.

    python tests/demo_chapter.py DIR   # writes DIR/pyproject.toml and DIR/notebooks/...

The notebooks follow CONTRIBUTING.md (title, "What you will learn", steps, Going deeper
in the second, Recap, Exercises, References), hold formulas inline and displayed, one PNG
figure each (with alt text), a widget and a cell that prints in several chunks, prose
numbers that their outputs print, the chapter's notation table (the first notebook, tagged
``notation``), speaker notes (tagged ``notes``) and a live cell each (tagged
``live-...``). They import neither torch nor d2lutil, so a kernel runs them in a moment.
Each chapter notebook's metadata holds its time budget (the teaching plan's seconds to run,
course/plan.py), as the chapter's do. They are not executed or stamped here:
tests/conftest.py runs ``tools/colab.py stamp`` and ``tools/chapter.py execute``.
"""

import pathlib
import sys

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

PYPROJECT = """\
[project]
name = "demo"
version = "0"

[project.urls]
Repository = "https://github.com/example-owner/example-chapter"

[tool.chapter]
branch = "teaching"
"""

FIGURE = """\
import matplotlib.pyplot as plt
import numpy as np

x = np.linspace(0, 4, 50)
_ = plt.plot(x, {expr}, label="{label}")
plt.show()"""


def figure(label, expr):
    cell = new_code_cell(FIGURE.replace("{label}", label).replace("{expr}", expr))
    cell.metadata["mystnb"] = {"image": {"alt": f"A line plot of {label}(x) for x from 0 to 4."}}
    return cell


def chapter_one():
    return [
        new_markdown_cell("# Scaled dot products"),
        new_markdown_cell("## What you will learn\n\n- why scores are divided by $\\sqrt{d}$"),
        new_code_cell("import math"),
        new_markdown_cell(
            "## Why scale\n\nWith $d = 64$ the factor is $1/\\sqrt{d} = 0.125$, and a sum of "
            "1024 terms has a standard deviation of 32."
        ),
        tagged(new_code_cell("scale = 1 / math.sqrt(64)\nassert scale == 0.125\n"
                             "print(scale, 1024)"), "live-scale"),
        new_markdown_cell(
            "The softmax of scaled scores:\n\n$$a_i = \\frac{e^{s_i}}{\\sum_j e^{s_j}}.$$"
        ),
        figure("exp", "np.exp(x)"),
        tagged(new_markdown_cell("The letters of this chapter:\n\n| letter | meaning |\n"
                                 "|---|---|\n| $d$ | width |\n| $h$ | heads |"), "notation"),
        new_markdown_cell("## Recap\n\nScaling by $1/\\sqrt{d}$ keeps scores of order one."),
        new_markdown_cell("## Exercises\n\n1. Compute the factor for $d = 16$.\n"
                          "2. Plot the softmax of three scores."),
        new_markdown_cell("## References\n\n1. Vaswani, A. et al. (2017). Attention is all you "
                          "need. NeurIPS 30, arXiv:1706.03762."),
    ]


def chapter_two():
    return [
        new_markdown_cell("# Many heads"),
        new_markdown_cell("## What you will learn\n\n- how $h$ heads split the width"),
        new_code_cell("import random\n\nrandom.seed(0)\nwidth, num_heads = 512, 8\n"
                      "print(width // num_heads)"),
        new_markdown_cell("## Splitting\n\nEach of the 8 heads gets 64 columns, "
                          "a share of 0.125 of the width."),
        new_code_cell("share = 1 / num_heads\nassert share == 0.125\nprint(share)"),
        figure("square", "x**2"),
        tagged(new_markdown_cell("Ask the class first: how wide is each head?"), "notes"),
        new_markdown_cell("A slider:"),
        widget_cell(),
        new_markdown_cell("## Going deeper\n\nA class can skip this section: a loop that "
                          "prints as it goes."),
        new_code_cell("import time\n\nfor head in range(3):\n"
                      "    print(head, end=' ', flush=True)\n    time.sleep(0.05)\nprint()"),
        new_markdown_cell("## Recap\n\nHeads split $d$ into $h$ parts of $d/h$."),
        new_markdown_cell("## Exercises\n\n1. Split 768 columns into 12 heads.\n"
                          "2. Why must $h$ divide $d$?"),
        new_markdown_cell("## References\n\n- Shazeer, N. (2019). Fast transformer decoding: "
                          "one write-head is all you need. arXiv:1911.02150."),
    ]


def tagged(cell, *tags):
    cell.metadata.setdefault("tags", []).extend(tags)
    return cell


def widget_cell():
    cell = new_code_cell("import ipywidgets\n\nipywidgets.IntSlider(value=8, description='heads')")
    return tagged(cell, "nbval-ignore-output", "live-slider")


def solutions_one():
    return [
        new_markdown_cell("# Solutions: scaled dot products"),
        new_code_cell("import math\n\nfactor = 1 / math.sqrt(16)\nassert factor == 0.25\n"
                      "print(factor)"),
    ]


def notebook(cells, budget_s=None):
    nb = new_notebook(cells=cells)
    if budget_s:
        nb.metadata["chapter"] = {"budget_s": budget_s}  # its facts (book.FACTS_KEY)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def write_demo(root):
    """Write the demo repository into ``root``; return the list of notebook paths."""
    root = pathlib.Path(root)
    (root / "notebooks" / "solutions").mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    paths = {  # with the time budgets of the chapter notebooks, seconds
        root / "notebooks" / "01_scaling.ipynb": (chapter_one(), 3),
        root / "notebooks" / "02_heads.ipynb": (chapter_two(), 4.5),
        root / "notebooks" / "solutions" / "01_solutions.ipynb": (solutions_one(), None),
    }
    for path, (cells, budget_s) in paths.items():
        nbformat.write(notebook(cells, budget_s), path)
    return list(paths)


if __name__ == "__main__":
    for p in write_demo(sys.argv[1]):
        print(p)
