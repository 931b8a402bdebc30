"""Notebook hygiene over every stored notebook (chapter and solutions), checked in make test.

One test per notebook and check, so a failure names both; the message names the cell.
The checks live in tests/notebooks/hygiene.py; tests/tools/test_chapter_tools.py shows
each of them failing on a deliberately broken notebook. The notebooks are those
tools/book.py finds.
"""

import re

import pytest

import book
import hygiene
import lecture

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
    "hint_names_kept": hygiene.check_hint_names_kept,
}

# The lesson of the first lecture's notebooks (those of its deck, 1 to 5; book.lesson_words:
# every section but Going deeper, Exercises and References) is one 75-minute lecture: at
# most this many words in all (issue 31).
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


def test_lesson_of_the_first_lecture_fits_it():
    words = {rel: book.lesson_words(read(ROOT / rel))
             for rel in lecture.screen_ranges(ROOT, book.LECTURE_DECKS[0])}
    total = sum(words.values())
    assert total <= LESSON_WORDS_MAX, (
        f"the lesson of the first lecture has {total} words, more than {LESSON_WORDS_MAX} (one "
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


# What the notebooks show of d2lutil's own code (issue 42): excerpts cut by markers with
# d2lutil.show_code, whose plain text (compared by nbval on every run) is the library's
# current text; the prose points to the file for the rest. The whole chapter shows at
# most this many lines of it.
SHOWN_LIBRARY_LINES_MAX = 100
READS_SOURCE = re.compile(r"inspect\.getsource\(|\bCode\(")


def shown_code_lines(cell):
    """The lines of library code a cell shows: the plain text of its ``show_code`` outputs
    (a cell that calls it shows nothing else)."""
    if "show_code(" not in cell.source:
        return 0
    return sum(len(out.data["text/plain"].splitlines()) for out in cell.outputs
               if out.output_type in ("display_data", "execute_result"))


def test_library_code_is_shown_with_show_code_within_budget():
    counts, problems = {}, []
    for path in book.all_notebooks():
        for i, cell in enumerate(read(path).cells):
            if cell.cell_type != "code":
                continue
            if READS_SOURCE.search(cell.source):
                problems.append(f"{hygiene.where(name_of(path), i, cell)}: shows library "
                                "code without d2lutil.show_code")
            counts[name_of(path)] = counts.get(name_of(path), 0) + shown_code_lines(cell)
    report(problems)
    total = sum(counts.values())
    assert total <= SHOWN_LIBRARY_LINES_MAX, (
        f"the notebooks show {total} lines of d2lutil's code, more than "
        f"{SHOWN_LIBRARY_LINES_MAX}: show the lines the lesson discusses and point to the "
        "file for the rest (" + ", ".join(f"{n} {c}" for n, c in counts.items() if c) + ")")
    assert total >= 50, f"only {total} lines of library code shown: has the way changed?"
