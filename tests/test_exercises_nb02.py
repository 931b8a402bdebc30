"""Notebook 02's exercises: what tests/test_exercises_declared.py cannot say.

Exercise 3's function estimated by least squares (a route
notebooks/solutions/02_solutions.ipynb does not take), and its typical wrong functions.
"""

import numpy as np
import pytest

from d2lutil.exercises.nb02 import ex3


def test_ex3_accepts_a_least_squares_estimate():
    def by_least_squares(a, b):
        weights = np.array([[a, 1 - a], [b, 1 - b]])
        rng = np.random.default_rng(0)
        train, test = (rng.standard_normal((2_000, 2)) for _ in range(2))
        readout, *_ = np.linalg.lstsq(train @ weights.T, train, rcond=None)
        residual = test - (test @ weights.T) @ readout
        return float((residual ** 2).sum() / (test ** 2).sum())

    assert ex3.check(by_least_squares)


@pytest.mark.parametrize("wrong", [
    lambda a, b: 0.0,                        # "two heads always suffice"
    lambda a, b: 0.5,                        # "never"
    lambda a, b: abs(a - b),                 # the determinant, not the error
    lambda a, b: 0.5 if a != b else 0.0,     # the wrong way round
])
def test_ex3_refuses_typical_wrong_answers(wrong):
    assert not ex3.check(wrong)
