"""The lecture, live (tools/lecture.py ``live_notebook``, `make lecture`): each lecture deck as
one notebook for a RISE slideshow, on a small chapter made here and on the chapter itself,
whose live notebooks run top to bottom in one kernel with the notebooks' own outputs."""

import asyncio
import os
import subprocess
import time

import nbformat
import pytest
import tomllib
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import book
import colab
import demo_chapter
import lecture

ROOT = book.ROOT
PUB = colab.Publication("https://github.com/example-owner/example-chapter", "teaching",
                        "Heads")
TAG1, TAG2 = book.LECTURE_DECKS
SLIDE_TYPES = {"slide", "subslide", "fragment", "-", "skip", "notes"}


def tagged(cell, *tags):
    cell.metadata["tags"] = list(tags)
    return cell


def setup_cell():
    return tagged(new_code_cell("import sys  # Colab setup", id="colab-setup"), book.SETUP_TAG)


def small_chapter():
    """{file name: cells}: 01 with setup, imports, deck cells, code between them, a live cell
    outside the deck, code after it and a Going deeper; 02 whose live cell is in the deck and
    whose Recap (after Going deeper) is too; 03 with a live cell but no deck cell; 04 the
    second deck's."""
    return {
        "01_one.ipynb": [
            new_markdown_cell("# One", id="a0"),
            setup_cell(),
            new_code_cell("import math", id="a2"),
            tagged(new_markdown_cell("## Square roots", id="a3"), TAG1),
            tagged(new_code_cell("x = math.sqrt(4)\nassert x == 2\nprint(x)", id="a4"), TAG1),
            new_markdown_cell("Not in the deck.", id="a5"),
            new_code_cell("y = x + 1", id="a6"),
            tagged(new_markdown_cell("Then one more.", id="a7"), TAG1),
            tagged(new_code_cell("print(y)", id="a8"), "live-y", book.IGNORE_TAG),
            new_code_cell("print('after the last shown cell')", id="a9"),
            new_markdown_cell("## Going deeper\n\nA class can skip it.", id="a10"),
            new_code_cell("w = 2", id="a11"),
        ],
        "02_two.ipynb": [
            new_markdown_cell("# Two", id="b0"),
            setup_cell(),
            new_code_cell("import math", id="b2"),
            new_code_cell("def half(v):\n    return v / 2", id="b3"),
            tagged(new_code_cell("print(half(math.pi) > 1)", id="b4"), TAG1, "live-half"),
            new_markdown_cell("## Going deeper", id="b5"),
            new_code_cell("slow = sum(range(10))", id="b6"),
            tagged(new_markdown_cell("## Recap\n\nHalves.", id="b7"), TAG1),
        ],
        "03_three.ipynb": [new_markdown_cell("# Three", id="c0"),
                           tagged(new_code_cell("print(3)", id="c1"), "live-three")],
        "04_four.ipynb": [new_markdown_cell("# Four", id="d0"),
                          tagged(new_markdown_cell("## Decks", id="d1"), TAG2)],
    }


@pytest.fixture
def root(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "pyproject.toml").write_text(demo_chapter.PYPROJECT + 'title = "Heads"\n')
    for name, cells in small_chapter().items():
        nbformat.write(new_notebook(cells=cells), tmp_path / "notebooks" / name)
    return tmp_path


def kind(cell):
    return cell.metadata["slideshow"]["slide_type"]


def screens(nb):
    return sum(kind(c) in lecture.SCREEN_TYPES for c in nb.cells)


def test_the_live_notebook_of_a_small_chapter(root):
    live = lecture.live_notebook(root, TAG1)
    assert [(c.id, kind(c)) for c in live.cells] == [
        (f"{TAG1}-title", "slide"), ("colab-setup", "skip"),
        (f"{TAG1}-01", "slide"), ("01-a2", "skip"), ("01-a3", "-"), ("01-a4", "-"),
        ("01-a6", "skip"), ("01-a7", "subslide"), ("01-a8", "-"),
        (f"{TAG1}-02", "slide"), ("02-b2", "skip"), ("02-b3", "skip"), ("02-b4", "-"),
        ("02-b7", "slide"),
    ]
    # The code runs as the notebook has it, asserts included; no outputs are written.
    assert live.cells[5].source == "x = math.sqrt(4)\nassert x == 2\nprint(x)"
    assert all(c.outputs == [] and c.execution_count is None
               for c in live.cells if c.cell_type == "code")
    # The deck's screens, one for one: a live cell shows on the screen before it.
    deck = lecture.deck_notebook(root, TAG1, PUB)
    assert screens(live) == screens(deck) == 5
    assert "2 notebooks, 5 screens" in live.cells[0].source
    # Links to the notebooks, from where `make lecture` writes it (build/lecture/).
    assert "1. [One](../../notebooks/01_one.ipynb)" in live.cells[0].source
    assert live.metadata["rise"] == book.RISE_OPTIONS and book.FACTS_KEY not in live.metadata
    nbformat.validate(live)
    # The stored notebooks are not changed.
    stored = book.read(root / "notebooks" / "01_one.ipynb")
    assert "slideshow" not in stored.cells[2].metadata and stored.cells[4].id == "a4"


def test_a_deck_with_no_tagged_cell_is_not_written(root, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / f"{TAG2}.ipynb").write_text("stale")
    nb = book.read(root / "notebooks" / "04_four.ipynb")
    nb.cells[1].metadata["tags"] = []
    nbformat.write(nb, root / "notebooks" / "04_four.ipynb")
    written = lecture.write_live(root, out)
    assert written == [out / f"{TAG1}.ipynb"] and not (out / f"{TAG2}.ipynb").exists()
    assert f"no cell is tagged {TAG2!r}" in capsys.readouterr().out
    assert book.read(written[0]).cells[0].source.startswith("# Heads: lecture 1 of 2")


# --- the chapter's lectures ----------------------------------------------------------------

def origin(cell):
    """(notebook number, the cell's id there) of a cell of a live notebook."""
    number, _, cell_id = cell.id.partition("-")
    return number, cell_id


def course_lectures():
    """{deck: the numbers of its notebooks} and the live tags, from course/course.toml."""
    with open(ROOT / "course" / "course.toml", "rb") as f:
        course = tomllib.load(f)
    decks = {lec["deck"]: {n for part in lec["parts"] for n in part.get("notebooks", [])}
             for lec in course["lectures"]}
    return decks, set(course.get("live", {}))


@pytest.mark.parametrize("name", book.LECTURE_DECKS)
def test_the_live_notebook_holds_the_deck_and_its_live_cells(name):
    live = lecture.live_notebook(ROOT, name)
    parts = lecture._parts(ROOT, name)
    notebooks = {book.number(rel): nb for rel, nb, _, _ in parts}
    decks, live_tags = course_lectures()
    assert set(notebooks) == decks[name], "the deck's notebooks are not the plan's lecture's"
    nbformat.validate(live)
    assert live.metadata["rise"]["scroll"] is True
    assert all(kind(c) in SLIDE_TYPES for c in live.cells)
    assert all(c.outputs == [] for c in live.cells if c.cell_type == "code")
    setups = [c for c in live.cells if book.SETUP_TAG in book.tags(c)]
    assert len(setups) == 1 and live.cells.index(setups[0]) == 1 and kind(setups[0]) == "skip"
    body = [c for c in live.cells if origin(c)[0] in notebooks and book.SETUP_TAG not in
            book.tags(c)]
    # Every cell comes from its notebook unchanged but for its id, slide type and outputs,
    # in the notebook's order.
    where = {}
    for cell in body:
        number, cell_id = origin(cell)
        stored = {c.id: (i, c) for i, c in enumerate(notebooks[number].cells)}
        index, source = stored[cell_id]
        assert cell.source == source.source and book.tags(cell) == book.tags(source)
        where[cell.id] = (number, index)
    assert list(where.values()) == sorted(where.values())
    # Every deck cell, in order, with the static deck's slide types (its captions too).
    deck = lecture.deck_notebook(ROOT, name, colab.load_publication(ROOT / "pyproject.toml"))
    def shown(nb):  # its captions and tagged cells; the deck's widgets come from live cells
        return [(c.source, kind(c)) for c in nb.cells[1:] if name in book.tags(c)
                or lecture.CAPTION_CLASS in c.source]

    assert shown(live) == shown(deck)
    assert [c.source for c in deck.cells if book.widget_name(c) and name not in book.tags(c)] \
        == [c.source for c in live.cells if lecture.is_live(c) and book.widget_name(c)]
    assert screens(live) == screens(deck)
    title = live.cells[0].source.split("\n")
    assert title[0] == deck.cells[0].source.split("\n")[0]
    assert all(f"](../../{rel})" in live.cells[0].source for rel, *_ in parts)
    # Every live cell of the deck's notebooks, in order, shown.
    expected = [(n, c.source) for n, nb in notebooks.items() for c in nb.cells
                if lecture.is_live(c)]
    got = [(origin(c)[0], c.source) for c in live.cells if lecture.is_live(c)]
    assert got == expected and expected
    assert all(kind(c) != "skip" for c in live.cells if lecture.is_live(c))
    tags = {t for c in live.cells for t in book.tags(c) if t.startswith(book.LIVE_PREFIX)}
    plan_tags = {t for n, nb in notebooks.items() for c in nb.cells for t in book.tags(c)
                 if t in live_tags}
    assert plan_tags <= tags
    # What the slideshow skips is code only: the imports and definitions the shown cells use.
    assert all(c.cell_type == "code" for c in live.cells if kind(c) == "skip")


def test_make_lecture_writes_both_notebooks(tmp_path):
    """`make lecture` as a user runs it (the venv taken as it is, output into a tmp folder);
    by default it writes into build/lecture/."""
    out = tmp_path / "lecture"
    make = ["make", "--no-print-directory", "-o", ".venv/.installed"]
    run = subprocess.run([*make, "lecture", f"LECTURE_OUT={out}"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    at = os.path.relpath(out, ROOT)
    for name in book.LECTURE_DECKS:
        path = out / f"{name}.ipynb"
        assert path.is_file(), run.stdout
        assert book.read(path) == lecture.live_notebook(ROOT, name, at=at)
        assert f"wrote {path}" in run.stdout
    dry = subprocess.run([*make, "-n", "lecture"], cwd=ROOT, capture_output=True, text=True)
    assert dry.stdout.strip().endswith("tools/lecture.py") and lecture.LIVE_DIR == "build/lecture"
    # `make present` opens a lecture in JupyterLab, to run every cell before the slides (the
    # slideshow cannot run what it skips); a chapter notebook straight as slides.
    for nb, url in [(f"{lecture.LIVE_DIR}/{TAG1}.ipynb", f"/lab/tree/{lecture.LIVE_DIR}/"),
                    ("notebooks/01_x.ipynb", "/rise/notebooks/")]:
        dry = subprocess.run([*make, "-n", "present", f"NB={nb}"], cwd=ROOT,
                             capture_output=True, text=True)
        assert f"--LabApp.default_url={url}" in dry.stdout, dry.stdout
    missing = subprocess.run([*make, "present", f"NB={out}/none.ipynb"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "make lecture" in missing.stderr


@pytest.mark.parametrize("name", book.LECTURE_DECKS)
def test_the_live_notebook_runs_top_to_bottom(name, tmp_path):
    """Each lecture, from a copy, in one fresh kernel working in notebooks/ (as
    tools/chapter.py runs a notebook): no error, nothing on stderr, and every cell's text
    output the one its notebook stores (nbval's reference), but for cells whose output
    varies (nbval-ignore-output): no name that an earlier notebook leaves behind changes a
    result."""
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(lecture.live_notebook(ROOT, name), path)
    nb = book.read(path)
    client = book.notebook_client(nb, path, cwd=ROOT / book.CHAPTER_DIR)
    start = time.perf_counter()
    asyncio.run(client.async_execute())
    print(f"{name}: ran in {time.perf_counter() - start:.1f} s")
    stored = {}
    for p in book.chapter_notebooks():
        stored.update({(book.number(p), c.id): c for c in book.read(p).cells})
    stderr, differ = [], []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        stderr += [cell.id for out in cell.outputs
                   if out.output_type == "stream" and out.name == "stderr"]
        source = stored.get(origin(cell))
        if source is not None and not book.is_ignored(source) and (
                book.output_texts(cell) != book.output_texts(source)):
            differ.append(cell.id)
    assert not stderr, f"cells of {name} print to stderr: {stderr}"
    assert not differ, f"cells of {name} print other text than their notebook stores: {differ}"

