"""Notebook 03's exercises: what tests/test_exercises_declared.py cannot say.

The typical wrong functions of exercises 2 and 3, which the checks' cases must tell from
the right ones. The right answers are computed and checked in
notebooks/solutions/03_solutions.ipynb.
"""

import pytest

from d2lutil.exercises.nb03 import ex2, ex3


@pytest.mark.parametrize("wrong", [
    lambda n, m, d, h: 8 * n * d * d + 4 * n * n * d,          # self-attention: ignores m
    lambda n, m, d, h: 2 * (n + m) * d * d + 2 * n * m * d,    # a multiply-add as 1 FLOP
    lambda n, m, d, h: 4 * (n + m) * d * d + 4 * n * m * d * h,  # h counted twice
    lambda n, m, d, h: 8 * n * d * d + 4 * n * m * d,          # K, V projections on n rows
])
def test_ex2_refuses_typical_wrong_answers(wrong):
    assert not ex2.check(wrong)


def by_rule(valid_lens, num_heads):
    lens = valid_lens.tolist()
    return len(lens) == 1 or num_heads == 1 or len(set(lens)) == 1


@pytest.mark.parametrize("wrong", [
    lambda v, h: len(v) == 1,                   # one sequence only
    lambda v, h: h == 1,                        # one head only
    lambda v, h: len(set(v.tolist())) == 1,     # equal lengths only
    lambda v, h: True,
    lambda v, h: int(by_rule(v, h)),            # an int is not True/False
])
def test_ex3_refuses_typical_wrong_answers(wrong):
    assert not ex3.check(wrong)
