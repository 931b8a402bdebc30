"""Notebook 03's exercises: what tests/test_exercises_declared.py cannot say.

Exercise 2's result checker is written in d2lutil.exercises.nb03: it names the
self-attention formula, a slip only for cases with m != n, which the generic tests do not
try. The typical wrong functions of exercises 2 and 3, which the checks' cases must tell
from the right ones, and exercise 3's rule held against every batch it describes. The
right answers are computed and checked in notebooks/solutions/03_solutions.ipynb.
"""

import itertools

import pytest
import torch

from d2lutil.exercises.nb03 import ex2, ex3


def self_attention(n, m, d, h):
    return 8 * n * d * d + 4 * n * n * d


def test_ex2_names_the_self_attention_formula():
    result = ex2.check_part(0, self_attention)
    assert not result and "that is the self-attention count" in result.message
    assert result.message.endswith("wrong in 5 of 6 cases tried")  # right when m == n


@pytest.mark.parametrize("wrong", [
    self_attention,                                            # ignores m
    lambda n, m, d, h: 2 * (n + m) * d * d + 2 * n * m * d,    # a multiply-add as 1 FLOP
    lambda n, m, d, h: 4 * (n + m) * d * d + 4 * n * m * d * h,  # h counted twice
    lambda n, m, d, h: 8 * n * d * d + 4 * n * m * d,          # K, V projections on n rows
])
def test_ex2_refuses_typical_wrong_answers(wrong):
    assert not ex2.check(wrong)


def by_rule(batch_size, num_heads, num_lengths):
    return batch_size == 1 or num_heads == 1 or num_lengths == 1


def test_ex3_the_rule_holds_for_every_batch_not_only_the_checks():
    for batch_size, num_heads in itertools.product(range(1, 5), range(1, 5)):
        for lens in itertools.product(range(4), repeat=batch_size):
            valid_lens = torch.tensor(lens)
            same = torch.equal(valid_lens.repeat(num_heads),
                               torch.repeat_interleave(valid_lens, num_heads))
            assert same == by_rule(batch_size, num_heads, len(set(lens)))
    assert ex3.check(by_rule)


@pytest.mark.parametrize("wrong", [
    lambda b, h, k: b == 1,                     # one sequence only
    lambda b, h, k: h == 1,                     # one head only
    lambda b, h, k: k == 1,                     # equal lengths only
    lambda b, h, k: True,
    lambda b, h, k: int(by_rule(b, h, k)),      # an int is not True/False
])
def test_ex3_refuses_typical_wrong_answers(wrong):
    assert not ex3.check(wrong)
