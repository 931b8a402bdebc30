"""The checks of notebook 03's exercises, against answers computed here by another route.

The right answers come from torch's own ``nn.MultiheadAttention`` (parameters), from
``FlopCounterMode`` run on a module (FLOPs) and from the two expansions themselves, never
from the constants in d2lutil.exercises.nb03.
"""

import itertools

import numpy as np
import pytest
import torch

import d2lutil
from d2lutil import cost
from d2lutil.exercises.nb03 import ex1, ex2, ex3


@pytest.fixture(scope="module")
def torch_counts():
    """Parameters of torch.nn.MultiheadAttention(256, h, bias=True) for several h."""
    return {h: sum(p.numel() for p in torch.nn.MultiheadAttention(256, h, bias=True)
                   .parameters()) for h in (1, 2, 4, 8)}


def test_ex1_accepts_the_counts_of_torchs_module(torch_counts):
    depends = len(set(torch_counts.values())) > 1
    assert ex1.check(torch_counts[8], depends)
    assert ex1.check(float(torch_counts[1]), "no")
    assert ex1.check(torch.tensor(torch_counts[2]), np.bool_(depends))


@pytest.mark.parametrize("wrong", ["no biases", "one bias", "depends", "per head biases"])
def test_ex1_refuses_typical_wrong_answers(torch_counts, wrong):
    count = torch_counts[8]
    answers = {"no biases": (count - 4 * 256, False), "one bias": (count - 3 * 256, False),
               "depends": (count, True), "per head biases": (count + 4 * 256 * 7, False)}
    assert not ex1.check(*answers[wrong])


def counted_flops(n, m, d, h):
    """FLOPs of one cross-attention forward pass, counted by FlopCounterMode."""
    model = d2lutil.MultiHeadAttention(d, h, query_size=d, key_size=d, value_size=d)
    queries, keys = torch.randn(1, n, d), torch.randn(1, m, d)
    return cost.count_flops(model, queries, keys, keys).total


def test_ex2_accepts_a_counting_function_and_closed_forms():
    assert ex2.check(counted_flops)
    assert ex2.check(lambda n, m, d, h: 4 * d * (d * (n + m) + n * m))
    assert ex2.check(lambda n, m, d, h: float(2 * (2 * n * d * d + 2 * m * d * d)
                                              + h * 2 * (2 * n * m * (d // h))))


@pytest.mark.parametrize("wrong", [
    lambda n, m, d, h: 8 * n * d * d + 4 * n * n * d,          # self-attention: ignores m
    lambda n, m, d, h: 2 * (n + m) * d * d + 2 * n * m * d,    # a multiply-add as 1 FLOP
    lambda n, m, d, h: 4 * (n + m) * d * d + 4 * n * m * d * h,  # h counted twice
    lambda n, m, d, h: 8 * n * d * d + 4 * n * m * d,          # K, V projections on n rows
    lambda n, m, d, h: ...,                                    # not answered
])
def test_ex2_refuses_typical_wrong_answers(wrong):
    assert not ex2.check(wrong)


def test_ex2_names_the_failing_case_not_the_answer(capsys):
    ex2.check(lambda n, m, d, h: 8 * n * d * d + 4 * n * n * d)
    out = capsys.readouterr().out
    assert "wrong for (n, m, d, h) = (4, 9, 64, 1)" in out
    assert str(counted_flops(4, 9, 64, 1)) not in out


def by_rule(valid_lens, num_heads):
    lens = valid_lens.tolist()
    return len(lens) == 1 or num_heads == 1 or len(set(lens)) == 1


def by_trying(valid_lens, num_heads):
    return torch.equal(valid_lens.repeat(num_heads), valid_lens.repeat_interleave(num_heads))


def test_ex3_rule_and_trial_agree_here_too():
    # The two routes of the tests agree on a wider range than the check tries.
    for batch_size, num_heads in itertools.product((1, 2, 4), (1, 2, 5)):
        for lens in itertools.product((0, 2, 5), repeat=batch_size):
            valid_lens = torch.tensor(lens)
            assert by_rule(valid_lens, num_heads) == by_trying(valid_lens, num_heads)


def test_ex3_accepts_the_rule_and_the_trial():
    assert ex3.check(by_rule)
    assert ex3.check(by_trying)
    assert ex3.check(lambda v, h: torch.tensor(by_rule(v, h)))


@pytest.mark.parametrize("wrong", [
    lambda v, h: len(v) == 1,                   # one sequence only
    lambda v, h: h == 1,                        # one head only
    lambda v, h: len(set(v.tolist())) == 1,     # equal lengths only
    lambda v, h: True,
    lambda v, h: not by_rule(v, h),
    lambda v, h: int(by_rule(v, h)),            # an int is not True/False
])
def test_ex3_refuses_typical_wrong_answers(wrong):
    assert not ex3.check(wrong)
