"""Notebook 04's exercises: what tests/exercises/test_exercises_declared.py cannot say.

``ANSWERS``: every variant's right answers to exercises 1 and 2, computed as the solutions
notebook computes the book's, for tests/exercises/test_exercise_variants.py. Here: what the
hints quote; exercise 3's modules (d2lutil.exercises.cases), which refuse a forward pass,
and its hidden sizes, judged at grading only. What the check says to a forward pass and to
typical wrong predictions: notebooks/solutions/04_solutions.ipynb.
"""

import re

import pytest
import torch

from d2lutil import MultiHeadAttention, masked_softmax
from d2lutil.exercises import Wrong, cases
from d2lutil.exercises.nb04 import ex1, ex2, ex3


def causal_answers(batch_size, T):
    """The causal valid_lens and the count of weights that may be non-zero, as the
    solutions notebook finds them (masked_softmax on random scores)."""
    valid_lens = torch.arange(1, T + 1).repeat(batch_size, 1)
    weights = masked_softmax(torch.randn(batch_size, T, T), valid_lens)
    assert torch.allclose(weights.sum(dim=-1), torch.ones(batch_size, T))
    return valid_lens, int((weights[0] > 0).sum())


def module_answers(num_hiddens, num_heads, query_size, key_size, value_size):
    """Do the parameters exist before a call, how many, and what keys of width 100 raise."""
    attention = MultiHeadAttention(num_hiddens, num_heads, query_size=query_size,
                                   key_size=key_size, value_size=value_size)
    exist = not any(isinstance(p, torch.nn.parameter.UninitializedParameter)
                    for p in attention.parameters())
    count = sum(p.numel() for p in attention.parameters())
    try:
        attention(torch.randn(2, 3, query_size), torch.randn(2, 4, 100),
                  torch.randn(2, 4, value_size))
    except Exception as error:  # noqa: BLE001 - which one is the answer
        raised = type(error)
    else:
        raised = None
    return exist, count, raised


ANSWERS = {ex1: causal_answers, ex2: module_answers}  # see test_exercise_variants.py


def test_the_hints_quote_each_variants_values_but_not_its_answers():
    for i, values in enumerate(ex1.variants):
        hints = " ".join(ex1.built(i)[1])
        _, count = causal_answers(**values)
        assert f"{values['batch_size']} sequences of {values['T']} tokens" in hints
        # the last hint stops short of the answer: no expression that builds the lengths
        assert not re.search(r"arange\(.*\)\.repeat|repeat\(\d+, 1\)", hints), hints
        assert not re.search(rf"(?<![\d.]){count}(?![\d.])", hints), (values, hints)
    for i, values in enumerate(ex2.variants):
        hints = " ".join(ex2.built(i)[1])
        _, count, _ = module_answers(**values)
        for width in ("query_size", "key_size", "value_size"):
            assert f" {values[width]} to {values['num_hiddens']}" in hints
        assert str(count) not in hints and f"{count:,}" not in hints


def test_ex3_public_cases_are_the_books_builds_and_hidden_ones_other_sizes():
    checker = ex3.parts[0][1]
    public = [case[0].built_by for case in checker.cases()]
    assert public == [("refusing_attention", (16, 4, 0)), ("refusing_attention", (12, 3, 1))]
    graded = [case[0] for case in checker.graded().cases()]
    hidden = [module.built_by for module in graded[len(public):]]
    assert [m.built_by for m in graded[:len(public)]] == public and 4 <= len(hidden) <= 8
    sizes = {args[:2] for _, args in public}
    assert all(args[:2] not in sizes for _, args in hidden)
    assert all(isinstance(module, cases.RefusingAttention) for module in graded)

    def only_public(attention):  # a prediction right on the public sizes only
        if attention.built_by[1] in ((16, 4, 0), (12, 3, 1)):
            return attention.W_o.bias
        return torch.zeros(attention.num_hiddens)

    assert ex3.check(only_public)
    with pytest.raises(Wrong, match="wrong in 6 of 8 cases"):
        checker.graded()(only_public)
    checker.graded()(lambda attention: attention.W_o(torch.zeros(attention.num_hiddens)))


def test_refusing_attention_is_seeded_leaves_the_random_state_and_refuses():
    state = torch.get_rng_state()
    first, again = cases.refusing_attention(12, 3, 5), cases.refusing_attention(12, 3, 5)
    other = cases.refusing_attention(12, 3, 6)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(first.W_o.bias, again.W_o.bias)
    assert not torch.equal(first.W_o.bias, other.W_o.bias)
    assert first.built_by == ("refusing_attention", (12, 3, 5))
    assert first.W_q.bias is not None and first.W_k.in_features == 12
    with pytest.raises(RuntimeError, match="refuses a forward pass"):
        first(torch.randn(1, 2, 12), torch.randn(1, 2, 12), torch.randn(1, 2, 12))
