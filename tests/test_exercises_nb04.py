"""The checks of notebook 04's exercises, against answers computed here by another route.

The right answers come from torch itself (a triangular mask, the module's own parameters
and errors, a forward pass), never from the constants in d2lutil.exercises.nb04.
"""

import numpy as np
import pytest
import torch

from d2lutil import MultiHeadAttention
from d2lutil.exercises.nb04 import ex1, ex2, ex3


@pytest.fixture(scope="module")
def causal():
    """valid_lens from a lower-triangular mask, and its number of allowed weights."""
    allowed = torch.tril(torch.ones(5, 5, dtype=torch.bool))  # query t sees keys <= t
    valid_lens = allowed.sum(dim=-1).expand(3, 5)
    return valid_lens, int(allowed.sum())


def test_ex1_accepts_the_mask_answer_in_several_forms(causal):
    valid_lens, count = causal
    assert ex1.check(valid_lens, count)
    assert ex1.check(valid_lens.tolist(), float(count))
    assert ex1.check(valid_lens.numpy().astype(np.float32), np.int64(count))
    assert ex1.check(tuple(tuple(row) for row in valid_lens.tolist()), torch.tensor(count))


@pytest.mark.parametrize("wrong", ["from zero", "reversed", "one row", "all", "no diagonal",
                                   "batch"])
def test_ex1_refuses_typical_wrong_answers(causal, wrong):
    valid_lens, count = causal
    answers = {
        "from zero": (valid_lens - 1, count),
        "reversed": (valid_lens.flip(-1), count),
        "one row": (valid_lens[0], count),
        "all": (valid_lens, 25),
        "no diagonal": (valid_lens, count - 5),
        "batch": (valid_lens, 3 * count),
    }[wrong]
    assert not ex1.check(*answers)


@pytest.fixture(scope="module")
def explicit():
    """The module's parameter count and what keys of width 100 raise, by running it."""
    torch.manual_seed(0)
    attention = MultiHeadAttention(100, 5, query_size=100, key_size=64, value_size=64)
    exist = not any(isinstance(p, torch.nn.parameter.UninitializedParameter)
                    for p in attention.parameters())
    count = sum(p.numel() for p in attention.parameters())
    X = torch.randn(2, 4, 100)
    try:
        attention(X, X, X)
    except Exception as error:  # noqa: BLE001 - whatever it is, it is the answer
        raised = error
    return exist, count, raised


def test_ex2_accepts_what_the_module_does(explicit):
    exist, count, raised = explicit
    assert ex2.check(exist, count, raised)
    assert ex2.check("yes", float(count), type(raised))
    assert ex2.check(np.bool_(exist), torch.tensor(count), type(raised).__name__)


@pytest.mark.parametrize("wrong", ["lazy", "biases", "all 100", "type error", "nothing"])
def test_ex2_refuses_typical_wrong_answers(explicit, wrong):
    exist, count, raised = explicit
    answers = {
        "lazy": (False, count, raised),
        "biases": (exist, count + 4 * 100, raised),
        "all 100": (exist, 4 * 100 * 100, raised),
        "type error": (exist, count, TypeError),
        "nothing": (exist, count, None),
    }[wrong]
    assert not ex2.check(*answers)


def test_ex3_accepts_every_route_to_the_empty_output():
    def bias(attention):
        return attention.W_o.bias

    def output_of_zero(attention):
        return attention.W_o(torch.zeros(attention.num_hiddens))

    def run_it(attention):
        d = attention.num_hiddens
        queries, keys = torch.randn(2, 3, d), torch.randn(2, 4, d)
        return attention(queries, keys, keys, torch.tensor([0, 4]))[0, 1]

    for answer in (bias, output_of_zero, run_it, lambda attention: attention.W_o.bias[None]):
        assert ex3.check(answer)


def test_ex3_leaves_the_global_random_state_alone():
    torch.manual_seed(3)
    expected = torch.rand(2)
    torch.manual_seed(3)
    ex3.check(lambda attention: attention.W_o.bias)
    assert torch.equal(torch.rand(2), expected)


@pytest.mark.parametrize("wrong", [
    lambda attention: torch.zeros(attention.num_hiddens),   # forgets the bias
    lambda attention: attention.W_v.bias,                   # the wrong bias
    lambda attention: 2 * attention.W_o.bias,
    lambda attention: attention.W_o.bias.expand(2, -1),     # two rows: wrong shape
    lambda attention: attention.W_o.weight,                 # not a vector
    lambda attention: attention.missing,                    # raises: reported
])
def test_ex3_refuses_typical_wrong_answers(wrong):
    assert not ex3.check(wrong)
