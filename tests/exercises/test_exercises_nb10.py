"""Notebook 10's class and test answers (ex2, ex3), whose checkers the generic tests cannot
read. ex2 (``modules.implementation``, tested on its own in test_exercise_modules.py):
every catalogue bug with the book's interface, run as a student's own copy would run, is
refused, naming a stage. ex3 (``modules.behaviour_test``): a test that crashes, the
starter's ``...`` and a test that calls the library's behaviour tests are refused, and the
check does not say which module is the bug. Three layouts that pass ex2, a bug it names,
a test that passes ex3 and tests that miss the bug are in
notebooks/solutions/10_solutions.ipynb; ex1's functions are covered by
tests/exercises/test_exercises_declared.py."""

import pytest

from d2lutil import MultiHeadAttention, behaviour
from d2lutil.bugs import CATALOGUE
from d2lutil.exercises import CallResults, Raised
from d2lutil.exercises.modules import _reference_weights, _run
from d2lutil.exercises.nb10 import ex2, ex3


@pytest.mark.parametrize("test, says", [
    (lambda make_module: 1 / 0, "fails 4 of the 4 correct modules"),
    (lambda make_module: None, "not answered yet"),
    (lambda make_module: ..., "not answered yet"),  # the starter's return ...
    (lambda make_module: behaviour.check_padding_ignored(make_module),  # hidden from it
     "fails 4 of the 4 correct modules")])
def test_ex3_refuses_tests_that_do_not_test(test, says, capsys):
    assert not ex3.check(test)
    assert says in capsys.readouterr().out


def test_ex3_takes_the_starters_dots_brought_back_as_not_answered():
    checker = ex3.parts[0][1]
    brought_back = [checker.run(lambda make_module: ..., case) for case in checker.cases()]
    assert ex3.check_part(0, CallResults(brought_back)).message == "not answered yet"
    kinds = {type(make(8, 2)) for (make,) in checker.cases()}  # which is the bug: hidden
    assert len(kinds) == 1 and len(checker.cases()) == 5


@pytest.mark.parametrize("name", [n for n in CATALOGUE if "causal" not in n])
def test_ex2_rejects_every_catalogue_bug_naming_a_stage(name):
    """The catalogue's bugs run the library's forward, which the check refuses in a
    student's kernel; here they are run without that guard, as a student's own copy of
    the bug would run, and judged from what they bring back."""
    results = []
    for case in ex2.parts[0][1].cases():
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
