"""Notebook 02's exercises: what tests/exercises/test_exercises_declared.py cannot say.

Every variant of exercises 1 and 2 (issue 35): the right answers, computed here by another
route than d2lutil.exercises.nb02's formulas (least squares on samples and torch's rank;
torch.linalg.solve and a readout fitted on one coordinate, as
notebooks/solutions/02_solutions.ipynb does), are ``ANSWERS``: the tests every notebook
shares (tests/exercises/test_exercise_variants.py) check that they pass that variant's
check, that the book's fail every student's variant, and each variant's declared mistakes.
Exercise 3's function estimated by least squares (a route the solutions notebook does not
take), its typical wrong functions, and its hidden cases.
"""

import json

import numpy as np
import pytest
import torch

from d2lutil import tasks
from d2lutil.exercises import CallResults, Wrong
from d2lutil.exercises.nb02 import ex1, ex2, ex3

# --- the right answers, by another route -------------------------------------------------

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


ANSWERS = {ex1: ex1_answers, ex2: ex2_answers}  # see test_exercise_variants.py


# --- the variants ------------------------------------------------------------------------

def test_the_variants_are_json_and_the_book_comes_first():
    assert ex1.variants[0] == {"weights": [[1, 0, 0], [0, 1, 0], [0.5, 0.5, 0],
                                           [0.2, 0.8, 0]]}
    assert ex2.variants[0] == {"weights": [[0.88, 0.12], [0.12, 0.88]],
                               "y": [1.64, -0.64]}
    for exercise in ANSWERS:
        assert json.loads(json.dumps(exercise.variants)) == exercise.variants
        assert len(exercise.variants) == 5 and not exercise.open_book
        assert all(checker.mistakes for _, checker in exercise.parts)
    assert ex3.variants is None and ex3.open_book.keys() == {0}


def test_ex2_outputs_mix_whole_values_and_a_soft_symmetric_pair():
    """y = A v for a whole v with distinct entries, to two decimals as the starter cell
    shows it; each head's weights are positive and sum to 1."""
    for values in ex2.variants:
        A = np.array(values["weights"])
        assert np.allclose(A, A.T) and np.allclose(A.sum(1), 1) and (A > 0).all()
        v = np.linalg.solve(A, values["y"])
        assert np.allclose(v, np.round(v), atol=1e-12) and v[0] != v[1]
        assert np.allclose(A @ np.round(v), values["y"], atol=1e-12)
        assert all(round(x, 2) == x for x in values["y"])


def test_ex2_values_show_the_starter_cells_y():
    """The starter cell's line ``y = [1.64, -0.64]`` is the variant's key ``y``."""
    assert list(ex2.variants[0]) == ["weights", "y"]
    assert ex2.params == ex2.variants[0]  # the book's, without an id


# --- exercise 3 --------------------------------------------------------------------------

def by_least_squares(a, b):
    weights = np.array([[a, 1 - a], [b, 1 - b]])
    rng = np.random.default_rng(0)
    train, test = (rng.standard_normal((2_000, 2)) for _ in range(2))
    readout, *_ = np.linalg.lstsq(train @ weights.T, train, rcond=None)
    residual = test - (test @ weights.T) @ readout
    return float((residual ** 2).sum() / (test ** 2).sum())


def test_ex3_accepts_a_least_squares_estimate():
    assert ex3.check(by_least_squares)
    ex3.parts[0][1].graded()(by_least_squares)  # hidden cases too


WRONG = {ex3: [  # typical wrong functions: see test_exercise_variants.py
    lambda a, b: 0.0,                        # "two heads always suffice"
    lambda a, b: 0.5,                        # "never"
    lambda a, b: abs(a - b),                 # the determinant, not the error
    lambda a, b: 0.5 if a != b else 0.0,     # the wrong way round
]}


def test_ex3_hidden_cases_are_new_pairs_judged_only_at_grading():
    checker = ex3.parts[0][1]
    public, hidden = checker.cases(), list(checker.hidden)
    assert 4 <= len(hidden) <= 8 and not set(hidden) & set(public)
    assert {a == b for a, b in hidden} == {True, False}
    assert all(isinstance(x, float) for case in hidden for x in case)
    for a, b in hidden:  # the rule, by the rank of the weights
        rank = int(torch.linalg.matrix_rank(torch.tensor([[a, 1 - a], [b, 1 - b]])))
        assert tasks.theory_error([[a, 1 - a], [b, 1 - b]]) == 1 - rank / 2

    def public_only(a, b):  # right on the public cases, wrong on every hidden one
        right = 0.0 if a != b else 0.5
        return right if (a, b) in public else 0.5 - right

    assert ex3.check(public_only)
    with pytest.raises(Wrong, match="wrong in 8 of 17 cases tried"):
        checker.graded()(public_only)
    results = CallResults(by_least_squares(*case) for case in public + hidden)
    checker.graded()(results)
