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
"""

import ast
import copy
import html
import pathlib
import re

import nbformat
from nbconvert.preprocessors import Preprocessor

import book
import colab

SCREEN_TYPES = ("slide", "subslide")
CAPTION_CLASS = "deck-part"  # the caption above each notebook's part of a deck


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


def deck_notebook(root, name, pub):
    """The deck ``name`` as a notebook (copies of the tagged cells, slide types set), for
    nbconvert's SlidesExporter. Its links are those of the notebooks in ``notebooks/``
    (tools/chapter.py for_slides rewrites them as for any notebook there)."""
    if not isinstance(pub, colab.Publication):
        raise TypeError(f"pub: a colab.Publication (with a title), got {type(pub).__name__}")
    parts = _parts(root, name)
    titles = [(rel, book.title_of(nb, rel)) for rel, nb, _, _ in parts]
    lines = [f"# {deck_title(pub, name)}", ""]
    lines += [f"{i}. [{title}]({pathlib.PurePosixPath(rel).name})"
              for i, (rel, title) in enumerate(titles, 1)]
    screens = 1 + sum(t in SCREEN_TYPES for *_, types in parts for t in types)
    lines += ["", f"{len(parts)} notebooks, {screens} screens" if parts
              else "*No cell is tagged for this deck yet.*"]
    title = nbformat.v4.new_markdown_cell("\n".join(lines), id=f"{name}-title")
    title.metadata["slideshow"] = {"slide_type": "slide"}
    cells = [title]
    for (rel, _, tagged, types), (_, nb_title) in zip(parts, titles, strict=True):
        caption = nbformat.v4.new_markdown_cell(
            f'<p class="{CAPTION_CLASS}">{html.escape(nb_title)}</p>',
            id=f"{name}-{book.number(rel)}")
        caption.metadata["slideshow"] = {"slide_type": "slide"}
        cells.append(caption)
        for i, (cell, kind) in enumerate(zip(tagged, types, strict=True)):
            cell = copy.deepcopy(cell)
            # The caption starts the part's slide; its first cell shows on it.
            cell.metadata.setdefault("slideshow", {})["slide_type"] = "-" if i == 0 else kind
            cells.append(cell)
    deck = nbformat.v4.new_notebook(cells=cells)
    first = parts[0][1] if parts else None
    if first is not None:
        deck.metadata = copy.deepcopy(first.metadata)
    deck.metadata.pop("widgets", None)
    return deck


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
