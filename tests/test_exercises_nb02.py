"""The checks of notebook 02's exercises, against answers computed here by another route.

The right answers come from NumPy least squares on the task, a bisection with float32
``torch.linalg.lstsq`` and ranks, never from the constants in d2lutil.exercises.nb02.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from d2lutil.exercises.nb02 import ex1, ex2, ex3

FOUR_HEADS = [[1, 0, 0], [0, 1, 0], [1 / 2, 1 / 2, 0], [1 / 5, 4 / 5, 0]]


def held_out_error(weights, num_samples=20_000, seed=0):
    """Relative squared error of the best linear readout of every value from the heads.

    NumPy least squares on one coordinate (they are independent), scored on fresh samples.
    """
    weights = np.asarray(weights, dtype=float)
    rng = np.random.default_rng(seed)
    train, test = (rng.standard_normal((num_samples, weights.shape[1])) for _ in range(2))
    readout, *_ = np.linalg.lstsq(train @ weights.T, train, rcond=None)
    residual = test - (test @ weights.T) @ readout
    return float((residual ** 2).sum() / (test ** 2).sum())


def test_ex1_accepts_the_measured_and_the_rank_answer():
    assert ex1.check(held_out_error(FOUR_HEADS, num_samples=200_000))
    rank = np.linalg.matrix_rank(np.array(FOUR_HEADS))
    assert ex1.check(Fraction(3 - int(rank), 3))
    assert ex1.check(torch.tensor([1 - rank / 3]))


@pytest.mark.parametrize("wrong", [0.0, 2 / 3, 0.25, math.sqrt(1 / 3), 0.4, -1 / 3])
def test_ex1_refuses_typical_wrong_answers(wrong):
    assert not ex1.check(wrong)


def float32_error(delta, seed=0, n=2_000, d=16):
    """Held-out relative squared error of two heads 0.5 +- delta, float32 lstsq with gelsd."""
    rng = np.random.default_rng(seed)
    values = torch.from_numpy(rng.standard_normal((2 * n, 2, d))).float()
    mixing = torch.tensor([[0.5 + delta, 0.5 - delta], [0.5 - delta, 0.5 + delta]])
    features = torch.einsum("hk,nkd->nhd", mixing, values).reshape(2 * n, -1)
    targets = values.reshape(2 * n, -1)
    readout = torch.linalg.lstsq(features[:n], targets[:n], driver="gelsd").solution
    residual = features[n:] @ readout - targets[n:]
    return float((residual ** 2).sum() / (targets[n:] ** 2).sum())


@pytest.fixture(scope="module")
def measured_threshold():
    """Bisect (in log delta) for where the two heads stop being told apart."""
    low, high = 1e-6, 1e-2
    assert float32_error(low) > 0.4 and float32_error(high) < 1e-3
    for _ in range(20):
        middle = math.sqrt(low * high)
        low, high = (low, middle) if float32_error(middle) < 0.05 else (middle, high)
    return high


def test_ex2_accepts_the_measured_threshold_and_the_prediction(measured_threshold):
    assert ex2.check(measured_threshold)
    assert ex2.check(torch.finfo(torch.float32).eps * 2_000 / 2)
    assert ex2.check(np.float32(1.2e-4))


@pytest.mark.parametrize("factor", [2, 1 / 2, 10, 1 / 10])
def test_ex2_refuses_thresholds_off_by_a_factor(measured_threshold, factor):
    assert not ex2.check(measured_threshold * factor)


@pytest.mark.parametrize("wrong", [
    np.finfo(np.float64).eps * 2_000 / 2,        # float64's epsilon
    np.finfo(np.float32).eps * 32 / 2,           # the columns, not the rows
    np.finfo(np.float32).eps,                    # rcond without the size
    "1.2e-4"])
def test_ex2_refuses_typical_wrong_answers(wrong):
    assert not ex2.check(wrong)


def test_ex3_accepts_least_squares_and_rank_functions():
    def by_least_squares(a, b):
        return held_out_error([[a, 1 - a], [b, 1 - b]], num_samples=2_000)

    def by_rank(a, b):
        mixing = torch.tensor([[a, 1 - a], [b, 1 - b]], dtype=torch.float64)
        return 1 - torch.linalg.matrix_rank(mixing) / 2

    assert ex3.check(by_least_squares)
    assert ex3.check(by_rank)
    assert ex3.check(lambda a, b: 0 if a != b else Fraction(1, 2))


@pytest.mark.parametrize("wrong", [
    lambda a, b: 0.0,                        # "two heads always suffice"
    lambda a, b: 0.5,                        # "never"
    lambda a, b: abs(a - b),                 # the determinant, not the error
    lambda a, b: 0.5 if a != b else 0.0,     # the wrong way round
    lambda a, b: 1 / 0,                      # raises: reported, not raised
])
def test_ex3_refuses_typical_wrong_answers(wrong):
    assert not ex3.check(wrong)


def test_ex3_unanswered_function(capsys):
    def best_error(a, b):
        return ...

    assert not ex3.check(best_error)
    assert "not answered yet" in capsys.readouterr().out
