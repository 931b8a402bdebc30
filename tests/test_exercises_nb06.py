"""Notebook 06's exercises: what tests/test_exercises_declared.py cannot say.

What exercise 2's hints and text say. The right answers are computed by training and
checked in notebooks/solutions/06_solutions.ipynb; exercise 3's size of a set, whose
checker is written in d2lutil.exercises.nb06 around ``integer``, declares its mistakes.
"""

import re

import nbformat

import book
from d2lutil.exercises.nb06 import ex2

CHAPTER = book.ROOT / "notebooks" / "06_learned_heads.ipynb"
SOLUTIONS = book.ROOT / "notebooks" / "solutions" / "06_solutions.ipynb"


def test_ex2_hints_give_the_method_not_the_numbers():
    """No hint states a refitted error or the formula that gives them all."""
    hints = " ".join(ex2.hints).replace(" ", "")
    errors = ex2.parts[0][1].expected
    for k in range(1, 8):
        for digits in (2, 3):
            assert f"{errors[k - 1]:.{digits}f}".lstrip("0") not in hints, k
    for formula in ("1-2k/16", "1-k/8", "2k/16", "k/8"):
        assert formula not in hints


def test_ex2_states_the_steps_the_solution_trains():
    """The exercise and its hint say how long to train: as long as the solution does."""
    solutions = nbformat.read(SOLUTIONS, as_version=4)
    code = "\n".join(c.source for c in solutions.cells if c.cell_type == "code")
    steps = re.findall(r"train\(num_heads=8, num_steps=(\d+)\)", code)
    assert len(steps) == 1
    nb = nbformat.read(CHAPTER, as_version=4)
    exercise = next(c.source for c in nb.cells
                    if c.cell_type == "markdown" and c.source.startswith("2. "))
    for text in (exercise, " ".join(ex2.hints)):
        assert f"{steps[0]} steps" in " ".join(text.split())
        assert f"num_steps={steps[0]}" in text
