"""Every variant of every exercise (issue 35), by the same tests for every notebook.

From what the modules declare (tests/exercises/test_exercises_declared.py's discovery),
for every variant of every exercise that has variants:

- each declared mistake is refused with its own message and no points, and is not the
  right answer, which passes; no message names the right whole number of a part
  that varies;
- each part a student's variant varies has another right answer than the book's, and each
  open-book part the same.

From the right answers a notebook's tests compute by another route: a module
tests/exercises/test_exercises_nbNN.py that defines ``ANSWERS``, {exercise: a function of a
variant's values that returns its right answers, one per part, in order}, is found here by
its name, and

- the right answers pass every variant;
- the book's answers (variant 0's) fail every student's variant on each part that varies,
  and pass on each open-book part.

And the mechanism itself: student ids, the drawing of variants, an exercise with variants.

What is specific to one notebook (its variants' values, its hints, the forms it accepts,
the wrong answers it names) stays in its own module.
"""

import functools
import importlib
import pathlib
import re

import numpy as np
import pytest
from test_exercises_declared import EXERCISES as DECLARED
from test_exercises_declared import kind

from d2lutil.exercises import Exercise, variants
from d2lutil.exercises.checkers import integer

HERE = pathlib.Path(__file__).parent

VARIED = {name: exercise for name, exercise in DECLARED.items() if exercise.variants}
VARIANTS = [(name, i) for name, exercise in VARIED.items()
            for i in range(len(exercise.variants))]


def registered(attribute):
    """{"nbNN.exK": value} from the dict ``attribute`` ({exercise: value}) of each
    test_exercises_nbNN.py that has one."""
    names = {id(exercise): name for name, exercise in DECLARED.items()}
    found = {}
    for path in sorted(HERE.glob("test_exercises_nb[0-9][0-9].py")):
        module = importlib.import_module(path.stem)
        for exercise, value in getattr(module, attribute, {}).items():
            found[names[id(exercise)]] = value
    return found


COMPUTED = registered("ANSWERS")
ANSWERED = [(name, i) for name in COMPUTED for i in range(len(VARIED[name].variants))]


@functools.cache
def answers(name, i):
    """Variant ``i``'s right answers to exercise ``name``, computed once."""
    return COMPUTED[name](**VARIED[name].variants[i])


# --- from the declarations ---------------------------------------------------------------

@pytest.mark.parametrize("name, i", VARIANTS)
def test_each_variants_mistakes_get_their_messages(name, i):
    exercise = VARIED[name].for_variant(i)
    for j, (_, checker) in enumerate(exercise.parts):
        if not hasattr(checker, "expected"):  # tested in its notebook's module
            continue
        right = checker.expected
        assert exercise.check_part(j, right).correct, (j, right)
        for value, said in checker.mistakes:
            assert not np.array_equal(np.asarray(value, dtype=object),
                                      np.asarray(right, dtype=object)), (j, value)
            result = exercise.check_part(j, value)
            assert (result.message, result.points) == (f"not right yet: {said}", 0), (
                j, value)
            if kind(checker) == "integer" and j not in VARIED[name].open_book:
                assert not re.search(rf"(?<!\d){right:.0f}(?!\d)", said), said


@pytest.mark.parametrize("name, i", [case for case in VARIANTS if case[1]])
def test_every_varied_part_differs_from_the_books(name, i):
    exercise = VARIED[name]
    book, variant = exercise.built(0)[0], exercise.built(i)[0]
    for j, ((_, b), (_, v)) in enumerate(zip(book, variant, strict=True)):
        if not hasattr(b, "expected"):
            continue
        same = str(b.expected) == str(v.expected)
        assert same == (j in exercise.open_book), (j, b.expected, v.expected)


# --- from the answers each notebook's tests compute ----------------------------------------

@pytest.mark.parametrize("name, i", ANSWERED)
def test_the_right_answers_pass_every_variant(name, i, capsys):
    verdict = VARIED[name].for_variant(i).check(*answers(name, i))
    assert verdict, (verdict.message, capsys.readouterr().out)


@pytest.mark.parametrize("name, i", [case for case in ANSWERED if case[1]])
def test_the_books_answers_fail_every_students_variant_where_it_varies(name, i):
    exercise = VARIED[name]
    variant = exercise.for_variant(i)
    for j, answer in enumerate(answers(name, 0)):
        result = variant.check_part(j, answer)
        if j in exercise.open_book:  # the same for everyone
            assert result, (j, result.message)
        else:
            assert not result and result.points == 0, (j, result.message)


# --- ids and variants ------------------------------------------------------------------------

@pytest.mark.parametrize("bad", ["", " ", "a b", "-x", "x" * 65, "é1", "a/b", 12345, None])
def test_a_bad_id_is_refused_naming_the_argument(bad):
    with pytest.raises(ValueError, match="student_id must be"):
        variants.check_id(bad)


def test_the_id_cell_says_what_to_type_and_never_raises(capsys, monkeypatch):
    monkeypatch.delenv(variants.ENV, raising=False)
    variants.forget()
    variants.student(...)
    assert "in place of the ..." in capsys.readouterr().out
    variants.student("not an id")
    assert "Not a student id" in capsys.readouterr().out
    assert variants.current_id() is None
    variants.student(" s42 ")
    assert variants.current_id() == "s42"
    monkeypatch.setenv(variants.ENV, "grader1")  # the grader's id wins
    assert variants.current_id() == "grader1"
    variants.forget()


def test_variants_are_stable_never_the_books_and_spread():
    drawn = [variants.variant_index("d2lutil.exercises.nb01.ex1", 4, f"s{i}")
             for i in range(300)]
    assert set(drawn) == {1, 2, 3}
    assert min(drawn.count(v) for v in (1, 2, 3)) > 60
    assert drawn == [variants.variant_index("d2lutil.exercises.nb01.ex1", 4, f"s{i}")
                     for i in range(300)]
    other = [variants.variant_index("d2lutil.exercises.nb01.ex2", 4, f"s{i}")
             for i in range(300)]
    assert other != drawn  # each exercise draws on its own


def _exercise():
    return Exercise(1, lambda d: [("count", integer(4 * d * d + 4 * d))],
                    hints=lambda d: [f"Count for d = {d}."], solution="4d^2 + 4d.",
                    variants=[{"d": 256}, {"d": 128}, {"d": 320}], key="test.ex1")


def test_an_exercise_with_variants_checks_the_students_values(capsys, monkeypatch):
    monkeypatch.delenv(variants.ENV, raising=False)
    variants.forget()
    exercise = _exercise()
    assert exercise.params == {"d": 256} and exercise.check(263168)  # the book's
    monkeypatch.setenv(variants.ENV, "s1")
    index = variants.variant_index("test.ex1", 3, "s1")
    d = exercise.variants[index]["d"]
    assert exercise.params == {"d": d} and exercise.hints == [f"Count for d = {d}."]
    assert exercise.check(4 * d * d + 4 * d) and not exercise.check(263168)
    capsys.readouterr()
    exercise.values()
    assert capsys.readouterr().out.startswith(f"Exercise 1, your values: d = {d} (where the "
                                              "text says d = 256)")


def test_without_an_id_the_student_edition_asks_for_one(capsys, monkeypatch):
    monkeypatch.delenv(variants.ENV, raising=False)
    monkeypatch.setattr(variants, "EDITION", "student")
    variants.forget()
    exercise = _exercise()
    assert not exercise.check(263168)
    assert "student(...)" in capsys.readouterr().out


@pytest.mark.parametrize("bad, match", [
    ([{"d": 1}], "at least 2"), ([{"d": 1}, {"e": 2}], "must name the values"),
    ([{"d": 1}, {"d": 1}], "repeats the book's values")])
def test_bad_variants_are_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        Exercise(1, lambda d: [("x", integer(d))], hints=["h"], solution="s", variants=bad)
