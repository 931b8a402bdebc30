"""d2lutil.exercises.modules: a class the student writes, checked against the reference with
the same weights, in the student's kernel or from the results the grader brings back (that
run: course/tests/test_codec.py)."""

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from d2lutil import MultiHeadAttention
from d2lutil.bugs import HeadAxisAttention, LoopAttention, ScaleByNumHiddens
from d2lutil.exercises import CallResults, Exercise, Raised
from d2lutil.exercises.modules import Case, implementation, refuse_delegation

CASES = [Case(8, 2, 2, 3, 4, "sequence", 0), Case(8, 4, 1, 2, 5, "none", 1),
         Case(12, 3, 3, 4, 2, "query", 2), Case(4, 1, 2, 1, 3, "sequence", 3)]


class SDPAHeads(HeadAxisAttention):
    """A correct class whose heads go through F.scaled_dot_product_attention (allowed)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fused = True


class ScaledByWidth(HeadAxisAttention):  # the scores divided by sqrt(d), not sqrt(d / h)
    score_scale = ScaleByNumHiddens.score_scale


class NoTranspose(HeadAxisAttention):  # heads split by a reshape alone: positions mixed
    def split(self, X):
        return X.reshape(X.shape[0], self.num_heads, X.shape[1], -1)


class Delegating(nn.Module):
    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False):
        super().__init__()
        self.inner = MultiHeadAttention(num_hiddens, num_heads, dropout, bias)
        self.W_q, self.W_k, self.W_v, self.W_o = (
            self.inner.W_q, self.inner.W_k, self.inner.W_v, self.inner.W_o)

    def forward(self, queries, keys, values, valid_lens=None):
        return self.inner(queries, keys, values, valid_lens)


class Torchs(HeadAxisAttention):
    def forward(self, queries, keys, values, valid_lens=None):
        attention = nn.MultiheadAttention(queries.shape[-1], self.num_heads, bias=False,
                                          batch_first=True)
        return attention(self.W_q(queries), self.W_k(keys), self.W_v(values))[0]


class Starter(nn.Module):  # the notebook's starter cell, untouched
    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False):
        super().__init__()

    def forward(self, queries, keys, values, valid_lens=None):
        ...


CHECK = implementation(MultiHeadAttention, CASES)


def wrong_message(answer, check=CHECK):
    with pytest.raises(Exception) as caught:
        check(answer)
    return str(caught.value)


@pytest.mark.parametrize("cls", [HeadAxisAttention, LoopAttention, SDPAHeads])
def test_correct_classes_of_any_layout_pass(cls):
    CHECK(cls)


@pytest.mark.parametrize("cls, stage", [
    (ScaledByWidth, "between the projections and W_o"),
    (NoTranspose, "between the projections and W_o")])
def test_a_bug_names_the_case_and_the_first_stage_that_departs(cls, stage):
    message = wrong_message(cls)
    assert message.startswith("wrong for num_hiddens = 8, num_heads = 2")
    assert stage in message and "of 4 cases tried" in message


def test_a_diagnosis_is_added_when_the_class_is_at_hand():
    check = implementation(MultiHeadAttention, CASES, diagnose=lambda cls: "divides by 4")
    assert wrong_message(ScaledByWidth, check).endswith("\ndivides by 4")


@pytest.mark.parametrize("cls", [Delegating, Torchs])
def test_delegating_to_a_library_attention_is_refused(cls):
    assert "may not call d2lutil's, d2l's or torch's" in wrong_message(cls)


def test_the_guard_puts_everything_back():
    before = (MultiHeadAttention.forward, nn.MultiheadAttention.forward,
              F.multi_head_attention_forward)
    with refuse_delegation(), pytest.raises(RuntimeError, match="may not call"):
        MultiHeadAttention(4, 2)(torch.ones(1, 2, 4), torch.ones(1, 2, 4), torch.ones(1, 2, 4))
    assert before == (MultiHeadAttention.forward, nn.MultiheadAttention.forward,
                      F.multi_head_attention_forward)


def test_the_starter_is_not_answered_and_other_things_are_named(capsys):
    ex = Exercise(2, [("your class", CHECK)], hints=["h"], solution="s")
    assert not ex.check(Starter)
    assert "not answered yet" in capsys.readouterr().out
    assert "expected your class" in wrong_message(lambda *a: None)
    assert "no projection W_q" in wrong_message(type("Bare", (Starter,), {
        "forward": lambda self, q, k, v, valid_lens=None: q}))


def test_checking_leaves_the_random_state_alone():
    torch.manual_seed(7)
    before = torch.get_rng_state()
    CHECK(HeadAxisAttention)
    assert torch.equal(torch.get_rng_state(), before)


def test_results_brought_back_are_judged_here():
    results = CallResults(CHECK.run(HeadAxisAttention, case) for case in CASES)
    CHECK(results)
    results[2] = dict(results[2], output=results[2]["output"] + 1e-2)
    assert "W_o or after it" in wrong_message(results)
    assert "raised ValueError (no)" in wrong_message(CallResults([Raised("ValueError", "no")] * 4))
    assert "results of 4 cases" in wrong_message(CallResults([]))


def test_a_starter_left_as_it_is_is_not_answered_here_and_from_the_grader(capsys):
    class ReturnsDots(Starter):
        def forward(self, queries, keys, values, valid_lens=None):
            return ...

    ex = Exercise(2, [("your class", CHECK)], hints=["h"], solution="s")
    assert not ex.check(ReturnsDots)
    assert "not answered yet" in capsys.readouterr().out
    brought_back = CallResults(CHECK.run(ReturnsDots, case) for case in CASES)
    assert ex.check_part(0, brought_back).message == "not answered yet"


def test_the_checks_own_complaint_comes_back_as_it_is():
    results = CallResults([Raised("Wrong", "your module has no projection W_q with a weight")]
                          * len(CASES))
    message = wrong_message(results)
    assert message.startswith("your module has no projection W_q with a weight, for ")
