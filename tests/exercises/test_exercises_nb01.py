"""Notebook 01's exercises: what tests/exercises/test_exercises_declared.py cannot say.

Every variant of every exercise (issue 35): the right answers, computed here by another
route than d2lutil.exercises.nb01's formulas (least squares on samples, as
notebooks/solutions/01_solutions.ipynb does, the population least squares of the
covariances, torch's softmax), are ``ANSWERS``: tests/exercises/test_exercise_variants.py
checks that they pass that variant's check and that the book's fail every student's
variant on the parts that vary, and that each variant's typical mistakes get their own
message. Here: the variants themselves, and the values a student's variant shows.
Exercise 1's best split is checked in every accepted form.
"""

import json
import math

import numpy as np
import pytest
import torch

from d2lutil import tasks
from d2lutil.exercises import variants
from d2lutil.exercises.nb01 import ex1, ex2, ex3

# --- the right answers, by another route -------------------------------------------------

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


# --- the variants ------------------------------------------------------------------------

def test_the_variants_are_json_and_the_book_comes_first():
    assert ex1.variants[0] == {"sigma": 2}
    assert ex2.variants[0] == {"k": 3}
    assert ex3.variants[0] == {"d": 4, "q": [1, 1, 1, 1], "k1": [1, 1, 1, 1]}
    for exercise in ANSWERS:
        assert json.loads(json.dumps(exercise.variants)) == exercise.variants
        assert 4 <= len(exercise.variants) <= 6
    for values in ex3.variants:
        assert len(values["q"]) == len(values["k1"]) == values["d"]


def test_ex1_students_variants_put_the_larger_variance_on_v1():
    """sigma < 1, and not 1/2 (sigma and 1/sigma give the same errors)."""
    for values in ex1.variants[1:]:
        assert values["sigma"] < 1 and values["sigma"] != 0.5
        assert ex1_answers(values["sigma"])[0] == (1.0, 0.0)
    assert ex1_answers(2)[0] == (0.0, 1.0)


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


# --- exercise 1's best split -------------------------------------------------------------

@pytest.mark.parametrize("split", [(0.0, 1.0), [0, 1], np.array([0.005, 0.995]),
                                   torch.tensor([0.0, 1.0])])
def test_ex1_accepts_the_best_split_in_every_form(split):
    assert ex1.check_part(0, split)
    assert ex1.for_variant(1).check_part(0, split[::-1] if not isinstance(
        split, torch.Tensor) else split.flip(0))


@pytest.mark.parametrize("split", [
    (1.0, 0.0),                   # the other one-hot split
    (0.5, 0.5),                   # even split as the best
    (0.3, 0.7),                   # in between
    (0.0, 1.0, 0.0),              # three weights
    (0.0, 2.0),                   # weights not summing to 1
])
def test_ex1_refuses_wrong_splits(split):
    assert not ex1.check(split, 0.2, 0.32)


def test_ex1_names_the_even_and_the_other_one_hot_split_in_every_variant():
    for i in range(len(ex1.variants)):
        exercise = ex1.for_variant(i)
        wrong = exercise.parts[0][1].expected[::-1]
        assert "does worse than the even one" in exercise.check_part(0, wrong).message
        assert "even split is not the best" in exercise.check_part(0, (0.5, 0.5)).message
