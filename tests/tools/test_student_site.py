"""`make chapter SOLUTIONS=0` (issue 45): the students' site shows no worked solution.

The site is built twice from the stored notebooks (tools/chapter.py ``cmd_build`` with
``execute_notebooks=False``, as the browser tests build it), once with the solutions and
once without, in a module-scoped fixture: about 25 s a build on a 2-core machine. Without
them no page comes from notebooks/solutions/, no file names or links to one, and no file
(pages, decks, downloads, search index, scripts) holds a distinctive piece of a solutions
notebook: a code line of 30 or more characters, or a Markdown sentence of 40 or more, that
no chapter notebook's source holds too. Text is compared as its words (lower-case letters
and digits), so highlighting, escaping and Markdown's markup do not hide a match. The build
with solutions is the control: it holds them, so a search that finds nothing would fail.

The chapter's exercises print their worked answer with ``exK.solution()`` (the book
edition): no stored output of a chapter notebook may show one.
"""

import contextlib
import html
import importlib
import io
import re
import time

import nbformat
import pytest

import book
import chapter

CODE_MIN, SENTENCE_MIN = 30, 40  # the shortest distinctive code line and sentence
MISSED_MAX = 0.02  # the share of pieces the control build may miss (its rewritten cells)
IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
SENTENCE = re.compile(r"\n\s*\n|(?<=[.!?:])\s+")
SOLUTION_NAME = re.compile(r"\d+_solutions\.(?:ipynb|html)")
LINK_TARGET = re.compile(r"""(?:href|src)\s*=\s*["']([^"']*)""")
SOLUTION_SHOWN = re.compile(r"Exercise \d+, solution:")  # how exK.solution() begins


def words(text):
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def outputs_text(cell):
    """The text of the stored outputs of ``cell`` (streams and every text/... form)."""
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        parts += [value if isinstance(value, str) else "".join(value)
                  for mime, value in output.get("data", {}).items() if mime.startswith("text/")]
    return "\n".join(parts)


def notebook_text(nb, outputs=True):
    """The sources of ``nb`` and (with ``outputs``) the text of its outputs."""
    return "\n".join(cell.source + ("\n" + outputs_text(cell) if outputs else "")
                     for cell in nb.cells)


def pieces(nb):
    """The code lines and Markdown sentences of ``nb`` long enough to be distinctive (not
    its Colab setup cell and navigation cell, which the site rewrites)."""
    for cell in nb.cells:
        if {book.SETUP_TAG, book.NAV_TAG} & set(book.tags(cell)):
            continue
        if cell.cell_type == "code":
            yield from (line.strip() for line in cell.source.splitlines()
                        if len(line.strip()) >= CODE_MIN)
        elif cell.cell_type == "markdown":
            prose = LINK.sub(r"\1", IMAGE.sub("", cell.source))
            yield from (s.strip() for s in SENTENCE.split(prose)
                        if len(s.strip()) >= SENTENCE_MIN)


@pytest.fixture(scope="module")
def solution_pieces():
    """{words of a piece: (solutions notebook, the piece)}, leaving out what a chapter
    notebook's source holds too."""
    chapter_words = " # ".join(words(notebook_text(book.read(p), outputs=False))
                               for p in book.chapter_notebooks())
    found = {}
    for path in book.solution_notebooks():
        for piece in pieces(book.read(path)):
            key = words(piece)
            if key and f" {key} " not in f" {chapter_words} ":
                found.setdefault(key, (book.relpath_of(path), piece))
    assert found, "no distinctive text in notebooks/solutions/: nothing to search for"
    return found


def file_text(path):
    """The text a reader could get from ``path``: an HTML page without its tags, a
    notebook's sources and outputs, any other text file as it is; None for binary."""
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None
    if path.suffix == ".html":
        return html.unescape(re.sub(r"<[^>]*>", " ", raw))
    if path.suffix == ".ipynb":
        return notebook_text(nbformat.reads(raw, as_version=4))
    return raw


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """{solutions: (the built site, {file's relpath: (raw text, its words)})} for
    solutions True and False."""
    built = {}
    for solutions in (True, False):
        out = tmp_path_factory.mktemp("student-site") / "site"
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            status = chapter.cmd_build(out, execute_notebooks=False, solutions=solutions)
        assert status == 0, f"tools/chapter.py build failed:\n{printed.getvalue()}"
        print(f"\nbuilt the site with solutions={solutions} in "
              f"{time.perf_counter() - start:.1f} s")
        files = {}
        for path in sorted(p for p in out.rglob("*") if p.is_file()):
            text = file_text(path)
            if text is not None:
                files[path.relative_to(out).as_posix()] = (
                    path.read_text(encoding="utf-8"), words(text))
        built[solutions] = out, files
    return built


def solution_refs(files):
    """Where the files name a solutions notebook: [(file, what)], for its path, a link to
    one, or its file name in the text."""
    refs = [(rel, "its path") for rel in files if SOLUTION_NAME.search(rel)]
    for rel, (raw, _) in files.items():
        refs += [(rel, f"a link to {target}") for target in LINK_TARGET.findall(raw)
                 if SOLUTION_NAME.search(target)]
        refs += [(rel, f"the name {name}") for name in set(SOLUTION_NAME.findall(raw))]
    return refs


def found_pieces(files, solution_pieces):
    everything = " # ".join(w for _, w in files.values())
    return {key: where for key, where in solution_pieces.items()
            if f" {key} " in f" {everything} "}


def test_student_site_has_no_solutions_page_or_reference(sites):
    out, files = sites[False]
    # the teaching plan is the instructors': its rubrics and quiz answers are answers
    assert (out / "index.html").is_file() and not (out / "teaching_plan.html").exists()
    assert (sites[True][0] / "teaching_plan.html").is_file()
    assert not list(out.rglob("*solutions*")), list(out.rglob("*solutions*"))[:5]
    refs = solution_refs(files)
    assert not refs, f"{len(refs)} references to a solutions notebook, first: {refs[:5]}"


def test_full_site_has_solutions_pages_and_links(sites):
    """The control: the default build has them, so the search above can find them."""
    out, files = sites[True]
    pages = {f"notebooks/solutions/{p.stem}.html" for p in book.solution_notebooks()}
    assert pages and pages <= set(files), sorted(pages - set(files))
    links = [what for _, what in solution_refs(files) if what.startswith("a link")]
    assert any(what.endswith("_solutions.html") for what in links), links[:5]


def test_student_site_shows_no_solution_text(sites, solution_pieces):
    _, files = sites[False]
    found = found_pieces(files, solution_pieces)
    where = [(solution_pieces[key], [rel for rel, (_, w) in files.items()
                                     if f" {key} " in f" {w} "][:3]) for key in found]
    assert not found, (f"{len(found)} pieces of the solutions notebooks in the students' "
                       f"site, first ((notebook, piece), [files]): {where[:5]}")


def test_full_site_shows_the_solution_text(sites, solution_pieces):
    """The control: the default build shows (nearly) every piece searched for, and some
    of every solutions notebook."""
    _, files = sites[True]
    found = found_pieces(files, solution_pieces)
    missed = [where for key, where in solution_pieces.items() if key not in found]
    assert len(missed) <= MISSED_MAX * len(solution_pieces), (
        f"the site with solutions lacks {len(missed)} of {len(solution_pieces)} pieces, "
        f"first: {missed[:5]}")
    shown = {notebook for notebook, _ in found.values()}
    assert shown == {book.relpath_of(p) for p in book.solution_notebooks()}, shown


def worked_answers():
    """[(chapter notebook, exercise, its worked answer)]: what ``exK.solution()`` shows."""
    from d2lutil.exercises import Exercise

    answers = []
    for path in book.chapter_notebooks():
        module = importlib.import_module(f"d2lutil.exercises.nb{book.number(path.name)}")
        answers += [(path.name, name, getattr(module, name)._solution)
                    for name in module.__all__
                    if isinstance(getattr(module, name), Exercise)]
    return answers


def test_no_stored_output_of_a_chapter_notebook_shows_a_solution():
    answers = worked_answers()
    assert answers, "no exercise found in d2lutil.exercises"
    sentences = {words(s): (nb, ex) for nb, ex, text in answers
                 for s in SENTENCE.split(text) if len(s.strip()) >= SENTENCE_MIN}
    for path in book.chapter_notebooks():
        nb = book.read(path)
        for i, cell in enumerate(nb.cells):
            shown = outputs_text(cell)
            assert not SOLUTION_SHOWN.search(shown), (
                f"{path.name}, cell {i}: its stored output shows a worked solution")
            shown_words = f" {words(shown)} "
            leaked = [where for key, where in sentences.items() if f" {key} " in shown_words]
            assert not leaked, (f"{path.name}, cell {i}: its stored output holds the worked "
                                f"answer of {leaked[0]}")


@pytest.mark.parametrize("text, expected", [
    # the exercises' sentence, mid-paragraph, wrapped over two lines
    ("and `ex1.solution()` the worked answer. The worked solutions, with every step\n"
     "computed, are in `solutions/08_solutions.ipynb`.\nTo write the whole class.",
     "and `ex1.solution()` the worked answer.\nTo write the whole class."),
    # a paragraph of its own
    ("Intro.\n\nSee `solutions/01_solutions.ipynb`.\n\nMore.", "Intro.\n\n\n\nMore."),
    # the teaching plan's link, with the clause that brings it in
    ("5 min to read:\n[One](notebooks/01_x.ipynb), and its [worked solutions]"
     "(notebooks/solutions/01_solutions.ipynb).\n",
     "5 min to read:\n[One](notebooks/01_x.ipynb).\n"),
    ("Nothing to drop: `ex1.solution()` and the solutions reuse it.",
     "Nothing to drop: `ex1.solution()` and the solutions reuse it."),
])
def test_drop_solution_refs(text, expected):
    assert chapter.drop_solution_refs(text) == expected


def test_front_page_without_solutions_has_no_solutions_table():
    with_them = chapter.index_md("T", {"notebooks/01_a.ipynb": "A"},
                                 ["notebooks/solutions/01_solutions.ipynb"],
                                 {"notebooks/01_a.ipynb": "01_a.html"})
    without = chapter.index_md("T", {"notebooks/01_a.ipynb": "A"}, [],
                               {"notebooks/01_a.ipynb": "01_a.html"})
    assert ":caption: Solutions" in with_them and "01_solutions" in with_them
    assert "Solutions" not in without and ":caption: Teaching" in without
    students = chapter.index_md("T", {"notebooks/01_a.ipynb": "A"}, [],
                                {"notebooks/01_a.ipynb": "01_a.html"}, teaching=False)
    assert "Teaching" not in students and chapter.PLAN_PAGE not in students


def test_solutions_must_be_0_or_1(capsys):
    with pytest.raises(SystemExit) as exit_:
        chapter.main(["build", "--solutions", "yes"])
    assert exit_.value.code == 2
    assert "--solutions (SOLUTIONS of make chapter) must be 0 or 1, got 'yes'" in (
        capsys.readouterr().err)


def test_the_makefile_passes_solutions_through():
    makefile = (book.ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r'^\t.*tools/chapter\.py build .*--solutions "\$\(SOLUTIONS\)"',
                     makefile, re.M), "make chapter must pass SOLUTIONS to tools/chapter.py"
    assert "make chapter [SOLUTIONS=0]" in makefile, "the help line must name SOLUTIONS"
