"""Notebook 04's exercises: what tests/test_exercises_declared.py cannot say.

Exercise 3 asks for a prediction: the check's modules refuse a forward pass, so running
the module is refused while any route that predicts passes. Its typical wrong answers.
"""

import pytest
import torch

from d2lutil.exercises.nb04 import ex3


def test_ex3_accepts_every_prediction():
    def output_of_zero(attention):
        return attention.W_o(torch.zeros(attention.num_hiddens))

    def the_bias(attention):
        return attention.W_o.bias.detach().numpy()

    for answer in (output_of_zero, the_bias):
        assert ex3.check(answer)


def test_ex3_refuses_a_forward_pass():
    def run_it(attention):
        d = attention.num_hiddens
        queries, keys = torch.randn(2, 3, d), torch.randn(2, 4, d)
        return attention(queries, keys, keys, torch.tensor([0, 4]))[0, 1]

    result = ex3.check_part(0, run_it)
    assert not result and "refuses a forward pass" in result.message


@pytest.mark.parametrize("wrong", [
    lambda attention: attention.W_v.bias,                   # the wrong bias
    lambda attention: 2 * attention.W_o.bias,
    lambda attention: attention.W_o.bias.expand(2, -1),     # two rows: wrong shape
    lambda attention: attention.W_o.weight,                 # not a vector
])
def test_ex3_refuses_typical_wrong_answers(wrong):
    assert not ex3.check(wrong)
