"""The lecture decks: one reveal.js deck made of the cells the authors tag for a lecture.

``book.LECTURE_DECKS`` names the decks; a deck's cells are those tagged with its name, and
its notebooks those that have such a cell. A deck is (``deck_notebook``): a generated title
slide (the deck's title, the list of its notebooks), then, notebook by notebook in the order
of their names, the cells tagged for the deck, in the notebook's order. Each notebook's part opens
with a small caption naming the notebook, on the same slide as its first tagged cell.

Slide types: ``colab.expected_slide_types`` over each notebook's tagged cells (a ``##``
cell starts a slide, ``###`` a subslide, prose after code a subslide, a cell that would
overflow its subslide a subslide, a cell tagged ``notes`` the speaker notes), and each
notebook's first tagged cell starts a slide. A screen is a slide or a subslide start (a
leaf ``<section>`` of the deck); screens are numbered as reveal.js shows them, 1 being the
title slide (``screen_ranges``).

In every deck (these and the per-notebook ones of tools/chapter.py) the displayed code has
its ``assert`` statements removed (``StripAsserts``): they are the chapter's guarantee in
the notebooks, not what a lecture shows.

The lecture, live (``live_notebook``; ``python tools/lecture.py [--out DIR]``, which `make
lecture` runs): each deck as one notebook without outputs, written into build/lecture/ as
``NAME.ipynb``, for `make present` to show as RISE slides and run in one kernel. It shows
the deck's screens (the same slide types) with the notebooks' live cells (tagged
``live-...``) on them, and holds, skipped by the slideshow, the code the shown cells need.
Its code keeps the asserts: in class, what runs is what the slide shows.
"""

import argparse
import ast
import copy
import html
import os
import pathlib
import re
import sys

import nbformat
from nbconvert.preprocessors import Preprocessor

import book
import colab

SCREEN_TYPES = ("slide", "subslide")
CAPTION_CLASS = "deck-part"  # the caption above each notebook's part of a deck
LIVE_DIR = "build/lecture"  # where `make lecture` writes the live notebooks (from the root)


def _check_deck(name):
    if not isinstance(name, str) or name not in book.LECTURE_DECKS:
        raise ValueError(f"name: unknown lecture deck {name!r}; the decks are "
                         f"{list(book.LECTURE_DECKS)} (tools/book.py LECTURE_DECKS)")


def _parts(root, name):
    """[(relpath, notebook, [its cells tagged for the deck], [their slide types])] for the
    chapter notebooks under ``root`` that have a cell tagged ``name``."""
    _check_deck(name)
    root = pathlib.Path(root)
    if not (root / book.CHAPTER_DIR).is_dir():
        raise ValueError(f"root: {root} has no {book.CHAPTER_DIR}/ folder")
    parts = []
    for path in book.chapter_notebooks(root):
        rel, nb = book.relpath_of(path, root), book.read(path)
        cells = [c for c in nb.cells if name in book.tags(c)]
        if cells:
            types = colab.expected_slide_types(cells)
            types[0] = "slide"  # each notebook's part starts a slide
            parts.append((rel, nb, cells, types))
    return parts


def deck_cells(root, name):
    """[(notebook relpath, cell)]: the cells of the stored notebooks under ``root`` tagged for
    the deck ``name``, notebook by notebook, each notebook's in order (the cells themselves,
    not copies)."""
    return [(rel, cell) for rel, _, cells, _ in _parts(root, name) for cell in cells]


def screen_ranges(root, name):
    """{notebook relpath: (first screen, last screen)} of the deck ``name``, numbered as
    reveal.js shows them (1 is the title slide), from the stored notebooks under ``root``
    (nothing is built). A notebook with no tagged cell is not in it."""
    ranges, screen = {}, 1
    for rel, _, _, types in _parts(root, name):
        count = sum(t in SCREEN_TYPES for t in types)
        ranges[rel] = (screen + 1, screen + count)
        screen += count
    return ranges


def deck_title(pub, name):
    """The title of the deck ``name``: the chapter's, and which lecture of how many."""
    _check_deck(name)
    decks = book.LECTURE_DECKS
    return f"{pub.title}: lecture {decks.index(name) + 1} of {len(decks)}"


def _title_cell(pub, name, titles, screens):
    """The title slide of the deck ``name``: its title, its notebooks (``titles``,
    [(relpath, title)]) linked as from ``notebooks/``, and ``screens``, its count."""
    lines = [f"# {deck_title(pub, name)}", ""]
    lines += [f"{i}. [{title}]({pathlib.PurePosixPath(rel).name})"
              for i, (rel, title) in enumerate(titles, 1)]
    lines += ["", f"{len(titles)} notebooks, {screens} screens" if titles
              else "*No cell is tagged for this deck yet.*"]
    title = nbformat.v4.new_markdown_cell("\n".join(lines), id=f"{name}-title")
    title.metadata["slideshow"] = {"slide_type": "slide"}
    return title


def _caption_cell(name, rel, title):
    """The caption that opens the part of the notebook at ``rel`` (its title): a slide."""
    caption = nbformat.v4.new_markdown_cell(
        f'<p class="{CAPTION_CLASS}">{html.escape(title)}</p>', id=f"{name}-{book.number(rel)}")
    caption.metadata["slideshow"] = {"slide_type": "slide"}
    return caption


def _shown_types(types):
    """The slide types of a part's tagged cells in a deck: the caption starts the part's
    slide, and its first cell shows on it."""
    return ["-", *types[1:]]


def _screens(parts):
    return 1 + sum(t in SCREEN_TYPES for *_, types in parts for t in types)


def _metadata(parts):
    """A deck's notebook metadata: the first notebook's (kernel, language, RISE options),
    without its widget state or its facts (they are that notebook's, not the deck's)."""
    metadata = copy.deepcopy(parts[0][1].metadata) if parts else nbformat.NotebookNode()
    metadata.pop("widgets", None)
    metadata.pop(book.FACTS_KEY, None)
    return metadata


def deck_notebook(root, name, pub):
    """The deck ``name`` as a notebook (copies of the tagged cells, slide types set), for
    nbconvert's SlidesExporter. Its links are those of the notebooks in ``notebooks/``
    (tools/chapter.py for_slides rewrites them as for any notebook there). A live cell with
    a browser widget (``book.widget_name``) after a tagged cell of its notebook comes too,
    without its code, on the screen of the shown cell before it."""
    if not isinstance(pub, colab.Publication):
        raise TypeError(f"pub: a colab.Publication (with a title), got {type(pub).__name__}")
    parts = _parts(root, name)
    titles = [(rel, book.title_of(nb, rel)) for rel, nb, _, _ in parts]
    cells = [_title_cell(pub, name, titles, _screens(parts))]
    for (rel, nb, tagged, types), (_, nb_title) in zip(parts, titles, strict=True):
        cells.append(_caption_cell(name, rel, nb_title))
        kinds = {id(cell): kind for cell, kind in zip(tagged, _shown_types(types), strict=True)}
        shown = False  # a cell of the part's is on a slide
        for cell in nb.cells:
            if id(cell) in kinds:
                shown = True
                cells.append(copy.deepcopy(cell))
                cells[-1].metadata.setdefault("slideshow", {})["slide_type"] = kinds[id(cell)]
            elif shown and is_live(cell) and book.widget_name(cell):
                # A live cell's widget, on the screen of the shown cell before it: only
                # the widget, which the site's decks run in the browser (tools/widgets.py).
                cells.append(copy.deepcopy(cell))
                cells[-1].metadata["slideshow"] = {"slide_type": "-"}
                cells[-1].metadata["transient"] = {"remove_source": True}
    return nbformat.v4.new_notebook(cells=cells, metadata=_metadata(parts))


# --- the lecture, live (`make lecture`) ---------------------------------------------------

def is_live(cell):
    """True for a cell to run live in class: tagged ``live-...`` (book.LIVE_PREFIX)."""
    return any(tag.startswith(book.LIVE_PREFIX) for tag in book.tags(cell))


def live_notebook(root, name, pub=None, at=LIVE_DIR):
    """The lecture ``name`` as one notebook to present and run live in a RISE slideshow,
    without outputs. `make lecture` writes it, `make present NB=build/lecture/NAME.ipynb`
    opens it in JupyterLab: run every cell first (the skipped ones too: the slideshow cannot
    run them), then Alt+R shows the slides on that kernel.

    It shows what the deck ``name`` shows (``deck_notebook``: its title slide, each part's
    caption, the tagged cells with the deck's slide types) plus the notebooks' cells tagged
    ``live-...`` (``is_live``), which sit on the screen of the shown cell before them
    (slide type "-"), so its screens are the deck's, numbered as ``screen_ranges`` numbers
    them. So that it runs top to bottom in one kernel, each part also holds, skipped by the
    slideshow ("skip"), every other code cell of its notebook before the part's last shown
    code cell, in order: the imports and definitions the shown cells use. The code after that
    cell (Going deeper, the exercises) is left out: nothing shown runs after it. The Colab
    setup cell comes once, at the top (skipped): the notebook runs in Colab as the chapter's
    do. Shown code keeps its asserts: in class, what runs is what the slide shows, the
    notebook's code with its checks. Cell ids are prefixed with the notebook's number;
    links to the chapter's notebooks are made relative to ``at`` (the folder it is written
    in, from ``root``).
    """
    root = pathlib.Path(root)
    if pub is None:
        pub = colab.load_publication(root / "pyproject.toml")
    parts = _parts(root, name)
    titles = [(rel, book.title_of(nb, rel)) for rel, nb, _, _ in parts]
    setup, cells = None, []
    for (rel, nb, tagged, types), (_, nb_title) in zip(parts, titles, strict=True):
        kinds = {id(cell): kind for cell, kind in zip(tagged, _shown_types(types), strict=True)}
        shown_code = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
                      and (id(cell) in kinds or is_live(cell))]
        last = shown_code[-1] if shown_code else -1
        cells.append(_caption_cell(name, rel, nb_title))
        for i, cell in enumerate(nb.cells):
            if id(cell) in kinds:
                kind = kinds[id(cell)]
            elif is_live(cell):
                kind = "-"
            elif book.SETUP_TAG in book.tags(cell):
                setup = setup or cell
                continue
            elif cell.cell_type == "code" and i < last:
                kind = "skip"
            else:
                continue
            cell = copy.deepcopy(cell)
            cell.id = f"{book.number(rel)}-{cell.get('id') or i}"[:64]
            cell.metadata.setdefault("slideshow", {})["slide_type"] = kind
            cells.append(cell)
    screens = 1 + sum(c.metadata["slideshow"]["slide_type"] in SCREEN_TYPES for c in cells)
    if setup is not None:
        setup = copy.deepcopy(setup)
        setup.metadata["slideshow"] = {"slide_type": "skip"}
        cells.insert(0, setup)
    cells.insert(0, _title_cell(pub, name, titles, screens))
    metadata = _metadata(parts)
    metadata["rise"] = {**metadata.get("rise", {}), **book.RISE_OPTIONS}
    live = book.clear_outputs(nbformat.v4.new_notebook(cells=cells, metadata=metadata))
    return colab.rewrite_links(live, pub, f"{book.CHAPTER_DIR}/{name}.ipynb",
                                 lambda target: target, book.BADGE_IMAGE,
                                 at=f"{pathlib.PurePath(at).as_posix()}/{name}.ipynb")


def write_live(root, out):
    """Write ``live_notebook`` of each lecture deck into ``out`` as ``NAME.ipynb``; a deck
    with no tagged cell is left out (a stale file of it removed), with a note. Returns the
    paths written."""
    root, out = pathlib.Path(root), pathlib.Path(out)
    at = os.path.relpath(out.resolve(), root.resolve())
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in book.LECTURE_DECKS:
        path = out / f"{name}.ipynb"
        if not deck_cells(root, name):
            path.unlink(missing_ok=True)
            print(f"no cell is tagged {name!r}: {path} is not written", flush=True)
            continue
        nb = live_notebook(root, name, at=at)
        nbformat.write(nb, path)
        kinds = [c.metadata["slideshow"]["slide_type"] for c in nb.cells]
        shown = sum(kind != "skip" for kind in kinds)
        print(f"wrote {path}: {len(kinds)} cells, {shown} shown "
              f"({sum(map(is_live, nb.cells))} live), {len(kinds) - shown} skipped", flush=True)
        written.append(path)
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Write each lecture as one notebook to run live as RISE slides.")
    parser.add_argument("--out", type=pathlib.Path, default=book.ROOT / LIVE_DIR,
                        help=f"the folder to write NAME.ipynb into (default: {LIVE_DIR}/)")
    args = parser.parse_args(argv)
    written = write_live(book.ROOT, args.out)
    if written and written[0].resolve().is_relative_to(book.ROOT):
        print(f"Present one: make present NB={written[0].resolve().relative_to(book.ROOT)}, "
              "run every cell (the toolbar's \"Restart the kernel and run all cells\"), "
              "then Alt+R shows the slides")
    return 0


# --- the asserts, out of the displayed code -----------------------------------------------

_BLOCKS = ("body", "orelse", "finalbody")


def _only_checks(stmt):
    """True for an assert, or an if/for/while/with whose every branch holds only such
    statements: code that does nothing but check."""
    if isinstance(stmt, ast.Assert):
        return True
    if not isinstance(stmt, (ast.If, ast.For, ast.While, ast.With)):
        return False
    return all(_only_checks(s) for block in _BLOCKS for s in getattr(stmt, block, []))


def _removals(body, removed, keep_one):
    """Collect in ``removed`` the check-only statements of ``body``, recursing into the
    others; when every statement of a block that must keep one (``keep_one``) goes, the
    first is marked ``pass_instead``."""
    gone = [s for s in body if _only_checks(s)]
    for s in body:
        if s in gone:
            continue
        for block in _BLOCKS:
            _removals(getattr(s, block, []), removed, keep_one=True)
        for handler in getattr(s, "handlers", []):
            _removals(handler.body, removed, keep_one=True)
    for i, s in enumerate(gone):
        s.pass_instead = keep_one and len(gone) == len(body) and i == 0
        removed.append(s)


def strip_asserts(source):
    """``source`` without its assert statements (whole statements, over all their lines),
    nor the if/for/while/with blocks that only assert; the comment lines right above a
    removed statement go with it. A block left empty keeps a ``pass``. Source that does not
    parse (``%magic``, ``!shell``) or where a statement to remove shares a line with other
    code (``x = 1; assert x``) comes back as it is."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    removed = []
    _removals(tree.body, removed, keep_one=False)
    if not removed:
        return source
    lines = source.split("\n")
    statements = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    drop, replace = set(), {}
    for s in removed:
        start, end = (s.lineno, s.col_offset), (s.end_lineno, s.end_col_offset)
        span = range(s.lineno, s.end_lineno + 1)
        for n in statements:
            inside = (n.lineno, n.col_offset) >= start and (n.end_lineno, n.end_col_offset) <= end
            around = (n.lineno, n.col_offset) <= start and (n.end_lineno, n.end_col_offset) >= end
            if not inside and not around and (n.lineno in span or n.end_lineno in span):
                return source
        before = lines[s.lineno - 1][: s.col_offset]
        after = lines[s.end_lineno - 1][s.end_col_offset:].strip()
        if before.strip() or (after and not after.startswith("#")):
            return source  # on the line of a compound statement's header (``if x: assert y``)
        drop.update(span)
        if getattr(s, "pass_instead", False):
            replace[s.lineno] = " " * s.col_offset + "pass"
        above = s.lineno - 1
        while above >= 1 and lines[above - 1].strip().startswith("#") and above not in drop:
            drop.add(above)
            above -= 1
    kept = [replace.get(i, line) for i, line in enumerate(lines, 1)
            if i not in drop or i in replace]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip("\n")


class StripAsserts(Preprocessor):
    """Remove the assert statements from each code cell's displayed source (``strip_asserts``);
    the cell and its outputs stay, and a cell left with no code shows only its outputs.

    Written here because nbconvert has no preprocessor for part of a cell's source:
    RegexRemovePreprocessor drops whole cells whose source matches a pattern, and
    TagRemovePreprocessor drops whole cells, their whole input (``remove_input_tags``: it sets
    ``cell.metadata.transient = {"remove_source": True}``, which the templates honour, and
    that is what a cell left empty gets here) or outputs, all by tag (nbconvert/
    preprocessors/regexremove.py and tagremove.py).
    """

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code":
            cell.source = strip_asserts(cell.source)
            if not cell.source.strip():
                cell.metadata["transient"] = {"remove_source": True}
        return cell, resources


if __name__ == "__main__":
    sys.exit(main())
