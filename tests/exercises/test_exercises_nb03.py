"""Notebook 03's exercises: what tests/exercises/test_exercises_declared.py cannot say.

``ANSWERS``: exercise 1's count for every variant, by ``cost.count_parameters`` on the model
(see tests/exercises/test_exercise_variants.py); its hints name d, not the count. Exercises
2 and 3 take functions: what the student edition seals of exercise 2's results, and the
hidden cases of both, judged only at grading, counted with ``cost.count_flops`` and held
against random batches. Their typical wrong functions and what the check says to them:
notebooks/solutions/03_solutions.ipynb.
"""

import pytest
import torch

import d2lutil
from d2lutil import cost
from d2lutil.exercises import Wrong
from d2lutil.exercises.nb03 import ex1, ex2, ex3


def attention(d, num_heads, bias=False):
    return d2lutil.MultiHeadAttention(d, num_heads, bias=bias, query_size=d, key_size=d,
                                      value_size=d)


def counted(d):
    """The count with bias=True at width d, and whether it moves with h."""
    counts = {cost.count_parameters(attention(d, h, bias=True)) for h in (1, 8)}
    return [counts.pop(), bool(counts)]


ANSWERS = {ex1: counted}  # see test_exercise_variants.py
# the library's count is exercise 2's answer: tests/exercises/test_exercises_understanding.py
LIBRARY_CALLS = {ex2: [lambda: lambda n, m, d, h: cost.attention_flops(n, d, m).total]}

@pytest.mark.parametrize("i", range(len(ex1.variants)))
def test_ex1_hints_name_the_width_not_the_count(i):
    count = counted(**ex1.variants[i])[0]
    hints = " ".join(ex1.built(i)[1])
    assert str(count) not in hints and f"{count:,}" not in hints
    assert f"MultiHeadAttention({ex1.variants[i]['d']}, h" in hints


def test_ex2_result_checker_is_a_plain_number_with_plain_mistakes():
    """What the student edition seals: a ``number`` of an int, int slips."""
    checker = ex2.parts[0][1]
    for case in checker.cases() + list(checker.hidden):
        result = checker.result_checker(checker.expected(*case))
        assert result.kind == "number" and type(result.expected) is int
        assert all(type(value) is int for value, _ in result.mistakes)


def by_rule(batch_size, num_heads, num_lengths):
    return batch_size == 1 or num_heads == 1 or num_lengths == 1


def flops(n, m, d, h):
    return 4 * (n + m) * d ** 2 + 4 * n * m * d


@pytest.mark.parametrize("exercise, right, wrong", [
    (ex2, flops, lambda n, m, d, h: flops(n, m, d, h) + 1),
    (ex3, by_rule, lambda b, h, k: not by_rule(b, h, k))])
def test_hidden_cases_are_new_and_judged_only_at_grading(exercise, right, wrong):
    checker = exercise.parts[0][1]
    public, hidden = checker.cases(), list(checker.hidden)
    assert 4 <= len(hidden) <= 8 and not set(hidden) & set(public)
    checker.graded()(right)

    def public_only(*case):  # right on the public cases, wrong on the hidden ones
        return right(*case) if case in public else wrong(*case)

    assert exercise.check(public_only)
    with pytest.raises(Wrong, match=f"wrong in {len(hidden)} of"):
        checker.graded()(public_only)


def test_ex2_hidden_cases_are_counted_by_the_flop_counter():
    torch.manual_seed(0)
    for n, m, d, h in ex2.parts[0][1].hidden:
        assert d % h == 0
        queries, keys = torch.randn(1, n, d), torch.randn(1, m, d)
        assert cost.count_flops(attention(d, h), queries, keys, keys).total == flops(
            n, m, d, h)


def test_ex3_hidden_cases_hold_the_rule_on_random_batches_of_their_sizes():
    hidden = list(ex3.parts[0][1].hidden)
    assert all(max(b, h) > 4 and max(b, h) <= 8 and 1 <= k <= b for b, h, k in hidden)
    assert {by_rule(*case) for case in hidden} == {True, False}
    generator = torch.Generator().manual_seed(0)
    for batch_size, num_heads, num_lengths in hidden:
        for _ in range(20):  # random batches with exactly num_lengths different lengths
            lens = torch.cat([torch.arange(num_lengths), torch.randint(
                num_lengths, (batch_size - num_lengths,), generator=generator)])
            lens = lens[torch.randperm(batch_size, generator=generator)]
            same = torch.equal(lens.repeat(num_heads),
                               torch.repeat_interleave(lens, num_heads))
            assert same == by_rule(batch_size, num_heads, num_lengths)
