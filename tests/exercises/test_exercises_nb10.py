"""Notebook 10's class and test answers (ex2, ex3), whose checkers the generic tests cannot
read: correct classes of three layouts pass ex2 and every catalogue bug with the book's
interface is refused, naming a stage; ex3 takes a test that fails the bug and passes every
correct module, and refuses tests that do not. ex1's functions are covered by
tests/exercises/test_exercises_declared.py."""

import pytest
import torch

from d2lutil import MultiHeadAttention
from d2lutil.bugs import CATALOGUE, HeadAxisAttention, LoopAttention, Reference
from d2lutil.exercises.nb10 import ex2, ex3


class Folded(MultiHeadAttention):
    """The book's layout, heads folded into the batch, by the library's steps but not by
    MultiHeadAttention's forward, which ex2 refuses."""

    def forward(self, queries, keys, values, valid_lens=None):
        Q, K, V = (self.transpose_qkv(W(X)) for W, X in (
            (self.W_q, queries), (self.W_k, keys), (self.W_v, values)))
        return self.W_o(self.transpose_output(self._attend(Q, K, V, valid_lens)))


class Bugged(Folded):  # repeat for repeat_interleave: a sequence gets another's lengths
    def forward(self, queries, keys, values, valid_lens=None):
        if valid_lens is not None and valid_lens.dim() == 1:
            mixed = valid_lens.repeat(self.num_heads)
            valid_lens = torch.stack([mixed[i * self.num_heads]
                                      for i in range(len(valid_lens))])
        return super().forward(queries, keys, values, valid_lens)


@pytest.mark.parametrize("cls", [Folded, HeadAxisAttention, LoopAttention])
def test_ex2_accepts_three_layouts(cls):
    assert ex2.check(cls)


def test_ex2_names_the_stage_of_a_bug_in_a_class_of_the_students_own(capsys):
    assert not ex2.check(Bugged)
    out = " ".join(capsys.readouterr().out.split())
    assert "first departs at between the projections and W_o" in out
    assert "The stage comparison (d2lutil.stages) on your class" in out
    assert "first departure: mask" in out


def test_ex2_refuses_a_class_that_delegates_to_the_library(capsys):
    assert not ex2.check(Reference)  # it runs MultiHeadAttention's forward
    assert "may not call d2lutil's" in capsys.readouterr().out


def _test_with(batch_lens):
    def test(make_module):
        module = make_module(8, 2)
        torch.manual_seed(0)
        queries, keys, values = torch.randn(len(batch_lens), 4, 8), torch.randn(
            len(batch_lens), 5, 8), torch.randn(len(batch_lens), 5, 8)
        lens = torch.tensor(batch_lens)
        out = module(queries, keys, values, lens)
        for i, n in enumerate(batch_lens):
            keys[i, n:] += 1.0
            values[i, n:] -= 2.0
        assert torch.allclose(module(queries, keys, values, lens), out, atol=1e-5)
    return test


def test_ex3_accepts_a_test_that_separates_the_bug():
    assert ex3.check(_test_with([1, 5, 3]))


@pytest.mark.parametrize("test, says", [
    (_test_with([3, 3, 3]), "passes the module with the bug"),  # equal lengths
    (_test_with([2]), "passes the module with the bug"),  # one sequence
    (lambda make_module: 1 / 0, "fails 4 of the 4 correct modules"),
    (lambda make_module: None, "not answered yet")])
def test_ex3_refuses_tests_that_do_not(test, says, capsys):
    assert not ex3.check(test)
    assert says in capsys.readouterr().out


def test_ex3_hides_the_library_tests_and_which_module_is_the_bug(capsys):
    from d2lutil import behaviour

    def uses_the_library(make_module):
        behaviour.check_padding_ignored(make_module)

    assert not ex3.check(uses_the_library)
    assert "fails 4 of the 4 correct modules" in capsys.readouterr().out
    kinds = {type(make(8, 2)) for (make,) in ex3.parts[0][1].cases()}
    assert len(kinds) == 1 and len(ex3.parts[0][1].cases()) == 5


def test_every_catalogue_bug_with_the_books_interface_is_caught_by_the_stage_comparison():
    from d2lutil import stages

    for name, entry in CATALOGUE.items():
        if "causal" in name:
            continue
        found = stages.first_departure(entry.bug(8, 2))
        assert found.stage is not None, name


def test_ex3_takes_the_starters_return_dots_as_not_answered(capsys):
    def starter(make_module):
        return ...

    assert not ex3.check(starter)
    assert "not answered yet" in capsys.readouterr().out
    checker = ex3.parts[0][1]
    brought_back = [checker.run(starter, case) for case in checker.cases()]
    from d2lutil.exercises import CallResults
    assert ex3.check_part(0, CallResults(brought_back)).message == "not answered yet"


@pytest.mark.parametrize("name", [n for n in CATALOGUE if "causal" not in n])
def test_ex2_rejects_every_catalogue_bug_naming_a_stage(name):
    """The catalogue's bugs run the library's forward, which the check refuses in a
    student's kernel; here they are run without that guard, as a student's own copy of
    the bug would run, and judged from what they bring back."""
    from d2lutil.attention import MultiHeadAttention
    from d2lutil.exercises import CallResults, Raised
    from d2lutil.exercises.modules import _reference_weights, _run

    checker = ex2.parts[0][1]
    results = []
    for case in checker.cases():
        try:
            results.append(_run(CATALOGUE[name].bug, case,
                                _reference_weights(MultiHeadAttention, case)))
        except Exception as error:  # as the grader's runner records it
            results.append(Raised(type(error).__name__, str(error)))
    message = ex2.check_part(0, CallResults(results)).message
    assert message.startswith("not right yet: ")
    # keys_from_queries raises where valid_lens exceed the queries, and departs in the
    # projections elsewhere; the mask without a head axis raises for every batch of 3 and
    # is right for a batch of 1, so only its error can be named
    stage = {"keys_from_queries": "first departs at the projections",
             "mask_not_broadcast": "raised RuntimeError"}.get(
        name, "first departs at between the projections and W_o")
    assert stage in message, message
