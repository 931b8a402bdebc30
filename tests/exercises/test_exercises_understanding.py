"""Exercises measure understanding: no graded answer is a number the lesson prints or a
library call returns (issue 45, item 2).

For each chapter notebook NN and each checked part of its exercises worth points:

- (a) every number the lesson prints (the stored text outputs of the chapter notebook's
  cells before its Exercises section) is tried as the answer, in every student variant
  (index >= 1), and must be refused; a function answer is tried as a function that returns
  that number whatever its arguments. A part that is open-book and worth 0 points is not
  graded, so it is not tried;
- (b) the library calls that tests/exercises/test_exercises_nbNN.py declares as giving an
  answer, ``LIBRARY_CALLS = {exercise: [function of a variant's values returning an
  answer]}``, are tried on every part worth points, in every variant (the book's too),
  and must be refused.

A printed number that is legitimately also a student's answer goes into ``ALLOWED`` with
its reason; nothing is skipped silently.
"""

import functools
import re

import nbformat
import pytest
from test_exercise_variants import registered
from test_exercises_declared import EXERCISES

import book
from d2lutil.exercises import Exercise, function, number

CHAPTER = book.chapter_notebooks()
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])")

# {("nbNN.exK", part index, printed number): why it may also be a student's answer}
# (exercise, part, number): why the lesson's printing it does not give a student's answer
_KEYS_SEEN = ("how many keys a row of the student's own word sees: notebook 8 prints these "
              "small integers only as token ids, shapes and counts of other things")
ALLOWED = {("nb08.ex1", part, float(n)): _KEYS_SEEN
           for part, counts in ((0, (4, 6, 8)), (1, (9, 10))) for n in counts}

LIBRARY_CALLS = registered("LIBRARY_CALLS")


def numbers_in(text):
    """Every number written in ``text`` ("0.5", "1,024", "1e-3", "-2"), as floats."""
    found = set()
    for match in NUMBER.finditer(text):
        token = match.group(0)
        if not re.search(r"\d", token):
            continue
        try:
            found.add(float(token.replace(",", "")))
        except ValueError:
            continue
    return found


def lesson_cells(nb):
    """The cells before the Exercises section."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith("## Exercises"):
            break
        cells.append(cell)
    return cells


@functools.cache
def printed_numbers(path):
    """Every number the lesson of chapter notebook ``path`` prints."""
    found = set()
    for cell in lesson_cells(book.read(path)):
        if cell.cell_type == "code":
            for text in book.output_texts(cell):
                found |= numbers_in(text)
    return sorted(found)


def exercises_of(path):
    prefix = f"nb{book.number(path)}."
    return {name: exercise for name, exercise in EXERCISES.items()
            if name.startswith(prefix)}


def graded_parts(exercise):
    """Indices of the parts worth points."""
    return [j for j, worth in enumerate(exercise.points) if worth > 0]


def as_answer(checker, value):
    """``value`` as an answer to a part: a function returning it for a function part."""
    if getattr(checker, "__qualname__", "").startswith("function") or hasattr(
            checker, "cases"):
        return lambda *args, **kwargs: value
    return value


def accepting(name, exercise, numbers, allowed=ALLOWED):
    """[(exercise, variant, part, number)] of ``numbers`` that a graded part of a student's
    variant accepts, leaving out the allowed ones."""
    accepted = []
    for i in range(1, len(exercise.variants or [])):
        variant = exercise.for_variant(i)
        for j in graded_parts(variant):
            checker = variant.parts[j][1]
            accepted += [(name, i, j, value) for value in numbers
                         if (name, j, value) not in allowed
                         and variant.check_part(j, as_answer(checker, value))]
    return accepted


def accepted_printed_numbers(path):
    """[(exercise, variant, part, number)] of printed numbers a graded part accepts."""
    numbers = printed_numbers(path)
    return [found for name, exercise in exercises_of(path).items()
            for found in accepting(name, exercise, numbers)]


def accepted_library_answers(path):
    """[(exercise, call, variant, part)] where a declared library call earns points."""
    accepted = []
    for name, exercise in exercises_of(path).items():
        for c, call in enumerate(LIBRARY_CALLS.get(name, [])):
            for i in range(len(exercise.variants or [None])):
                variant = exercise.for_variant(i) if exercise.variants else exercise
                answer = call(**(exercise.variants[i] if exercise.variants else {}))
                accepted += [(name, c, i, j) for j in graded_parts(variant)
                             if variant.check_part(j, answer)]
    return accepted


@pytest.mark.parametrize("path", CHAPTER, ids=lambda p: p.name)
def test_no_printed_number_is_a_students_answer(path):
    assert accepted_printed_numbers(path) == []


@pytest.mark.parametrize("path", CHAPTER, ids=lambda p: p.name)
def test_no_library_call_answers_a_graded_part(path):
    assert accepted_library_answers(path) == []


# --- the rules, on made-up cases ------------------------------------------------------------

def _made_up(points, open_book=None):
    """An exercise whose student variants' answers are 1 - 1/k: 0.75 for k = 4."""
    return Exercise(1, lambda k: [("error", number(1 - 1 / k, atol=0.005))],
                    hints=["h"], solution="s", points=points, open_book=open_book,
                    variants=[{"k": 3}, {"k": 4}, {"k": 5}], key="made.up.ex1")


def test_the_numbers_of_printed_text_are_read():
    assert numbers_in("error 0.75 at k = 4, 1,024 samples, below 1e-3; x2 and v_1 are "
                      "no numbers") == {0.75, 4.0, 1024.0, 0.001}


def test_the_lesson_is_the_cells_before_the_exercises():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("print(0.75)"), nbformat.v4.new_markdown_cell(
            "## Exercises"), nbformat.v4.new_code_cell("print(0.8)")])
    assert [c.source for c in lesson_cells(nb)] == ["print(0.75)"]


def test_a_printed_number_that_is_a_students_answer_is_found_unless_allowed_or_ungraded():
    exercise = _made_up(points=2)
    assert accepting("made", exercise, [0.5, 0.75]) == [("made", 1, 0, 0.75)]
    assert accepting("made", exercise, [0.5, 0.75], allowed={("made", 0, 0.75): "why"}) == []
    assert accepting("made", _made_up(points=0, open_book=None), [0.75]) == []


def test_a_function_answer_is_tried_as_a_function_returning_the_number():
    exercise = Exercise(1, lambda c: [("f", function(
        lambda x: c, [(1,), (2,)], result_checker=lambda e: number(e)))],
        hints=["h"], solution="s", variants=[{"c": 1.0}, {"c": 0.25}], key="made.up.ex2")
    assert accepting("made", exercise, [0.25, 0.5]) == [("made", 1, 0, 0.25)]
