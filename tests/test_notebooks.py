"""Notebook hygiene over every stored notebook (chapter and solutions), checked in make test.

One test per notebook and check, so a failure names both; the message names the cell.
The checks live in tests/hygiene.py; tests/test_chapter_tools.py shows each of them
failing on a deliberately broken notebook. The notebooks are those tools/book.py finds.
"""

import pytest

import book
import hygiene

ROOT = book.ROOT
CHAPTER = book.chapter_notebooks()
SOLUTIONS = book.solution_notebooks()

# Numbers that may stand in the prose of a notebook without being printed by it: a
# definition or a citation, never a measured or computed result. Keep it short and give
# each entry its reason. Keys are paths from the repository root; "*" means every notebook.
ALLOWED_NUMBERS = {
    "*": set(),
}

CHECKS = {
    "valid": hygiene.check_valid,
    "execution_counts": hygiene.check_execution_counts,
    "errors": hygiene.check_errors,
    "stderr_and_paths": hygiene.check_streams_and_paths,
    "no_svg": hygiene.check_no_svg,
    "kernelspec": hygiene.check_kernelspec,
    "title_and_badge": hygiene.check_title,
    "reproducible": hygiene.check_reproducible,
    "figure_alt_text": hygiene.check_figures_have_alt_text,
    "line_length": hygiene.check_line_length,
    "headings_start_cells": hygiene.check_headings_start_cells,
    "notes_tagged": hygiene.check_notes_tagged,
    "student_prose": hygiene.check_student_prose,
    "live_tags": hygiene.check_live_tags,
}
# Checks of chapter notebooks only (a solutions notebook has no lesson of its own).
CHAPTER_CHECKS = {
    "structure": hygiene.check_structure,
    "no_forward_reference": hygiene.check_no_forward_reference,
}

# The lesson of notebooks 1-5 (book.lesson_words: every section but Going deeper, Exercises
# and References) is one 75-minute lecture: at most this many words in all (issue 31).
LECTURE_NOTEBOOKS = ("01", "02", "03", "04", "05")
LESSON_WORDS_MAX = 5_500


def name_of(path):
    return path.relative_to(ROOT).as_posix()


def allowed(path):
    return ALLOWED_NUMBERS["*"] | ALLOWED_NUMBERS.get(name_of(path), set())


def read(path):
    return book.read(path)


def report(problems):
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("path", CHAPTER + SOLUTIONS, ids=name_of)
def test_hygiene(path, check):
    report(CHECKS[check](read(path), name_of(path)))


@pytest.mark.parametrize("path", CHAPTER + SOLUTIONS, ids=name_of)
def test_size(path):
    report(hygiene.check_size(path.stat().st_size, name_of(path)))


@pytest.mark.parametrize("path", CHAPTER + SOLUTIONS, ids=name_of)
def test_prose_numbers_are_printed(path):
    report(hygiene.check_prose_numbers(read(path), name_of(path), allowed(path)))


@pytest.mark.parametrize("check", CHAPTER_CHECKS)
@pytest.mark.parametrize("path", CHAPTER, ids=name_of)
def test_chapter(path, check):
    report(CHAPTER_CHECKS[check](read(path), name_of(path)))


def whole_chapter():
    """{name: notebook} of every chapter and solutions notebook."""
    return {name_of(path): read(path) for path in CHAPTER + SOLUTIONS}


def test_notation_table_has_one_home():
    report(hygiene.check_chapter_notation(whole_chapter()))


def test_each_live_tag_names_one_cell():
    report(hygiene.check_chapter_live_tags(whole_chapter()))


def test_lesson_of_notebooks_1_to_5_fits_one_lecture():
    words = {name_of(path): book.lesson_words(read(path)) for path in CHAPTER
             if book.number(path) in LECTURE_NOTEBOOKS}
    assert len(words) == len(LECTURE_NOTEBOOKS), sorted(words)
    total = sum(words.values())
    assert total <= LESSON_WORDS_MAX, (
        f"the lesson of notebooks 1-5 has {total} words, more than {LESSON_WORDS_MAX} (one "
        "75-minute lecture; move depth to '## Going deeper' or cut it): "
        + ", ".join(f"{name} {count}" for name, count in words.items()))


@pytest.mark.parametrize("path", CHAPTER, ids=name_of)
def test_chapter_notebook_has_solutions(path):
    mine = [s for s in SOLUTIONS if book.number(s) == book.number(path)]
    assert mine, (f"{name_of(path)}: no worked solutions: expected "
                  f"notebooks/solutions/{book.number(path)}_solutions.ipynb")


@pytest.mark.parametrize("path", SOLUTIONS, ids=name_of)
def test_solutions_belong_to_a_chapter_notebook_and_assert(path):
    assert any(book.number(c) == book.number(path) for c in CHAPTER), \
        f"{name_of(path)}: no chapter notebook numbered {book.number(path)}"
    asserting = [c for c in read(path).cells if c.cell_type == "code"
                 if any(line.lstrip().startswith("assert ") for line in c.source.splitlines())]
    assert asserting, f"{name_of(path)}: no cell asserts an answer"


def test_allowlist_is_short_and_used():
    entries = sum(len(v) for v in ALLOWED_NUMBERS.values())
    assert entries <= 10, f"ALLOWED_NUMBERS holds {entries} numbers: print them instead"
    for key in ALLOWED_NUMBERS:
        assert key == "*" or (ROOT / key).exists(), f"ALLOWED_NUMBERS names missing {key}"


def test_what_a_notebook_shows_of_the_library_is_the_library():
    """A cell that prints d2lutil's code (``inspect.getsource``), run again here, prints
    exactly its stored output: a notebook shows the code the library runs now."""
    import contextlib
    import inspect
    import io

    import d2lutil
    from d2lutil import translator

    shown = [(path.name, cell) for path in book.all_notebooks()
             for cell in book.read(path).cells
             if cell.cell_type == "code" and "inspect.getsource(" in cell.source]
    # 6: the model, its training loop and readings, the head mask; 7: shared heads, the
    # cache; 8: the translator
    assert len(shown) >= 14
    for name, cell in shown:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(cell.source, {"inspect": inspect, "d2lutil": d2lutil,
                               "MultiHeadAttention": d2lutil.MultiHeadAttention,
                               "translator": translator})
        stored = "".join(out.text for out in cell.outputs if out.output_type == "stream")
        assert printed.getvalue() == stored, (
            f"{name}: the library's code changed since it was stored; re-run `make execute`")
