"""d2lutil.exercises.modules: a class the student writes, checked against the reference with
the same weights, in the student's kernel or from the results the grader brings back (that
run: course/tests/test_codec.py), on the student-like classes of tests/student_layouts.py."""

import math

import pytest
import torch
from torch import nn

from d2lutil import MultiHeadAttention, behaviour
from d2lutil.exercises import CallResults, Exercise, Raised
from d2lutil.exercises.modules import (
    Case,
    _behaviour_functions,
    implementation,
    refuse_behaviour_tests,
    refuse_delegation,
)
from student_layouts import Folded, HeadAxis, Loop

CASES = [Case(8, 2, 2, 3, 4, "sequence", 0), Case(8, 4, 1, 2, 5, "none", 1),
         Case(12, 3, 3, 4, 2, "query", 2), Case(4, 1, 2, 1, 3, "sequence", 3)]


class Delegating(nn.Module):
    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False):
        super().__init__()
        self.inner = MultiHeadAttention(num_hiddens, num_heads, dropout, bias)

    def forward(self, queries, keys, values, valid_lens=None):
        return self.inner(queries, keys, values, valid_lens)


class Torchs(HeadAxis):
    def forward(self, queries, keys, values, valid_lens=None):
        attention = nn.MultiheadAttention(queries.shape[-1], self.num_heads, bias=False,
                                          batch_first=True)
        return attention(*self.project(queries, keys, values))[0]


class Starter(nn.Module):  # the notebook's starter cell, untouched
    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False):
        super().__init__()
        self.num_heads = num_heads

    def forward(self, queries, keys, values, valid_lens=None):
        ...


CHECK = implementation(MultiHeadAttention, CASES)
TRIED = len(CHECK.cases())  # CASES and 4 more: 2 with bias, 2 with dropout


def wrong_message(answer, check=CHECK):
    with pytest.raises(Exception) as caught:
        check(answer)
    return str(caught.value)


@pytest.mark.parametrize("cls", [HeadAxis, Folded, Loop])
def test_correct_classes_of_any_layout_pass(cls):
    CHECK(cls)


def test_bias_and_dropout_cases_are_added_to_those_given():
    assert [(c.bias, c.dropout) for c in CHECK.cases()[4:]] == [(True, 0), (True, 0),
                                                                 (False, .5), (False, .5)]


def test_a_bug_names_the_case_and_the_first_stage_that_departs():
    scaled = type("Scaled", (HeadAxis,), {"scale": lambda self, p: math.sqrt(p * 2)})
    message = wrong_message(scaled)
    assert message.startswith("wrong for num_hiddens = 8, num_heads = 2, a batch of 2, 3 "
                              "queries and 4 keys, valid_lens per sequence: your class first "
                              "departs at the step between the projections and W_o, by up to ")
    assert message.endswith(f". It is wrong in {TRIED} of the {TRIED} cases tried.")


def test_a_diagnosis_is_added_when_the_class_is_at_hand():
    check = implementation(MultiHeadAttention, CASES, diagnose=lambda cls: "divides by 4")
    assert wrong_message(type("S", (HeadAxis,), {"scale": lambda s, p: 1}), check).endswith(
        "\ndivides by 4")


@pytest.mark.parametrize("cls", [Delegating, Torchs])
def test_delegating_to_a_library_attention_is_refused(cls):
    assert "may not call d2lutil's, d2l's or torch's" in wrong_message(cls)


def test_the_guards_refuse_however_a_function_was_bound_and_put_everything_back():
    bound = (MultiHeadAttention.forward, nn.MultiheadAttention.__init__,
             behaviour.check_padding_ignored, *_behaviour_functions())
    codes = [function.__code__ for function in bound]
    with refuse_delegation(), pytest.raises(RuntimeError, match="may not call"):
        bound[0](MultiHeadAttention(4, 2), *[torch.ones(1, 2, 4)] * 3)
    with refuse_behaviour_tests(), pytest.raises(RuntimeError, match="not available"):
        bound[2](MultiHeadAttention)
    assert [function.__code__ for function in bound] == codes
    behaviour.check_padding_ignored(MultiHeadAttention)


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
    CHECK(Loop)
    assert torch.equal(torch.get_rng_state(), before)


def test_results_brought_back_are_judged_here():
    results = CallResults(CHECK.run(HeadAxis, case) for case in CHECK.cases())
    CHECK(results)
    results[2] = dict(results[2], output=results[2]["output"] + 1e-2)
    assert "W_o or after it" in wrong_message(results)
    raised = CallResults([Raised("ValueError", "no")] * TRIED)
    assert "your class raised ValueError (no) for " in wrong_message(raised)
    assert f"results of {TRIED} cases" in wrong_message(CallResults([]))


def test_a_starter_left_as_it_is_is_not_answered_here_and_from_the_grader(capsys):
    class ReturnsDots(Starter):
        def forward(self, queries, keys, values, valid_lens=None):
            return ...

    ex = Exercise(2, [("your class", CHECK)], hints=["h"], solution="s")
    assert not ex.check(ReturnsDots)
    assert "not answered yet" in capsys.readouterr().out
    brought_back = CallResults(CHECK.run(ReturnsDots, case) for case in CHECK.cases())
    assert ex.check_part(0, brought_back).message == "not answered yet"


def test_the_checks_own_complaint_comes_back_as_it_is():
    results = CallResults([Raised("Wrong", "your module has no projection W_q with a weight")]
                          * TRIED)
    message = wrong_message(results)
    assert message.startswith("your module has no projection W_q with a weight, for ")
