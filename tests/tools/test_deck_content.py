"""What the lecture decks show, read from the stored notebooks: nothing is built (the
browser test, tests/browser/test_browser_slides.py, measures the built decks).

A deck (tools/lecture.py) shows its cells' code with the asserts removed, so each rule is
checked on what a screen shows, screen by screen as ``lecture.screen_ranges`` counts them
(a screen runs from one slide or subslide start to the next):

- no code screen claims what it does not compute: once its asserts are gone, a code cell
  computes nothing that no one reads (``code_problems``: a name it assigns, a function it
  defines or a module it imports that neither the cell itself nor a later cell of the deck
  reads) and does not print fixed text only;
- a deck has at most ``book.DECK_SCREENS`` screens, and at most ``DENSE_MAX`` of them hold
  ``DENSE_LINES`` lines of code and output or more;
- no slide points at what the deck leaves out (``POINTERS``: "printed here", a slider);
- no screen has more than ``PROSE_WORDS_MAX`` words of Markdown, and none is only a title
  (and a Colab badge).

Each rule is tested on the real decks, one test per deck, and shown failing on a small
chapter made here.
"""

import ast
import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

import book
import lecture

DECKS = book.LECTURE_DECKS
DENSE_LINES = 20  # lines of code and output that make a screen dense
DENSE_MAX = 3  # dense screens a deck may have
PROSE_WORDS_MAX = 150  # words of Markdown on one screen
# What a slide may not say: it points at something a deck does not show (an output the
# deck's cell does not print, a widget).
POINTERS = re.compile(r"(?i)\bprinted here\b|\bsliders?\b")
SHOWN_MIMES = ("image/png", "image/jpeg", "image/svg+xml", "text/html", book.WIDGET_MIME)


# --- a deck's screens, as shown ------------------------------------------------------------

def screens(root, name):
    """The screens of the deck ``name`` after its title slide: [[(where, cell, slide type)]],
    ``where`` naming the notebook and the cell's index in it (from 0)."""
    found = []
    for rel, nb, cells, types in lecture._parts(root, name):
        index = {id(cell): i for i, cell in enumerate(nb.cells)}
        for cell, kind in zip(cells, types, strict=True):
            if kind in lecture.SCREEN_TYPES:
                found.append([])
            found[-1].append((f"{rel} cell {index[id(cell)]}", cell, kind))
    return found


def shown_code(cell):
    """The code a deck shows of a code cell: its source without the asserts."""
    return lecture.strip_asserts(cell.source)


def output_lines(cell):
    """Lines of the text outputs a deck shows below a code cell (a figure, an HTML table or
    a widget shows instead of its text)."""
    text = ""
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            text += out.text
        elif out.output_type in ("execute_result", "display_data"):
            data = out.get("data", {})
            if not any(mime in data for mime in SHOWN_MIMES):
                text += data.get("text/plain", "") + "\n"
        elif out.output_type == "error":
            text += f"{out.ename}: {out.evalue}\n"
    return len(text.rstrip("\n").splitlines()) if text.strip() else 0


def screen_lines(screen):
    """Lines of code (asserts removed) and text output on a screen."""
    code = [cell for _, cell, _ in screen if cell.cell_type == "code"]
    return sum(len(shown_code(cell).splitlines()) + output_lines(cell) for cell in code)


def screen_prose(screen):
    """The Markdown a screen shows (speaker notes are not on it)."""
    return [cell.source for _, cell, kind in screen
            if cell.cell_type == "markdown" and kind != "notes"]


# --- code that computes what nothing shows --------------------------------------------------

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
          ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _own_scope(tree):
    """The nodes of a cell's own scope: not those inside a def, class, lambda or
    comprehension (the def or class itself is)."""
    for node in ast.iter_child_nodes(tree):
        yield node
        if not isinstance(node, SCOPES):
            yield from _own_scope(node)


def _base(target):
    """The variable under ``x[i]``, ``x.a`` or ``*x``."""
    while isinstance(target, (ast.Subscript, ast.Attribute, ast.Starred)):
        target = target.value
    return target


def _targets(node):
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in node.items if item.optional_vars is not None]
    return []


def bound_names(tree):
    """{name: the line that first binds it} of a cell's own scope, in order: the variables
    it assigns (also through ``x[i] =`` or ``x.a =``), loops over or opens, the modules it
    imports and the functions and classes it defines undecorated (a decorator, such as
    ``d2l.add_to_class``, uses what it gets). Names starting with ``_`` are thrown away by
    intent."""
    names = {}
    for node in _own_scope(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.setdefault((alias.asname or alias.name).split(".")[0], node.lineno)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if not node.decorator_list:
                names.setdefault(node.name, node.lineno)
        stack = list(_targets(node))
        while stack:
            target = stack.pop(0)
            if isinstance(target, (ast.Tuple, ast.List)):
                stack[:0] = target.elts
            elif isinstance(_base(target), ast.Name):
                names.setdefault(_base(target).id, node.lineno)
    return {name: line for name, line in names.items() if not name.startswith("_")}


def read_names(tree):
    """{name: the line that first reads it} of a cell, functions' bodies included; ``x`` in
    ``x[i] = ...`` is written into, not read (``x[i] += 1`` reads and writes it)."""
    written = {id(_base(node)) for node in ast.walk(tree)
               if isinstance(node, (ast.Subscript, ast.Attribute))
               and isinstance(node.ctx, ast.Store)}
    reads = [(node.lineno, node.id) for node in ast.walk(tree) if isinstance(node, ast.Name)
             and isinstance(node.ctx, ast.Load) and id(node) not in written]
    reads += [(node.lineno, _base(node.target).id) for node in ast.walk(tree)
              if isinstance(node, ast.AugAssign) and isinstance(_base(node.target), ast.Name)]
    first = {}
    for line, name in sorted(reads):
        first.setdefault(name, line)
    return first


def read_later(name, trees):
    """True if a later cell (``trees``, in order) reads what ``name`` holds: it reads the
    name before it binds it anew (a cell that binds it first starts a new value)."""
    for tree in trees:
        read, bound = read_names(tree).get(name), bound_names(tree).get(name)
        if read is not None and (bound is None or read <= bound):
            return True
        if bound is not None:
            return False
    return False


def _fixed_text(node):
    """A string literal, or an f-string without a placeholder."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, ast.JoinedStr) and not any(
        isinstance(part, ast.FormattedValue) for part in node.values)


def _is_print(node):
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "print")


def prints_fixed_text_only(tree, cell):
    """True when all that a cell shows is fixed text: it prints, every print's arguments are
    literals, and it neither calls anything else at its top level nor displays a result (a
    figure, a value)."""
    prints = [node for node in ast.walk(tree) if _is_print(node)]
    others = [s for s in tree.body if isinstance(s, ast.Expr) and not _is_print(s.value)]
    displays = [out for out in cell.get("outputs", [])
                if out.output_type in ("execute_result", "display_data")]
    return bool(prints) and not others and not displays and all(
        _fixed_text(arg) for node in prints for arg in node.args)


def code_problems(root, name):
    """The code cells of the deck ``name`` that, asserts removed, show a claim they do not
    compute: they compute what neither they nor a later cell of the deck reads (a loop whose
    body was an assert, a difference taken only to be asserted), or print fixed text only.
    A cell that does not parse (a ``%magic``) is not judged."""
    cells = [(where, cell) for screen in screens(root, name) for where, cell, _ in screen
             if cell.cell_type == "code"]
    trees = []
    for where, cell in cells:
        try:
            trees.append((where, cell, ast.parse(shown_code(cell))))
        except SyntaxError:
            trees.append((where, cell, None))
    problems = []
    for k, (where, cell, tree) in enumerate(trees):
        if tree is None:
            continue
        later = [t for _, _, t in trees[k + 1:] if t is not None]
        unread = [name for name in bound_names(tree)
                  if name not in read_names(tree) and not read_later(name, later)]
        if unread:
            problems.append(f"{name}: {where} computes {', '.join(unread)}, which nothing on "
                            "the slides reads (its asserts removed): show it (print what an "
                            "assert checks, a comparison with its bound), or leave it out")
        if prints_fixed_text_only(tree, cell):
            problems.append(f"{name}: {where} prints only fixed text: print the computed "
                            "result (a comparison with its bound, named)")
    return problems


# --- screens: how many, how dense, what their prose says ----------------------------------

def screen_count(root, name):
    """The deck's screens, its title slide included, as lecture.screen_ranges numbers them."""
    ranges = lecture.screen_ranges(root, name)
    return max((last for _, last in ranges.values()), default=1)


def dense_screens(root, name):
    """[(first cell of the screen, its lines)] of the screens with DENSE_LINES lines of code
    and output or more."""
    return [(screen[0][0], lines) for screen in screens(root, name)
            if (lines := screen_lines(screen)) >= DENSE_LINES]


def pointer_problems(root, name):
    """Slides whose Markdown points at what the deck does not show (POINTERS)."""
    return [f"{name}: {where} says {m.group(0)!r}, which the deck does not show"
            for screen in screens(root, name) for where, cell, kind in screen
            if cell.cell_type == "markdown" and kind != "notes"
            for m in [POINTERS.search(cell.source)] if m]


HEADING_OR_BADGE = re.compile(r"^\s*#{1,6}\s.*$|^\s*\[!\[[^\]]*\]\([^)]*\)\]\([^)]*\)\s*$",
                              re.MULTILINE)


def prose_problems(root, name):
    """Screens with more than PROSE_WORDS_MAX words of Markdown, and screens that show
    nothing but headings and a Colab badge."""
    problems = []
    for screen in screens(root, name):
        where, prose = screen[0][0], screen_prose(screen)
        words = sum(len(text.split()) for text in prose)
        if words > PROSE_WORDS_MAX:
            problems.append(f"{name}: the screen of {where} has {words} words of prose, more "
                            f"than {PROSE_WORDS_MAX}: split the cell or cut it")
        bare = all(not HEADING_OR_BADGE.sub("", text).strip() for text in prose)
        if bare and not any(cell.cell_type == "code" for _, cell, _ in screen):
            problems.append(f"{name}: the screen of {where} shows only a title"
                            f"{' and a badge' if book.BADGE_ALT in ''.join(prose) else ''}")
    return problems


# --- the chapter's decks ---------------------------------------------------------------------

ROOT = book.ROOT


def test_the_caps_name_every_deck():
    assert set(book.DECK_SCREENS) == set(DECKS), (
        f"book.DECK_SCREENS names {sorted(book.DECK_SCREENS)}, the decks are {list(DECKS)}")


@pytest.mark.parametrize("name", DECKS)
def test_no_code_screen_shows_a_claim_it_does_not_compute(name):
    problems = code_problems(ROOT, name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", DECKS)
def test_a_deck_keeps_to_its_screens(name):
    count, cap = screen_count(ROOT, name), book.DECK_SCREENS[name]
    assert count == 1 + len(screens(ROOT, name))  # the title slide, then the tagged cells'
    assert count <= cap, (f"{name}: {count} screens, more than {cap} (book.DECK_SCREENS): "
                          f"{lecture.screen_ranges(ROOT, name)}")


@pytest.mark.parametrize("name", DECKS)
def test_few_screens_are_dense(name):
    dense = dense_screens(ROOT, name)
    assert len(dense) <= DENSE_MAX, (
        f"{name}: {len(dense)} screens with {DENSE_LINES} or more lines of code and output, "
        f"more than {DENSE_MAX}: " + "; ".join(f"{where} ({lines})" for where, lines in dense))


@pytest.mark.parametrize("name", DECKS)
def test_no_slide_points_at_what_the_deck_leaves_out(name):
    problems = pointer_problems(ROOT, name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", DECKS)
def test_prose_screens_are_short_and_none_is_only_a_title(name):
    problems = prose_problems(ROOT, name)
    assert not problems, "\n".join(problems)


# --- the rules fail where they must: a small chapter made here -------------------------------

TAG = DECKS[0]
BADGE = f"[![{book.BADGE_ALT}]({book.BADGE_IMAGE})](https://example.org/01_one.ipynb)"


# A 1 x 1 PNG: the stamper reads a figure's size from its header.
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJ"
       "RU5ErkJggg==")


def tagged(cell, *tags):
    cell.metadata["tags"] = [TAG, *tags]
    return cell


def code(source, text=None, figure=False):
    cell = new_code_cell(source)
    if text is not None:
        cell.outputs = [new_output("stream", name="stdout", text=text)]
    if figure:
        cell.outputs.append(new_output("display_data", data={
            "image/png": PNG, "text/plain": "<Figure size 640x480 with 1 Axes>"}))
    return cell


def chapter(tmp_path, cells):
    (tmp_path / "notebooks").mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=cells), tmp_path / "notebooks" / "01_one.ipynb")
    return tmp_path


def test_code_rules_name_the_cells_that_claim_what_they_do_not_compute(tmp_path):
    root = chapter(tmp_path, [
        new_markdown_cell(f"# One\n\n{BADGE}"),
        tagged(new_markdown_cell("## Heads")),
        # 2: a loop whose body was an assert, and its input read by nothing else
        tagged(code("all_heads = W(q)\nfor i in range(4):\n    W_i = W[i]\n"
                    "    assert (W_i @ q == all_heads[i]).all()\nprint(len(W), 'heads')",
                    "4 heads\n")),
        # 3: a difference taken for an assert, then a fixed bound printed
        tagged(code("difference = abs(a - b)\nassert difference < 1e-6\n"
                    "print(f'difference < 1e-6')", "difference < 1e-6\n")),
        # 4: the same printed as computed: passes
        tagged(code("difference = abs(a - b)\nassert difference < 1e-6\n"
                    "print('difference below 1e-6:', difference < 1e-6)",
                    "difference below 1e-6: True\n")),
        # 5: an import, a function and a class later cells use; a decorated method;
        # x[i] = ... read later; a name thrown away: passes
        tagged(code("import math\n\ndef f(x):\n    return math.sqrt(x)\n\nclass C:\n"
                    "    pass\n\n@add_to_class(C)\ndef g(self):\n    return 1\n\n"
                    "table = {}\ntable['a'] = 1\n_, y = 1, 2")),
        # 6: a function nobody calls, a module nobody uses
        tagged(code("import os\n\ndef unused():\n    return 1\n\nprint(f(4), C(), table)",
                    "2.0\n")),
        # 7: fixed text with a figure: the figure is computed, passes
        tagged(code("print('the curve')\n_ = plot(y)", "the curve\n", figure=True)),
        # 8: an assert-only cell shows its output alone: nothing to judge
        tagged(code("assert f(4) == 2", "")),
        # untagged cells are not in the deck: reading there does not count
        code("print(W_i, difference)"),
    ])
    problems = code_problems(root, TAG)
    where = "notebooks/01_one.ipynb cell"
    assert [p.split(" computes ")[0].split(" prints ")[0] for p in problems] == [
        f"{TAG}: {where} 2", f"{TAG}: {where} 3", f"{TAG}: {where} 3", f"{TAG}: {where} 6"]
    assert "computes all_heads, W_i, which nothing" in problems[0]
    assert "computes difference, which" in problems[1]
    assert "prints only fixed text" in problems[2]
    assert "computes os, unused, which" in problems[3]


def test_screen_rules_name_dense_wordy_pointing_and_bare_screens(tmp_path):
    long_code = "\n".join(f"x{i} = {i}" for i in range(14)) + "\nprint(" + " + ".join(
        f"x{i}" for i in range(14)) + ")"
    output = "\n".join(str(i) for i in range(6))  # 15 lines of code + 6 of output
    root = chapter(tmp_path, [
        tagged(new_markdown_cell(f"# One\n\n{BADGE}")),  # screen 2: a title and a badge
        tagged(new_markdown_cell("## Dense")),  # screen 3: 21 lines
        tagged(code(long_code + "\nassert x1", output + "\n")),
        tagged(new_markdown_cell("## Just under")),  # screen 4: 19 lines
        tagged(code(long_code, "\n".join(output.splitlines()[:4]), figure=True)),
        tagged(new_markdown_cell("## Words\n\n" + "word " * 148)),  # screen 5: 150 words
        tagged(new_markdown_cell("### More words\n\n" + "word " * 148)),  # screen 6: 151
        tagged(new_markdown_cell("## Pointing\n\nThe table is printed here.")),  # screen 7
        tagged(new_markdown_cell("Move the Slider, then the plain call below.")),
        tagged(new_markdown_cell("A speaker's note about the slider."), book.NOTES_TAG),
    ])
    assert screen_count(root, TAG) == 7 == 1 + len(screens(root, TAG))
    assert dense_screens(root, TAG) == [("notebooks/01_one.ipynb cell 1", 21)]
    assert [len(screen) for screen in screens(root, TAG)] == [1, 2, 2, 1, 1, 3]
    assert pointer_problems(root, TAG) == [
        f"{TAG}: notebooks/01_one.ipynb cell 7 says 'printed here', which the deck does not "
        "show", f"{TAG}: notebooks/01_one.ipynb cell 8 says 'Slider', which the deck does not "
        "show"]
    assert prose_problems(root, TAG) == [
        f"{TAG}: the screen of notebooks/01_one.ipynb cell 0 shows only a title and a badge",
        f"{TAG}: the screen of notebooks/01_one.ipynb cell 6 has 151 words of prose, more "
        f"than {PROSE_WORDS_MAX}: split the cell or cut it"]
