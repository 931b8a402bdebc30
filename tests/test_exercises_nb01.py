"""Notebook 01's exercises: what tests/test_exercises_declared.py cannot say.

Exercise 1's best split has a checker written in d2lutil.exercises.nb01: the split in
every accepted form, and the wrong splits it refuses. The right answers are computed and
checked in notebooks/solutions/01_solutions.ipynb.
"""

import numpy as np
import pytest
import torch

from d2lutil.exercises.nb01 import ex1


@pytest.mark.parametrize("split", [(0.0, 1.0), [0, 1], np.array([0.005, 0.995]),
                                   torch.tensor([0.0, 1.0])])
def test_ex1_accepts_the_best_split_in_every_form(split):
    assert ex1.check_part(0, split)


@pytest.mark.parametrize("split", [
    (1.0, 0.0),                   # the other one-hot split
    (0.5, 0.5),                   # even split as the best
    (0.3, 0.7),                   # in between
    (0.0, 1.0, 0.0),              # three weights
    (0.0, 2.0),                   # weights not summing to 1
])
def test_ex1_refuses_wrong_splits(split):
    assert not ex1.check(split, 0.2, 0.32)
