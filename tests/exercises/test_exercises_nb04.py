"""Notebook 04's exercises: what tests/exercises/test_exercises_declared.py cannot say.

Exercises 1 and 2 have variants (issue 35): every variant's right answers, computed here
the way the solutions notebook computes the book's (masked_softmax on random scores, the
parameters of a MultiHeadAttention, the error it raises), are ``ANSWERS``:
tests/exercises/test_exercise_variants.py checks that they pass that variant's check, that
the book's fail every other variant on the parts that vary and pass on the open-book ones,
and that each variant's declared mistakes get their messages. Here: the typical mistakes
each variant's answers give, and what the hints quote.

Exercise 3 asks for a prediction: the check's modules (d2lutil.exercises.cases) refuse a
forward pass, so running the module is refused while any route that predicts passes. More
modules, of other sizes, are judged at grading only. Its typical wrong answers.
"""

import re

import pytest
import torch

from d2lutil import MultiHeadAttention, masked_softmax
from d2lutil.exercises import Wrong, cases
from d2lutil.exercises.nb04 import ex1, ex2, ex3

# --- exercises 1 and 2: every variant --------------------------------------------------------


def causal_answers(batch_size, T):
    """The causal valid_lens and the count of weights that may be non-zero, as the
    solutions notebook finds them (masked_softmax on random scores)."""
    valid_lens = torch.arange(1, T + 1).repeat(batch_size, 1)
    weights = masked_softmax(torch.randn(batch_size, T, T), valid_lens)
    assert torch.allclose(weights.sum(dim=-1), torch.ones(batch_size, T))
    return valid_lens, int((weights[0] > 0).sum())


def module_answers(num_hiddens, num_heads, query_size, key_size, value_size, bias=False):
    """Do the parameters exist before a call, how many, and what keys of width 100 raise."""
    attention = MultiHeadAttention(num_hiddens, num_heads, bias=bias, query_size=query_size,
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


def test_the_open_book_parts_have_the_same_answer_in_every_variant():
    assert sorted(ex1.open_book) == [] and sorted(ex2.open_book) == [0, 2]
    for values in ex2.variants:
        exist, _, raised = module_answers(**values)
        assert exist is True and raised is ValueError
        assert values["key_size"] != 100  # the question's keys of width 100 never fit


def test_ex1_recognises_each_variants_typical_mistakes():
    for i, values in enumerate(ex1.variants):
        b, T = values["batch_size"], values["T"]
        variant = ex1.for_variant(i)
        lens, count = causal_answers(b, T)
        for wrong, words in [(lens - 1, "sees one key"), (lens.flip(-1), "wrong way round")]:
            assert words in variant.check_part(0, wrong).message
        for wrong, words in [(count - T, "leaves out the diagonal"),
                             (T * T, "future keys"), (b * count, "whole batch")]:
            assert words in variant.check_part(1, wrong).message, (values, wrong)


def test_ex2_recognises_each_variants_typical_mistakes():
    for i, values in enumerate(ex2.variants):
        variant = ex2.for_variant(i)
        _, with_biases, _ = module_answers(**values, bias=True)
        assert "counts biases" in variant.check_part(1, with_biases).message
        d = values["num_hiddens"]
        assert "not right yet" in variant.check_part(1, 4 * d * d).message


def test_the_hints_quote_each_variants_values_but_not_its_answers():
    for i, values in enumerate(ex1.variants):
        hints = " ".join(ex1.built(i)[1])
        _, count = causal_answers(**values)
        assert f"repeat({values['batch_size']}, 1)" in hints and f"+ {values['T']}$" in hints
        assert not re.search(rf"(?<![\d.]){count}(?![\d.])", hints), (values, hints)
    for i, values in enumerate(ex2.variants):
        hints = " ".join(ex2.built(i)[1])
        _, count, _ = module_answers(**values)
        for width in ("query_size", "key_size", "value_size"):
            assert f" {values[width]} to {values['num_hiddens']}" in hints
        assert str(count) not in hints and f"{count:,}" not in hints


# --- exercise 3 ----------------------------------------------------------------------------

def test_ex3_accepts_every_prediction():
    def output_of_zero(attention):
        return attention.W_o(torch.zeros(attention.num_hiddens))

    def the_bias(attention):
        return attention.W_o.bias.detach().numpy()

    for answer in (output_of_zero, the_bias):
        assert ex3.check(answer)
        ex3.parts[0][1].graded()(answer)  # and on the hidden modules too


def test_ex3_refuses_a_forward_pass():
    def run_it(attention):
        d = attention.num_hiddens
        queries, keys = torch.randn(2, 3, d), torch.randn(2, 4, d)
        return attention(queries, keys, keys, torch.tensor([0, 4]))[0, 1]

    result = ex3.check_part(0, run_it)
    assert not result and "refuses a forward pass" in result.message


WRONG = {ex3: [  # typical wrong functions: see test_exercise_variants.py
    lambda attention: attention.W_v.bias,                   # the wrong bias
    lambda attention: 2 * attention.W_o.bias,
    lambda attention: attention.W_o.bias.expand(2, -1),     # two rows: wrong shape
    lambda attention: attention.W_o.weight,                 # not a vector
]}


def test_ex3_cases_are_public_builds_and_hidden_ones_are_other_sizes():
    checker = ex3.parts[0][1]
    public = [case[0].built_by for case in checker.cases()]
    assert public == [("refusing_attention", (16, 4, 0)), ("refusing_attention", (12, 3, 1))]
    graded = [case[0].built_by for case in checker.graded().cases()]
    hidden = graded[len(public):]
    assert graded[:len(public)] == public and 4 <= len(hidden) <= 8
    sizes = {args[:2] for _, args in public}
    assert all(args[:2] not in sizes for _, args in hidden)
    assert all(isinstance(case[0], cases.RefusingAttention)
               for case in checker.graded().cases())
    assert ex3.variants is None and sorted(ex3.open_book) == [0]


def test_ex3_a_prediction_right_only_on_the_public_sizes_fails_at_grading():
    def only_public(attention):
        if attention.built_by[1] in ((16, 4, 0), (12, 3, 1)):
            return attention.W_o.bias
        return torch.zeros(attention.num_hiddens)

    assert ex3.check(only_public)
    with pytest.raises(Wrong, match="wrong in 6 of 8 cases"):
        ex3.parts[0][1].graded()(only_public)


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
