"""Notebook 01's exercises: what tests/exercises/test_exercises_declared.py cannot say.

``ANSWERS``: the right answers of every variant by another route than d2lutil.exercises.nb01
(the covariances' least squares, least squares on samples, torch's softmax), for
tests/exercises/test_exercise_variants.py. Typical wrong splits and what the check says to
them: notebooks/solutions/01_solutions.ipynb.
"""

import math

import numpy as np
import pytest
import torch

from d2lutil import tasks
from d2lutil.exercises import variants
from d2lutil.exercises.nb01 import ex1, ex2, ex3


def population_error(split, sigma):
    """The best readout's relative squared error, from the covariances: the targets
    (v_1, v_2) have covariance diag(1, sigma^2), the feature is a^T v."""
    cov = np.diag([1.0, sigma**2])
    a = np.asarray(split, dtype=float)
    cross = cov @ a  # Cov(t, m)
    explained = np.outer(cross, cross) / (a @ cov @ a)
    return float(np.trace(cov - explained) / np.trace(cov))


def measured_error(split, sigma, num=20_000, d=16):
    values = tasks.sample_values(2 * num, d, seed=0)
    values[:, 1] *= sigma
    targets = tasks.copy_targets(values)
    features = tasks.head_outputs(values, split)
    W = tasks.fit_readout(features[:num], targets[:num])
    return tasks.relative_squared_error(features[num:] @ W, targets[num:])


def ex1_answers(sigma):
    grid = [(a / 100, 1 - a / 100) for a in range(101)]
    best = min(grid, key=lambda split: population_error(split, sigma))
    return [best, measured_error(best, sigma), measured_error((0.5, 0.5), sigma)]


def ex2_answers(k):
    split = torch.softmax(torch.arange(k, dtype=torch.float64), 0).tolist()  # skewed
    _, rse = tasks.readout_errors(split, value_size=16, num_train=20_000,
                                  num_test=20_000, seed=1)
    assert tasks.theory_error(split) == pytest.approx(1 - 1 / k)
    return [rse, False]


def ex3_answers(d, q, k1):
    query = torch.tensor(q, dtype=torch.float64)
    keys = torch.stack([torch.tensor(k1, dtype=torch.float64),
                        torch.zeros(d, dtype=torch.float64)])
    weights = torch.softmax(keys @ query / math.sqrt(d), dim=0)
    _, rse = tasks.readout_errors(weights.tolist(), value_size=16, num_train=20_000,
                                  num_test=20_000, seed=0)
    return [weights, rse]


ANSWERS = {ex1: ex1_answers, ex2: ex2_answers, ex3: ex3_answers}  # see test_exercise_variants.py

# the library calls that give an answer, each a function of a variant's values: see
# test_exercises_understanding.py
LIBRARY_CALLS = {ex2: [lambda k: tasks.theory_error([1 / k] * k)]}


def test_values_name_the_students_values(monkeypatch, capsys):
    student = next(f"s{n}" for n in range(1000) if ex1.variant(f"s{n}") == 2
                   and ex3.variant(f"s{n}") == 2)
    monkeypatch.setenv(variants.ENV, student)
    assert ex1.params == {"sigma": 0.4} and ex1.parts[0][1].expected.tolist() == [1, 0]
    ex1.values()
    ex3.values()
    out = capsys.readouterr().out
    assert "sigma = 0.4 (where the text says sigma = 2)" in out
    assert "d = 4, q = (2, 1, 1, 1), k1 = (1, 1, 1, 1)" in out
