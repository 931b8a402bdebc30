"""Notebook 02's exercises: what tests/exercises/test_exercises_declared.py cannot say.

``ANSWERS``: every variant's right answers to exercises 1 and 2 by another route (least
squares on samples and torch's rank; torch.linalg.solve and a fitted readout), for
tests/exercises/test_exercise_variants.py. Here: what exercise 2's variants show, and
exercise 3's hidden cases and a least-squares estimate. Its typical wrong functions and
what the check says to them: notebooks/solutions/02_solutions.ipynb.
"""

import numpy as np
import pytest
import torch

from d2lutil import tasks
from d2lutil.exercises import CallResults, Wrong
from d2lutil.exercises.nb02 import ex1, ex2, ex3


def ex1_answers(weights):
    A = torch.tensor(weights, dtype=torch.float64)
    assert A.shape[0] == 4 and torch.allclose(A.sum(1), torch.ones(4, dtype=A.dtype))
    _, rse = tasks.readout_errors(weights, value_size=8, num_train=10_000,
                                  num_test=40_000, seed=0)
    rank = int(torch.linalg.matrix_rank(A))
    assert abs(rse - (1 - rank / A.shape[1])) < 0.005
    return [rse]


def ex2_answers(weights, y):
    A = torch.tensor(weights, dtype=torch.float64)
    outputs = torch.tensor(y, dtype=torch.float64)
    values_behind = torch.linalg.solve(A, outputs)
    values = tasks.sample_values(1_000, 1, seed=0)
    W = tasks.fit_readout(tasks.head_outputs(values, A), tasks.copy_targets(values))
    return [values_behind, float(W[1, 0])]


# the library calls that give an answer (see test_exercises_understanding.py)
LIBRARY_CALLS = {ex1: [lambda weights: tasks.theory_error(weights)]}

ANSWERS = {ex1: ex1_answers, ex2: ex2_answers}  # see test_exercise_variants.py


def test_ex2_outputs_mix_whole_values_and_a_soft_symmetric_pair():
    """y = A v for a whole v with distinct entries, to two decimals as the starter cell
    shows it; each head's weights are positive and sum to 1."""
    for values in ex2.variants:
        A = np.array(values["weights"])
        assert np.allclose(A, A.T) and np.allclose(A.sum(1), 1) and (A > 0).all()
        v = np.linalg.solve(A, values["y"])
        assert np.allclose(v, np.round(v), atol=1e-12) and v[0] != v[1]
        assert all(round(x, 2) == x for x in values["y"])


def by_least_squares(a, b):
    weights = np.array([[a, 1 - a], [b, 1 - b]])
    rng = np.random.default_rng(0)
    train, test = (rng.standard_normal((2_000, 2)) for _ in range(2))
    readout, *_ = np.linalg.lstsq(train @ weights.T, train, rcond=None)
    residual = test - (test @ weights.T) @ readout
    return float((residual ** 2).sum() / (test ** 2).sum())


def test_ex3_hidden_cases_are_new_pairs_judged_only_at_grading():
    checker = ex3.parts[0][1]
    public, hidden = checker.cases(), list(checker.hidden)
    assert 4 <= len(hidden) <= 8 and not set(hidden) & set(public)
    assert {a == b for a, b in hidden} == {True, False}
    assert all(isinstance(x, float) for case in hidden for x in case)
    for a, b in hidden:  # the rule, by the rank of the weights
        rank = int(torch.linalg.matrix_rank(torch.tensor([[a, 1 - a], [b, 1 - b]])))
        assert tasks.theory_error([[a, 1 - a], [b, 1 - b]]) == 1 - rank / 2
    assert ex3.check(by_least_squares)  # an estimate, on the public and hidden cases
    checker.graded()(CallResults(by_least_squares(*case) for case in public + hidden))

    def public_only(a, b):  # right on the public cases, wrong on every hidden one
        right = 0.0 if a != b else 0.5
        return right if (a, b) in public else 0.5 - right

    assert ex3.check(public_only)
    with pytest.raises(Wrong, match="wrong in 8 of 17 cases tried"):
        checker.graded()(public_only)
