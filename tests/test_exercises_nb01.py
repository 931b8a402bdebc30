"""The checks of notebook 01's exercises, against answers computed here by another route.

The right answers come from NumPy simulations of the task and brute force, never from the
constants in d2lutil.exercises.nb01; each check must accept them in more than one form and
refuse the typical wrong answers.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from d2lutil.exercises.nb01 import ex1, ex2, ex3


def relative_squared_error(split, sigmas, num_samples=400_000, seed=0):
    """Best linear readout of all values from one mixture, by NumPy least squares.

    One coordinate suffices: coordinates are independent and the readout acts on each alike.
    """
    rng = np.random.default_rng(seed)
    values = rng.standard_normal((num_samples, len(split))) * np.asarray(sigmas)
    mixture = values @ np.asarray(split, dtype=float)
    readout, *_ = np.linalg.lstsq(mixture[:, None], values, rcond=None)
    residual = values - mixture[:, None] @ readout
    return float((residual ** 2).sum() / (values ** 2).sum())


@pytest.fixture(scope="module")
def unequal():
    """Splits (a, 1 - a) on a grid with their measured errors, for sigma = 2."""
    grid = [(a / 10, 1 - a / 10) for a in range(11)]
    return {split: relative_squared_error(split, (1.0, 2.0)) for split in grid}


def test_ex1_accepts_the_measured_answer(unequal):
    best = min(unequal, key=unequal.get)
    assert ex1.check(best, unequal[best], unequal[(0.5, 0.5)])


def test_ex1_accepts_closed_forms_and_other_types(unequal):
    # Explained share (a1^2 + a2^2 s^4) / (a1^2 + a2^2 s^2) of the total 1 + s^2, exactly.
    def exact(a1, a2, s=Fraction(2)):
        return 1 - (a1 ** 2 + a2 ** 2 * s ** 4) / (a1 ** 2 + a2 ** 2 * s ** 2) / (1 + s ** 2)

    half = Fraction(1, 2)
    assert ex1.check(torch.tensor([0.0, 1.0]), exact(0, 1), exact(half, half))
    assert ex1.check([0, 1], float(exact(0, 1)), np.float32(exact(half, half)))
    assert ex1.check(np.array([0.005, 0.995]), torch.tensor(float(exact(0, 1))), 0.32)


@pytest.mark.parametrize("answers", [
    ((1.0, 0.0), 0.2, 0.32),                   # the other one-hot split
    ((0.5, 0.5), 0.2, 0.32),                   # even split as the best
    ((0.3, 0.7), 0.2, 0.32),                   # in between
    ((0.0, 1.0, 0.0), 0.2, 0.32),              # three weights
    ((0.0, 2.0), 0.2, 0.32),                   # weights not summing to 1
    ((0.0, 1.0), 0.5, 0.32),                   # the equal-variance answer
    ((0.0, 1.0), 0.8, 0.32),                   # share explained, not left over
    ((0.0, 1.0), math.sqrt(0.2), 0.32),        # relative error, not squared
    ((0.0, 1.0), 0.2, 0.68),                   # share explained by the even split
    ((0.0, 1.0), 0.2, 0.5),
])
def test_ex1_refuses_typical_wrong_answers(answers):
    assert not ex1.check(*answers)


def test_ex1_unanswered(capsys):
    assert not ex1.check(..., ..., ...)
    assert "not answered yet" in capsys.readouterr().out


def test_ex2_accepts_the_measured_answer():
    splits = [(1 / 3, 1 / 3, 1 / 3), (0.6, 0.3, 0.1), (1.0, 0.0, 0.0)]
    errors = [relative_squared_error(split, (1, 1, 1)) for split in splits]
    depends = np.ptp(errors) > 0.01
    assert ex2.check(errors[1], depends)
    assert ex2.check(np.mean(errors), "no")


def test_ex2_accepts_the_rank_argument():
    rank = np.linalg.matrix_rank(np.array([[0.6, 0.3, 0.1]]))
    assert ex2.check(Fraction(3 - rank, 3), False)
    assert ex2.check(torch.tensor(1 - rank / 3), np.bool_(False))


@pytest.mark.parametrize("answers", [
    (0.5, False), (1 / 3, False), (math.sqrt(2 / 3), False), (2 / 3, True), (0.69, False)])
def test_ex2_refuses_typical_wrong_answers(answers):
    assert not ex2.check(*answers)


@pytest.fixture(scope="module")
def smallest_n():
    """Brute force: the first n whose expected in-sample error prints as 0.707."""
    d = 16
    n = d + 1
    while f"{math.sqrt((1 - d / n) / 2):.3f}" != "0.707":
        n += 1
    return n


def test_ex3_accepts_the_brute_force_answer_in_any_numeric_type(smallest_n):
    for answer in (smallest_n, float(smallest_n), np.int64(smallest_n),
                   torch.tensor(smallest_n)):
        assert ex3.check(answer)


@pytest.mark.parametrize("wrong", [-1, +1, 0.5, "ten thousand", "double"])
def test_ex3_refuses_typical_wrong_answers(wrong, smallest_n, capsys):
    answer = {"ten thousand": 10_000, "double": 2 * smallest_n}.get(wrong)
    if answer is None:
        answer = smallest_n + wrong
    assert not ex3.check(answer)
    assert "not right yet" in capsys.readouterr().out


def test_ex3_says_one_short_without_the_number(smallest_n, capsys):
    ex3.check(smallest_n - 1)
    out = capsys.readouterr().out
    assert "one sample short" in out and str(smallest_n) not in out
