"""The sealed checkers of course/sealed.py: a sealed check tells right from wrong as the
book's checker does, with the same messages, at every tolerance edge the grid allows, and
holds no right value."""

import json
import os
import re

import numpy as np
import pytest
import torch

import sealed
from d2lutil.exercises import Exercise, Wrong, checkers, exception_type, function
from d2lutil.exercises.checkers import integer, number, numbers_close, truth, word
from grade import load_chapter

KEY = bytes(range(16))


def sealed_check(checker, tag="t"):
    """The sealed form of ``checker``, through JSON as the wheel holds it."""
    data = json.loads(json.dumps(sealed.seal(checker, KEY, tag)))
    return sealed.checker_from(data, KEY, tag), data


def verdict(check, answer):
    try:
        check(answer)
    except Wrong as wrong:
        return str(wrong)
    return "right"


# --- sealed checkers -------------------------------------------------------------------------

@pytest.mark.parametrize("expected, atol", [(0.2, 0.005), (2 / 3, 0.005), (-1.5, 0.01),
                                            (0.0, 0.001), (123.456, 0.05)])
def test_a_sealed_number_agrees_with_the_checker_inside_and_outside_its_tolerance(
        expected, atol):
    book = number(expected, atol=atol)
    check, data = sealed_check(book)
    for offset in np.linspace(-0.99, 0.99, 23) * atol:
        assert verdict(check, expected + offset) == "right"
    for offset in (1.3 * atol, -1.3 * atol, 5 * atol, 0.5):
        assert verdict(check, expected + offset) != "right"
    if expected:
        assert repr(expected) not in json.dumps(data)
        assert f"{expected:.3g}" not in json.dumps(data)


def test_a_sealed_number_gives_the_mistakes_and_how_far_messages():
    book = number(0.32, atol=0.005, mistakes=[(0.68, "the share explained, not left over")])
    check, _ = sealed_check(book)
    assert verdict(check, 0.681) == "the share explained, not left over"
    assert verdict(check, 0.64) == "0.64 is too large by a factor of about 2"
    assert verdict(check, -0.32) == "-0.32 is right in size but of the wrong sign"
    assert verdict(check, 0.4) == "0.4 is not the right value"
    assert verdict(check, "0.32").startswith("expected numbers, got a string")


def test_a_sealed_relative_number_and_factor_estimate():
    check, _ = sealed_check(number(1_277_952, rtol=1e-9))
    assert verdict(check, 1_277_952) == "right" and verdict(check, 1_277_953) != "right"
    estimate = number(300.0, factor=2)
    check, _ = sealed_check(estimate)
    assert verdict(check, 160) == "right" and verdict(check, 590) == "right"
    assert verdict(check, 100) != "right" and verdict(check, 900) != "right"


def test_a_sealed_integer_word_truth_and_exception():
    check, data = sealed_check(integer(263168, mistakes=[(262144, "no biases")]))
    assert verdict(check, 263168) == "right" and verdict(check, 263168.0) == "right"
    assert verdict(check, 262144) == "no biases"
    assert verdict(check, 263169) == "263169 is off by one"
    assert verdict(check, 2.5) == "a count is a whole number, got 2.5"
    assert "263168" not in json.dumps(data)
    assert data["ok"] != sealed.seal(integer(263168), os.urandom(16), "t")["ok"]  # key-bound
    check, data = sealed_check(word("second", ["first", "second"],
                                    mistakes=[("first", "the first term vanishes")]))
    assert verdict(check, " Second ") == "right"
    assert verdict(check, "first") == "the first term vanishes"
    assert "second" not in json.dumps({k: v for k, v in data.items() if k != "choices"})
    check, _ = sealed_check(truth(False, wrong_message="count again"))
    assert verdict(check, "no") == "right" and verdict(check, True) == "count again"
    check, data = sealed_check(exception_type(ValueError))
    assert verdict(check, ValueError("x")) == "right" and "ValueError" not in json.dumps(data)
    assert verdict(check, KeyError) == "KeyError is not what is raised"


def test_a_sealed_array_judges_every_number_shape_keys_and_order():
    expected = [0.875, 0.75, 0.625, 0.5]
    book = numbers_close(expected, atol=0.01, keys=[1, 2, 3, 4],
                         mistakes=[([0.125, 0.25, 0.375, 0.5], "that is the share kept")])
    check, data = sealed_check(book)
    assert verdict(check, [0.87, 0.755, 0.62, 0.5]) == "right"
    assert verdict(check, {1: 0.875, 2: 0.75, 3: 0.625, 4: 0.5}) == "right"
    assert verdict(check, [0.125, 0.25, 0.375, 0.5]) == "that is the share kept"
    assert verdict(check, [0.875, 0.75, 0.6, 0.5]) == (
        "1 of 4 numbers are wrong; the first at index [2]")
    assert verdict(check, [1.875, 1.75, 1.625, 1.5]) == "every number is off by +1"
    assert verdict(check, [1, 2]).startswith("wrong shape")
    assert "0.875" not in json.dumps(data)
    check, _ = sealed_check(numbers_close([3, 1, 2], any_order=True))
    assert verdict(check, torch.tensor([1, 2, 3])) == "right"


def test_a_sealed_function_keeps_its_public_cases_and_judges_their_results():
    def reference(n, d):
        return 4 * n * d * d

    book = function(reference, [(2, 8), (3, 16)], hidden=[(5, 7)],
                    result_checker=lambda e: number(e, rtol=1e-9),
                    describe=lambda c: f"(n, d) = {c}")
    check, data = sealed_check(book)
    assert verdict(check, reference) == "right" and check.public_only
    assert verdict(check, lambda n, d: 4 * n * d) .startswith("wrong for (n, d) = (2, 8)")
    assert "(5, 7)" not in json.dumps(data) and "512" not in json.dumps(data)
    assert len(book.graded().cases()) == 3  # grading adds the hidden case


def test_a_custom_checker_cannot_be_sealed_nor_a_part_of_one_even_open_book():
    def custom(answer):
        if answer != 3:
            raise Wrong("no")

    with pytest.raises(sealed.Unsealable):
        sealed.seal(custom, KEY, "t")

    @checkers.around(number(1.0, atol=0.1))
    def wrapped(answer):
        pass

    with pytest.raises(sealed.Unsealable, match="custom checker around"):
        sealed.seal(wrapped, KEY, "t")
    exercise = Exercise(1, [("three", custom)], hints=["h"], solution="s",
                        open_book={0: "a constant"}, key="test.ex1")
    with pytest.raises(sealed.Unsealable, match="d2lutil.exercises.public"):
        sealed.seal_exercise(exercise, KEY, "test")
    custom.public_build = "d2lutil.exercises.public:diffuse_shares_checker"
    data = json.loads(json.dumps(sealed.seal_exercise(exercise, KEY, "test")))
    assert data["parts"][0][0][1] == {"kind": "public", "build": custom.public_build,
                                      "args": {}}


def test_a_sealed_mask_reads_booleans_and_broadcasts_and_hides_its_shape():
    mask = np.zeros((2, 1, 3, 4), dtype=bool)
    mask[0, :, :, :2] = mask[1] = True
    book = numbers_close(mask.astype(float), read="boolean_mask", name_shape=False,
                         mistakes=[(~mask, "the opposite")])
    check, data = sealed_check(book)
    for answer in (mask, torch.tensor(mask), mask[:, :, :1]):
        assert verdict(book, answer) == verdict(check, answer) == "right"
    assert verdict(check, ~mask) == verdict(book, ~mask) == "the opposite"
    assert verdict(check, np.ones((2, 1, 4, 3))) == "wrong shape: got (2, 1, 4, 3)"
    assert verdict(book, np.ones((2, 1, 4, 3))) == "wrong shape: got (2, 1, 4, 3)"
    assert data["shape"] is None and "3, 4" not in json.dumps(data)
    assert verdict(check, mask[0]).startswith("a mask of shape (1, 3, 4) does not line up")


# --- every exercise of the chapter: each part varies or is open-book ---------------------------

def _chapter_exercises():
    return [(f"nb{number}", exercise) for number, notebook in sorted(load_chapter().items())
            for exercise in notebook.exercises]


each_chapter_exercise = pytest.mark.parametrize(
    "name, exercise", _chapter_exercises(), ids=[f"{n}.{e.name}" for n, e in _chapter_exercises()])


# Parts with no one answer to try here (a class) that vary: the book's answer fails every
# student's variant in tests/exercises/test_exercise_variants.py, from the notebook's ANSWERS
VARIED_BY_ANSWERS = {"nb10.ex2[0]"}


@each_chapter_exercise
def test_every_graded_part_varies_or_is_open_book(name, exercise):
    """A part that varies: the book's answer is wrong in every variant a student can draw;
    an open-book part: right in every one; without variants: every part open-book."""
    if not exercise.variants:
        assert set(exercise.open_book) == set(range(len(exercise.parts))), (
            f"{name}.{exercise.name} has no variants: every part must be open_book")
        return
    assert len(exercise.variants) >= 4  # the book's and at least three a student can draw
    book_parts, _ = exercise.built(0)
    for index in range(1, len(exercise.variants)):
        student = exercise.for_variant(index)
        for j, (_, checker) in enumerate(book_parts):
            if not hasattr(checker, "expected") or getattr(checker, "kind", "") == "function":
                assert j in exercise.open_book or (
                    f"{name}.{exercise.name}[{j}]" in VARIED_BY_ANSWERS), (name, exercise.name, j)
                continue
            result = student.check_part(j, checker.expected)
            if j in exercise.open_book:
                assert result.correct, (name, exercise.name, index, j, result.message)
            else:
                assert not result.correct, (name, exercise.name, index, j)


def _shown(value):
    """How a right answer could be written in a hint or a message: a decimal at 2 to 4
    places, a whole number of three or more digits (smaller ones are everywhere)."""
    texts = set()
    for x in np.ravel(np.asarray(value, dtype=float)):
        x = round(float(x), 12)
        if not x.is_integer():
            texts |= {f"{x:.2f}", f"{x:.3f}", f"{x:.4f}", f"{x:.3g}"}
        elif abs(x) >= 100:
            texts |= {f"{x:.0f}", f"{x:,.0f}"}
    return texts


@each_chapter_exercise
def test_no_hint_or_message_of_a_students_variant_states_its_answer(name, exercise):
    for index in range(1, len(exercise.variants or ())):
        student = exercise.for_variant(index)
        said = " ".join(student.hints)
        for j, (_, checker) in enumerate(student.parts):
            said += " " + " ".join(str(m) for _, m in getattr(checker, "mistakes", ()))
            said += " " + student.check_part(j, 0.123456).message
        for j, (_, checker) in enumerate(student.parts):
            if j in exercise.open_book or not hasattr(checker, "expected"):
                continue
            try:
                texts = _shown(checker.expected)
            except (TypeError, ValueError):  # a word: its choices are named anyway
                continue
            for text in texts:
                assert not re.search(rf"(?<![\d.]){re.escape(text)}(?![\d])", said), (
                    name, exercise.name, index, j, text)


def test_a_sealed_count_refuses_the_set_it_counts():
    book = integer(2, what="number of heads", read="a_count", mistakes=[(1, "one head")])
    check, _ = sealed_check(book)
    for answer in ({0, 1}, [0, 3], (1, 2)):
        assert verdict(book, answer) == verdict(check, answer) == (
            "that looks like a set; the question asks for its size, the number of things "
            "it holds")
    assert verdict(check, [2]) == verdict(check, 2) == "right"
    assert verdict(check, 1) == "one head"
