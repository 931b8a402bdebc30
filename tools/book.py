"""What the tools know about the chapter's notebooks, in one place.

The chapter is ``notebooks/NN_name.ipynb`` in the order of their names, and the worked
solutions ``notebooks/solutions/NN_solutions.ipynb`` (``NN`` ties them to the chapter
notebook). A new notebook is found by its file name alone: nothing else lists them, and
what it says of itself (its time budget, what it builds on, ...) is in its own metadata
(``facts``).

Everything else that more than one tool or test relies on is here too: the cell tags, the
Colab badge, the slides' size, the RISE slideshow options, the pins that requirements
files hold, a notebook's title and number, its exercise import, its stored output texts,
how a notebook is run (``notebook_client``, the one set-up of nbclient every tool and
benchmark uses) and how a run's outputs are made reproducible (``normalize_outputs``) or
cleared.
The Makefile, the site and slides (tools/chapter.py), the Colab stamping (tools/colab.py)
and check (tests/notebooks/colab_check.py), the benchmarks and the tests use it; it needs
only nbformat.
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
# Tags the authors set (CONTRIBUTING.md, "Live slides" and "The lecture"):
NOTES_TAG = "notes"  # a Markdown cell that is the speaker notes of the slide before it
NOTATION_TAG = "notation"  # notebook 1's table of the chapter's letters (one home)
# The lecture decks, in order: a deck is the cells tagged with its name, in whichever
# notebooks they are (tools/lecture.py).
LECTURE_DECKS = ("lecture", "lecture-2")
# The most screens each lecture deck may have, its title slide included (lecture.screen_ranges
# counts them from the stored notebooks; tests/tools/test_deck_content.py and the browser test
# of the built decks hold the decks to it).
DECK_SCREENS = {"lecture": 40, "lecture-2": 30}
# A cell to run live in class, by purpose: the tag is LIVE_PREFIX + the purpose
# (course/course.toml says what to show at each).
LIVE_PREFIX = "live-"
# A chapter notebook's own facts live in its metadata under FACTS_KEY, with these keys
# (CONTRIBUTING.md, "A notebook's facts"): only "budget_s" is required.
FACTS_KEY = "chapter"
FACT_KEYS = ("budget_s", "builds_on", "d2l_sections", "maths", "objectives", "lab",
             "later_names")
# A code line that imports a notebook's exercises (the plan, the grader, the student edition).
IMPORT_RE = re.compile(r"^[ \t]*(?:from[ \t]+d2lutil\.exercises\.nb(\d+)[ \t]+import\b"
                       r"|import[ \t]+d2lutil\.exercises\.nb(\d+)\b)", re.MULTILINE)
# The sections of a chapter notebook that a lecture skips: their words are not the lesson's.
NOT_LESSON_SECTIONS = ("## Going deeper", "## Exercises", "## References")

BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
BADGE_ALT = "Open In Colab"
COLAB_PREFIX = "https://colab.research.google.com/github/"
# A badge line of a title cell: [![Open In Colab](IMAGE)](TARGET), alone on its line.
BADGE_RE = re.compile(r"^\[!\[" + re.escape(BADGE_ALT)
                      + r"\]\((?P<image>[^)\s]*)\)\]\((?P<target>[^)\s]*)\)$")

# The decks' slides (tools/chapter.py) and the slide breaks of tools/colab.py: 1280x800 px,
# what a projector or a laptop shows.
SLIDE_WIDTH, SLIDE_HEIGHT = 1280, 800

# Notebook metadata "rise" that tools/colab.py stamps and checks: in a RISE slideshow
# (jupyterlab-rise, `make present`) a slide taller than the screen scrolls, not cut off.
RISE_OPTIONS = {"scroll": True}

# Pins: requirements.txt holds every package the venv installs with its dependencies;
# requirements-d2l.txt the one installed without them (d2l's own pins would downgrade
# numpy and torch). The Makefile, the Colab setup cell (tools/colab.py) and the tests
# read them from there.
REQUIREMENTS = ROOT / "requirements.txt"
NO_DEPS_REQUIREMENTS = ROOT / "requirements-d2l.txt"

TIMEOUT = 120  # seconds per cell; no cell of the chapter needs more than a few

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# The widgets with a browser version (tools/widgets.py), by name: the notebook whose cell
# tagged WIDGET_PREFIX + name holds the widget.
WIDGETS = {"split": "01_one_head_one_mixture.ipynb",
           "alignment": "05_alignment_heatmap.ipynb",
           "head-lab": "09_reading_the_heads.ipynb"}
WIDGET_PREFIX = "widget-"
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


def facts(nb):
    """The notebook's own facts: its metadata ``FACTS_KEY`` ({} without)."""
    return nb.metadata.get(FACTS_KEY, {})


def budgets(root=ROOT):
    """{number: seconds, or None}: each chapter notebook's time budget ("budget_s")."""
    return {number(p): facts(read(p)).get("budget_s") for p in chapter_notebooks(root)}


def exercise_numbers(sources):
    """The ``NN`` of every ``d2lutil.exercises.nbNN`` the code ``sources`` import, sorted."""
    return sorted({a or b for source in sources for a, b in IMPORT_RE.findall(source)})


def pin(package, path=None):
    """The ``package==version`` line of a requirements file (default: the one that holds
    it, requirements.txt or requirements-d2l.txt); a NotebookError when none pins it."""
    for requirements in [path] if path else [REQUIREMENTS, NO_DEPS_REQUIREMENTS]:
        for line in pathlib.Path(requirements).read_text(encoding="utf-8").splitlines():
            line = line.split("#", 1)[0].strip()
            if line.lower().startswith(f"{package.lower()}=="):
                return line
    raise NotebookError(f"no requirements file pins {package} (package==version)")


def notebook_client(nb, path, timeout=TIMEOUT, cwd=None, **options):
    """The nbclient client that runs ``nb`` (stored at ``path``) as every tool runs a
    notebook: a fresh kernel "python3" (the venv's), the notebook's folder (or ``cwd``) as
    working directory, ``timeout`` seconds per cell, no timing metadata."""
    from nbclient import NotebookClient  # the Colab check's venv has it; book needs it not

    return NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                          resources={"metadata": {"path": str(cwd or pathlib.Path(path).parent)}},
                          **options)


def title_of(nb, where="notebook"):
    """The title of a notebook: its first cell must be Markdown starting with ``# ``."""
    if not nb.cells or nb.cells[0].cell_type != "markdown":
        raise NotebookError(f"{where}: the first cell must be a Markdown title cell '# Title'")
    first = nb.cells[0].source.lstrip().splitlines()
    if not first or not first[0].startswith("# "):
        raise NotebookError(f"{where}: the first cell must start with '# Title', got {first[:1]}")
    return first[0][2:].strip()


def lesson_words(nb):
    """Whitespace-split words of the notebook's Markdown cells that belong to the lesson:
    every section but ``NOT_LESSON_SECTIONS`` (a section runs from its ``## `` heading to
    the next one, across cells) and the navigation cell."""
    words, skipping = 0, False
    for cell in nb.cells:
        if cell.cell_type != "markdown" or NAV_TAG in tags(cell):
            continue
        for line in cell.source.splitlines():
            if line.startswith("## "):
                skipping = line.strip().startswith(NOT_LESSON_SECTIONS)
            if not skipping:
                words += len(line.split())
    return words


# --- cells and their stored outputs ------------------------------------------------------

def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def widget_name(cell):
    """The browser widget (``WIDGETS``) that a tag of ``cell`` names, or None."""
    names = [t[len(WIDGET_PREFIX):] for t in tags(cell) if t.startswith(WIDGET_PREFIX)]
    return names[0] if names else None


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
