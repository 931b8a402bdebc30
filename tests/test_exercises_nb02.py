"""Notebook 02's exercises: what tests/test_exercises_declared.py cannot say.

Routes notebooks/solutions/02_solutions.ipynb does not take: the threshold of exercise 2
measured by bisection with float32 ``torch.linalg.lstsq`` (the solutions test only three
times above and below the prediction; the check allows a factor 1.5), and exercise 3's
function estimated by least squares, with its typical wrong functions.
"""

import math

import numpy as np
import pytest
import torch

from d2lutil.exercises.nb02 import ex2, ex3


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


def test_ex2_accepts_the_measured_threshold():
    """Bisect (in log delta) for where the two heads stop being told apart."""
    low, high = 1e-6, 1e-2
    assert float32_error(low) > 0.4 and float32_error(high) < 1e-3
    for _ in range(20):
        middle = math.sqrt(low * high)
        low, high = (low, middle) if float32_error(middle) < 0.05 else (middle, high)
    assert ex2.check(high)


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
