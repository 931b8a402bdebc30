"""What the tools know about the chapter's notebooks, in one place.

The chapter is ``notebooks/NN_name.ipynb`` in the order of their names, and the worked
solutions ``notebooks/solutions/NN_solutions.ipynb`` (``NN`` ties them to the chapter
notebook). A new notebook is found by its file name alone: nothing else lists them.

Everything else that more than one tool or test relies on is here too: the cell tags, the
Colab badge, the RISE slideshow options, a notebook's title and number, its stored output
texts, and how a run's outputs are made reproducible (``normalize_outputs``) or cleared.
The Makefile, the site and slides (tools/chapter.py), the Colab stamping (tools/colab.py)
and check (tools/colab_check.py), the benchmarks and the tests use it; it needs only
nbformat.
"""

import pathlib
import re

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHAPTER_DIR = "notebooks"
SOLUTIONS_DIR = "notebooks/solutions"
NUMBER_RE = re.compile(r"^(\d+)_")

# Cell tags. The first two are written by tools/colab.py stamp; the last two are nbval's.
SETUP_TAG = "colab-setup"  # the Colab setup cell: does nothing outside Colab
NAV_TAG = "chapter-nav"  # the last cell: links to the previous and next notebook
IGNORE_TAG = "nbval-ignore-output"  # output that truly changes from run to run
RAISES_TAG = "raises-exception"  # a cell meant to raise

BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
BADGE_ALT = "Open In Colab"
COLAB_PREFIX = "https://colab.research.google.com/github/"
# A badge line of a title cell: [![Open In Colab](IMAGE)](TARGET), alone on its line.
BADGE_RE = re.compile(r"^\[!\[Open In Colab\]\((?P<image>[^)\s]*)\)\]\((?P<target>[^)\s]*)\)$")

# Notebook metadata "rise" that tools/colab.py stamps and checks: in a RISE slideshow
# (jupyterlab-rise, `make present`) a slide taller than the screen scrolls, not cut off.
RISE_OPTIONS = {"scroll": True}

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
TEXT_MIMES = ("text/plain", "text/html", "text/markdown", "text/latex", "application/json")


class NotebookError(ValueError):
    """A notebook (or its place in the repository) that the tools cannot work with."""


# --- which notebooks, in what order --------------------------------------------------------

def _numbered(folder):
    return sorted(p for p in folder.glob("*.ipynb") if NUMBER_RE.match(p.name))


def chapter_notebooks(root=ROOT):
    """The chapter notebooks ``notebooks/NN_name.ipynb``, in reading order (by name)."""
    return _numbered(pathlib.Path(root) / CHAPTER_DIR)


def solution_notebooks(root=ROOT):
    """The worked solutions ``notebooks/solutions/NN_solutions.ipynb``, by name."""
    return _numbered(pathlib.Path(root) / SOLUTIONS_DIR)


def all_notebooks(root=ROOT):
    return chapter_notebooks(root) + solution_notebooks(root)


def number(path):
    """``"01"`` for ``01_intro.ipynb`` or ``solutions/01_solutions.ipynb``; None without."""
    m = NUMBER_RE.match(pathlib.Path(path).name)
    return m.group(1) if m else None


def relpath_of(path, root=ROOT):
    """The notebook's path from the repository root (``notebooks/...``), as Colab names it."""
    path = pathlib.Path(path).resolve()
    try:
        return path.relative_to(pathlib.Path(root).resolve()).as_posix()
    except ValueError:
        raise NotebookError(f"{path} is not inside the repository {root}") from None


def read(path):
    return nbformat.read(path, as_version=4)


def title_of(nb, where="notebook"):
    """The title of a notebook: its first cell must be Markdown starting with ``# ``."""
    if not nb.cells or nb.cells[0].cell_type != "markdown":
        raise NotebookError(f"{where}: the first cell must be a Markdown title cell '# Title'")
    first = nb.cells[0].source.lstrip().splitlines()
    if not first or not first[0].startswith("# "):
        raise NotebookError(f"{where}: the first cell must start with '# Title', got {first[:1]}")
    return first[0][2:].strip()


# --- cells and their stored outputs ------------------------------------------------------

def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def is_ignored(cell):
    """True when nbval must not compare the cell's output (``nbval-ignore-output``)."""
    return IGNORE_TAG in tags(cell)


def output_texts(cell):
    """The text of every output of a code cell: streams (consecutive chunks of one stream
    merged, as they print), text data, error messages."""
    texts, last_stream = [], None
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            if last_stream == out.name:
                texts[-1] += out.text
            else:
                texts.append(out.text)
            last_stream = out.name
            continue
        last_stream = None
        if out.output_type in ("execute_result", "display_data"):
            for mime in TEXT_MIMES:
                if mime in out.data:
                    value = out.data[mime]
                    texts.append(value if isinstance(value, str) else str(value))
        elif out.output_type == "error":
            texts.append(f"{out.ename}: {out.evalue}")
            texts.extend(out.traceback)
    return texts


def has_figure(cell):
    return any("image/png" in out.get("data", {}) for out in cell.get("outputs", []))


def alt_text(cell):
    """A figure cell's alt text, from the metadata myst-nb reads (``mystnb.image.alt``)."""
    return cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt", "")


def clear_outputs(nb):
    """Drop every code cell's outputs, execution count and timing (in place)."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            cell.metadata.pop("execution", None)
    return nb


def normalize_outputs(nb):
    """Make a run's outputs the same from run to run (in place).

    Consecutive chunks of one stream become one output (a kernel flushes at times of its
    own choosing), widget outputs keep no model id and the notebook no widget state (both
    fresh random ids on every run, and meaningless without the live kernel).
    """
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        merged = []
        for out in cell.get("outputs", []):
            if (out.output_type == "stream" and merged and merged[-1].output_type == "stream"
                    and merged[-1].name == out.name):
                merged[-1].text += out.text
                continue
            view = out.get("data", {}).get(WIDGET_MIME)
            if isinstance(view, dict):
                view.pop("model_id", None)
            merged.append(out)
        if cell.cell_type == "code":
            cell.outputs = merged
    return nb


def unreproducible_outputs(nb):
    """(cell index, what) for every output that ``normalize_outputs`` would change."""
    found = []
    if "widgets" in nb.metadata:
        found.append((None, "widget state in the notebook's metadata"))
    for i, cell in enumerate(nb.cells):
        previous = None
        for out in cell.get("outputs", []):
            if (out.output_type == "stream" and previous is not None
                    and previous.output_type == "stream" and previous.name == out.name):
                found.append((i, f"{out.name} split into several outputs"))
            if "model_id" in out.get("data", {}).get(WIDGET_MIME, {}):
                found.append((i, "a widget output with a model id"))
            previous = out
    return found
