"""Notebook 03's exercises: what tests/exercises/test_exercises_declared.py cannot say.

Every variant of exercise 1 (issue 35): the count of parameters, computed here with
``cost.count_parameters`` on the model itself (as notebooks/solutions/03_solutions.ipynb
does), is ``ANSWERS``: tests/exercises/test_exercise_variants.py checks that it passes
that variant's check and the book's fails every student's variant, and each variant's
declared mistakes. Here: its hints and messages name its d but not its count.

Exercise 2's result checker names the self-attention formula, a slip only for cases with
m != n, which the generic tests do not try. The typical wrong functions of exercises 2
and 3, which the checks' cases must tell from the right ones; exercise 3's rule held
against every batch it describes; and the hidden cases of both, judged only at grading:
counted with ``cost.count_flops`` (exercise 2) and held against random batches of their
sizes (exercise 3).
"""

import itertools
import json

import pytest
import torch

import d2lutil
from d2lutil import cost
from d2lutil.exercises import Wrong
from d2lutil.exercises.nb03 import ex1, ex2, ex3


def attention(d, num_heads, bias=False):
    return d2lutil.MultiHeadAttention(d, num_heads, bias=bias, query_size=d, key_size=d,
                                      value_size=d)


# --- exercise 1's variants ---------------------------------------------------------------

def counted(d):
    """The count with bias=True at width d, and whether it moves with h."""
    counts = {cost.count_parameters(attention(d, h, bias=True)) for h in (1, 8)}
    return [counts.pop(), bool(counts)]


BOOK = counted(256)
ANSWERS = {ex1: counted}  # see test_exercise_variants.py


def test_ex1_variants_are_json_and_the_book_comes_first():
    assert ex1.variants[0] == {"d": 256} and BOOK == [263168, False]
    assert json.loads(json.dumps(ex1.variants)) == ex1.variants
    assert len(ex1.variants) == 5 and ex1.open_book.keys() == {1}
    assert all(values["d"] % 8 == 0 for values in ex1.variants)  # h = 1, 2, 4, 8 divide d


@pytest.mark.parametrize("i", range(5))
def test_ex1_hints_and_messages_name_the_width_not_the_count(i):
    exercise = ex1.for_variant(i)
    count = counted(**ex1.variants[i])[0]
    said = " ".join(exercise.hints) + " ".join(m for _, m in exercise.parts[0][1].mistakes)
    assert str(count) not in said and f"{count:,}" not in said
    assert f"MultiHeadAttention({ex1.variants[i]['d']}, h" in exercise.hints[1]


# --- exercise 2 --------------------------------------------------------------------------

def self_attention(n, m, d, h):
    return 8 * n * d * d + 4 * n * n * d


def test_ex2_names_the_self_attention_formula():
    result = ex2.check_part(0, self_attention)
    assert not result and "that is the self-attention count" in result.message
    assert result.message.endswith("wrong in 5 of 6 cases tried")  # right when m == n


def test_ex2_result_checker_is_a_plain_number_with_plain_mistakes():
    """What the student edition seals: a ``number`` of an int, int slips."""
    checker = ex2.parts[0][1]
    for case in checker.cases() + list(checker.hidden):
        result = checker.result_checker(checker.expected(*case))
        assert result.kind == "number" and type(result.expected) is int
        assert all(type(value) is int for value, _ in result.mistakes)


def test_ex2_hidden_cases_are_new_shapes_counted_by_flop_counter():
    checker = ex2.parts[0][1]
    public, hidden = checker.cases(), list(checker.hidden)
    assert 4 <= len(hidden) <= 8 and not set(hidden) & set(public)
    torch.manual_seed(0)
    for n, m, d, h in hidden:
        assert d % h == 0
        queries, keys = torch.randn(1, n, d), torch.randn(1, m, d)
        flops = cost.count_flops(attention(d, h), queries, keys, keys).total
        assert flops == checker.expected(n, m, d, h)
    checker.graded()(lambda n, m, d, h: 4 * (n + m) * d ** 2 + 4 * n * m * d)

    def public_only(n, m, d, h):  # right on the public cases, wrong on the hidden ones
        right = 4 * (n + m) * d ** 2 + 4 * n * m * d
        return right if (n, m, d, h) in public else right + 1

    assert ex2.check(public_only)
    with pytest.raises(Wrong, match=f"wrong in {len(hidden)} of"):
        checker.graded()(public_only)


# --- exercise 3 --------------------------------------------------------------------------

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
    ex3.parts[0][1].graded()(by_rule)


WRONG = {  # typical wrong functions: see test_exercise_variants.py
    ex2: [self_attention,                                              # ignores m
          lambda n, m, d, h: 2 * (n + m) * d * d + 2 * n * m * d,      # a multiply-add as 1
          lambda n, m, d, h: 4 * (n + m) * d * d + 4 * n * m * d * h,  # h counted twice
          lambda n, m, d, h: 8 * n * d * d + 4 * n * m * d],           # K, V on n rows
    ex3: [lambda b, h, k: b == 1,                     # one sequence only
          lambda b, h, k: h == 1,                     # one head only
          lambda b, h, k: k == 1,                     # equal lengths only
          lambda b, h, k: True,
          lambda b, h, k: int(by_rule(b, h, k))],     # an int is not True/False
}


def test_ex3_hidden_cases_are_larger_batches_and_the_rule_holds_on_them():
    checker = ex3.parts[0][1]
    public, hidden = checker.cases(), list(checker.hidden)
    assert 4 <= len(hidden) <= 8 and not set(hidden) & set(public)
    assert all(max(b, h) > 4 and max(b, h) <= 8 and 1 <= k <= b for b, h, k in hidden)
    assert {by_rule(*case) for case in hidden} == {True, False}
    generator = torch.Generator().manual_seed(0)
    for batch_size, num_heads, num_lengths in hidden:
        assert checker.expected(batch_size, num_heads, num_lengths) == by_rule(
            batch_size, num_heads, num_lengths)
        for _ in range(20):  # random batches with exactly num_lengths different lengths
            lens = torch.cat([torch.arange(num_lengths), torch.randint(
                num_lengths, (batch_size - num_lengths,), generator=generator)])
            lens = lens[torch.randperm(batch_size, generator=generator)]
            same = torch.equal(lens.repeat(num_heads),
                               torch.repeat_interleave(lens, num_heads))
            assert same == by_rule(batch_size, num_heads, num_lengths)

    def small_batches_only(b, h, k):  # the rule where the public cases look, no further
        return by_rule(b, h, k) or (b > 4 or h > 4)

    assert ex3.check(small_batches_only)
    with pytest.raises(Wrong):
        checker.graded()(small_batches_only)
