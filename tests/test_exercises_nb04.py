"""Notebook 04's exercises: what tests/test_exercises_declared.py cannot say.

Routes to exercise 3's function that notebooks/solutions/04_solutions.ipynb does not
pass to the check, and its typical wrong ones.
"""

import pytest
import torch

from d2lutil.exercises.nb04 import ex3


def test_ex3_accepts_every_route_to_the_empty_output():
    def output_of_zero(attention):
        return attention.W_o(torch.zeros(attention.num_hiddens))

    def run_it(attention):
        d = attention.num_hiddens
        queries, keys = torch.randn(2, 3, d), torch.randn(2, 4, d)
        return attention(queries, keys, keys, torch.tensor([0, 4]))[0, 1]

    for answer in (output_of_zero, run_it):
        assert ex3.check(answer)


@pytest.mark.parametrize("wrong", [
    lambda attention: attention.W_v.bias,                   # the wrong bias
    lambda attention: 2 * attention.W_o.bias,
    lambda attention: attention.W_o.bias.expand(2, -1),     # two rows: wrong shape
    lambda attention: attention.W_o.weight,                 # not a vector
])
def test_ex3_refuses_typical_wrong_answers(wrong):
    assert not ex3.check(wrong)
