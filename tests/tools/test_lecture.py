"""The lecture decks (tools/lecture.py) and what tools/chapter.py does with them, on a small
chapter made here; the notation table on the front page (the chapter's own: the browser
test of the index page). No browser: tests/browser/test_browser_slides.py has one."""

import contextlib
import html
import html.parser
import io
import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

import book
import chapter
import colab
import lecture

PUB = colab.Publication("https://github.com/example-owner/example-chapter", "teaching",
                        "Heads")
TAG1, TAG2 = book.LECTURE_DECKS  # a deck's cells are tagged with its name


def tagged(cell, *tags):
    cell.metadata["tags"] = list(tags)
    return cell


def code(source, text=None):
    cell = new_code_cell(source)
    if text is not None:
        cell.outputs = [new_output("stream", name="stdout", text=text)]
    return cell


def notebooks():
    """{file name: cells} of a small chapter: notebook 01 with four cells for the first deck
    (a slide, code on it, prose after code: a subslide, a ### subslide) among others; 02
    whose first tagged cell is code (a slide all the same); 03 with none; 04 and 06 with the
    second deck's."""
    return {
        "01_one.ipynb": [
            new_markdown_cell("# One head"),
            tagged(new_markdown_cell("## The task\n\nCopy a token."), TAG1),
            new_markdown_cell("Not for the lecture."),
            tagged(code("x = 1\nassert x == 1\nprint(x)", "1\n"), TAG1),
            tagged(new_markdown_cell("After the code, a new screen."), TAG1),
            tagged(new_markdown_cell("### A proof\n\nProposition."), TAG1),
            new_markdown_cell("## Going deeper\n\nSkipped."),
        ],
        "02_two.ipynb": [
            new_markdown_cell("# Two heads"),
            tagged(code("y = 2\nprint(y)", "2\n"), TAG1),
            tagged(new_markdown_cell("## Training\n\nTwo heads."), TAG1),
        ],
        "03_three.ipynb": [new_markdown_cell("# Three"), new_markdown_cell("## Nothing tagged")],
        "04_four.ipynb": [new_markdown_cell("# Four"),
                          tagged(new_markdown_cell("## Decks"), TAG2)],
        "06_six.ipynb": [new_markdown_cell("# Six"),
                         tagged(new_markdown_cell("## Cache\n\nKeys."), TAG2, "other")],
    }


def write_chapter(root, chapter_cells):
    (root / "notebooks").mkdir(parents=True, exist_ok=True)
    for name, cells in chapter_cells.items():
        nbformat.write(new_notebook(cells=cells), root / "notebooks" / name)
    return root


@pytest.fixture
def root(tmp_path):
    return write_chapter(tmp_path, notebooks())


def test_deck_cells_are_the_tagged_cells_notebook_by_notebook(root):
    cells = lecture.deck_cells(root, "lecture")
    assert [(rel, c.source.split("\n")[0]) for rel, c in cells] == [
        ("notebooks/01_one.ipynb", "## The task"),
        ("notebooks/01_one.ipynb", "x = 1"),
        ("notebooks/01_one.ipynb", "After the code, a new screen."),
        ("notebooks/01_one.ipynb", "### A proof"),
        ("notebooks/02_two.ipynb", "y = 2"),
        ("notebooks/02_two.ipynb", "## Training"),
    ]
    assert all(TAG1 in book.tags(c) for _, c in cells)
    # A deck is the cells tagged with its name, in whichever notebooks.
    assert [(rel, c.source) for rel, c in lecture.deck_cells(root, "lecture-2")] == [
        ("notebooks/04_four.ipynb", "## Decks"), ("notebooks/06_six.ipynb", "## Cache\n\nKeys.")]


def test_screen_ranges_count_slides_and_subslides_after_the_title(root):
    # 01: ## (slide), code (-), prose after code (subslide), ### (subslide): 3 screens;
    # 02: its first tagged cell, code, starts a slide, then ## (slide): 2 screens.
    assert lecture.screen_ranges(root, "lecture") == {
        "notebooks/01_one.ipynb": (2, 4), "notebooks/02_two.ipynb": (5, 6)}
    assert lecture.screen_ranges(root, "lecture-2") == {"notebooks/04_four.ipynb": (2, 2),
                                                        "notebooks/06_six.ipynb": (3, 3)}
    # The same as the stamper's rule over each notebook's tagged cells, first one a slide;
    # over the whole deck at once, 02's first cell (code after a short slide) would not be.
    cells = [c for _, c in lecture.deck_cells(root, "lecture")]
    assert colab.expected_slide_types(cells)[4] == "-"


def test_deck_notebook_has_a_title_slide_and_the_counted_screens(root):
    deck = lecture.deck_notebook(root, "lecture", PUB)
    title = deck.cells[0].source
    assert title.startswith(f"# {lecture.deck_title(PUB, 'lecture')}\n")
    assert "1. [One head](01_one.ipynb)\n2. [Two heads](02_two.ipynb)" in title
    assert "2 notebooks, 6 screens" in title
    types = [c.metadata["slideshow"]["slide_type"] for c in deck.cells]
    assert sum(t in lecture.SCREEN_TYPES for t in types) == 6
    captions = [c.source for c in deck.cells if lecture.CAPTION_CLASS in c.source]
    assert captions == [f'<p class="{lecture.CAPTION_CLASS}">One head</p>',
                        f'<p class="{lecture.CAPTION_CLASS}">Two heads</p>']
    # The stored notebooks keep their own slide types (the deck has copies).
    stored = book.read(root / "notebooks/02_two.ipynb").cells[1]
    assert "slideshow" not in stored.metadata


class LeafSections(html.parser.HTMLParser):
    """Counts the <section> elements that hold no <section> (reveal.js's screens)."""

    def __init__(self):
        super().__init__()
        self.stack, self.leaves = [], 0

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            if self.stack:
                self.stack[-1] = False  # the parent holds a section
            self.stack.append(True)

    def handle_endtag(self, tag):
        if tag == "section":
            self.leaves += self.stack.pop()


def shown(text):
    """The text of an HTML page without its tags (code is highlighted span by span)."""
    return html.unescape(re.sub(r"<[^>]*>", "", text))


def leaf_sections(text):
    parser = LeafSections()
    parser.feed(text)
    return parser.leaves


def test_the_built_lecture_deck_has_the_counted_screens_and_no_assert(root, tmp_path):
    out = tmp_path / "out"
    (out / "slides").mkdir(parents=True)
    decks = {f"notebooks/{name}": name.replace(".ipynb", ".html") for name in notebooks()}
    deck = lecture.deck_notebook(root, "lecture", PUB)
    chapter.write_slides(deck, PUB, "notebooks/lecture.ipynb", decks, out, name="lecture.html")
    text = (out / "slides" / "lecture.html").read_text()
    assert leaf_sections(text) == 6
    assert "x = 1\nprint(x)" in shown(text) and "assert" not in text
    assert 'href="01_one.html"' in text and 'href="../index.html"' in text


def test_a_deck_with_no_tagged_cell(tmp_path, capsys):
    cells = notebooks()
    for name in cells:
        for cell in cells[name]:
            cell.metadata.pop("tags", None)
    root = write_chapter(tmp_path, cells)
    assert lecture.deck_cells(root, "lecture") == []
    assert lecture.screen_ranges(root, "lecture") == {}
    deck = lecture.deck_notebook(root, "lecture", PUB)
    assert len(deck.cells) == 1 and "No cell is tagged" in deck.cells[0].source
    assert chapter.lecture_decks(root, PUB) == {}
    printed = capsys.readouterr().out
    assert "slides/lecture.html is not built" in printed
    assert "slides/lecture-2.html is not built" in printed


def test_an_unknown_deck_or_bad_argument_is_named(root):
    with pytest.raises(ValueError, match="name: unknown lecture deck 'lecture-3'"):
        lecture.deck_cells(root, "lecture-3")
    with pytest.raises(ValueError, match="name: unknown lecture deck"):
        lecture.screen_ranges(root, None)
    with pytest.raises(ValueError, match="root: .* has no notebooks/ folder"):
        lecture.deck_cells(root / "nowhere", "lecture")
    with pytest.raises(TypeError, match="pub"):
        lecture.deck_notebook(root, "lecture", "Heads")


# --- asserts out of the displayed code ---------------------------------------------------

@pytest.mark.parametrize("source, shown", [
    ("x = 1\nassert x == 1\nprint(x)", "x = 1\nprint(x)"),
    ("y = 2\nassert (y ==\n        2), (\n    'two')\nprint(y)", "y = 2\nprint(y)"),
    ("for i in range(3):\n    z = i\n    assert z >= 0, 'a bound'\nprint(z)",
     "for i in range(3):\n    z = i\nprint(z)"),
    # an if that only checks goes whole; the comment above an assert goes with it
    ("a = 3\nif a > 2:\n    # the bound\n    assert a < 4\nprint(a)", "a = 3\nprint(a)"),
    # a branch left empty keeps a pass
    ("if b:\n    assert b\nelse:\n    c = 1", "if b:\n    pass\nelse:\n    c = 1"),
    ("q = 1\n\nassert q\n\nprint(q)", "q = 1\n\nprint(q)"),
    ("assert True", ""),
    # left as it is: does not parse, or shares a line with other code
    ("%time f()\nassert f()", "%time f()\nassert f()"),
    ("x = 1; assert x", "x = 1; assert x"),
    ("print(1)  # assert in a comment", "print(1)  # assert in a comment"),
])
def test_strip_asserts(source, shown):
    assert lecture.strip_asserts(source) == shown


def test_the_preprocessor_keeps_the_cell_and_its_outputs():
    nb = new_notebook(cells=[code("assert 1 + 1 == 2", "shown\n"), code("w = 1\nassert w"),
                             code("%%time\nassert w"), new_markdown_cell("assert is a word")])
    nb, _ = lecture.StripAsserts().preprocess(nb, {})
    only, some, magic, prose = nb.cells
    assert only.source == "" and only.metadata["transient"] == {"remove_source": True}
    assert only.outputs[0].text == "shown\n"
    assert some.source == "w = 1" and "transient" not in some.metadata
    assert magic.source == "%%time\nassert w" and prose.source == "assert is a word"


def test_every_deck_is_written_without_asserts(tmp_path):
    """A per-notebook deck too: a cell that was only an assert shows its output, no input."""
    nb = new_notebook(cells=[new_markdown_cell("# T"), code("assert 2 > 1", "kept output\n"),
                             code("v = 1\nassert v\nv"),
                             tagged(new_markdown_cell("---"), book.NAV_TAG)])
    (tmp_path / "slides").mkdir()
    rel = "notebooks/01_t.ipynb"
    chapter.write_slides(nb, PUB, rel, {rel: "01_t.html"}, tmp_path)
    text = (tmp_path / "slides" / "01_t.html").read_text()
    assert "kept output" in text and "v = 1\nv" in shown(text)
    assert "assert" not in text
    assert text.count('class="jp-CodeMirrorEditor') == 1  # the assert-only one: no code


# --- the notation table on the front page ----------------------------------------------

TABLE = "| letter | meaning |\n|---|---|\n| $h$ | heads |"


def test_the_front_page_shows_the_notation_cell_and_the_lecture_decks_first():
    nb = new_notebook(cells=[new_markdown_cell("# One"), tagged(new_markdown_cell(
        f"## One notation\n\nSee [two](02_two.ipynb).\n\n{TABLE}"), book.NOTATION_TAG)])
    notation = chapter.notation_md(nb, PUB, "notebooks/01_one.ipynb")
    assert notation == ("## One notation\n\nSee [two](notebooks/02_two.ipynb).\n\n"
                        f"{TABLE}\n")
    rels = {"notebooks/01_one.ipynb": "One"}
    page = chapter.index_md("Heads", rels, [], {"notebooks/01_one.ipynb": "01_one.html"},
                            [("lecture.html", "Lecture 1")], notation)
    assert TABLE in page
    assert page.index("slides/lecture.html") < page.index("slides/01_one.html")
    assert page.index("## One notation") < page.index("## Slides")
    without = new_notebook(cells=[new_markdown_cell("# One")])
    assert chapter.notation_md(without, PUB, "notebooks/01_one.ipynb") == ""
    assert "otation" not in chapter.index_md("Heads", rels, [], {
        "notebooks/01_one.ipynb": "01_one.html"})


def test_build_takes_the_decks_with_tagged_cells(root):
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        decks = chapter.lecture_decks(root, PUB)
    assert list(decks) == ["lecture", "lecture-2"] and printed.getvalue() == ""
    nb, title = decks["lecture"]
    assert title == "Heads: lecture 1 of 2" and nb.cells[0].source.startswith(f"# {title}")
