"""Notebook 07's exercises: what tests/test_exercises_declared.py cannot say.

Exercise 2's slips (half, a quarter, an eighth of the right count of FLOPs) get messages
that name them, and the hints give the method, not the answers. The right answers are
computed (FlopCounterMode around a real prefill and real steps, least squares, the bytes
of a cache) and checked in notebooks/solutions/07_solutions.ipynb.
"""

import re

import pytest

from d2lutil.exercises.nb07 import ex1, ex2, ex3


@pytest.mark.parametrize("divisor, words", [
    # one sequence, or the batch's scores without their mixing (they cost the same)
    (2, ("batch", "mixing")),
    (4, ("scores", "mixing", "batch")),  # the scores of one sequence
    (64 // 8, ("head",)),  # one head of width p
])
def test_ex2_slips_get_messages_that_name_them(divisor, words):
    verdict = ex2.check("more", ex2.parts[1][1].expected // divisor)
    assert not verdict
    assert all(word in verdict.message for word in words), verdict.message


def test_the_hints_give_the_method_not_the_answer():
    floors, extra, fits = (exercise.parts[-1][1].expected for exercise in (ex1, ex2, ex3))
    answers = {
        ex1: [f"{floors[i]:g}" for i in (0, 1)] + ["4, 8, 16, 16", "1 - R/16"],
        ex2: [str(extra), f"{extra:,}"],
        ex3: [f"{n:g}" for n in fits] + ["4096 * 2"],
    }
    for exercise, texts in answers.items():
        for hint in exercise.hints:
            for text in texts:
                assert not re.search(rf"(?<![\d.]){re.escape(text)}(?![\d.])", hint), (
                    f"{exercise.name}: a hint gives away {text!r}")
