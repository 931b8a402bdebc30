"""Notebook 10's class and test answers (ex2, ex3), whose checkers the generic tests cannot
read, against the wrong answers a grader would try. ex2 (``modules.implementation``, its
mechanism in test_exercise_modules.py, whose student-like classes serve here): correct
classes of three layouts pass; a mutant of every step, every catalogue bug, a class that
takes its attention from d2lutil, d2l or torch (a subclass, a copied method, an instance, a
function bound before), dropout never applied or applied in eval, and bias ignored are
refused; a student's variant asks for one layout and a causal mask, and a right class in
another layout or alignment is refused, saying which. ex3 (``modules.behaviour_test``):
tests that read names, reprs or types, that call the library's behaviour tests however
bound, or that crash are refused, the crash shown.
The worked answers are in notebooks/solutions/10_solutions.ipynb; ex1's functions are
covered by tests/exercises/test_exercises_declared.py."""

import copy
import math

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from d2lutil import MultiHeadAttention, attention, behaviour, bugs
from d2lutil.behaviour import check_padding_ignored as bound_before
from d2lutil.exercises import CallResults, Raised, public
from d2lutil.exercises.answers import Wrong
from d2lutil.exercises.modules import _reference_weights, _run
from d2lutil.exercises.nb10 import ex2, ex3
from student_layouts import Folded, HeadAxis, Loop

DOT = attention.DotProductAttention.forward  # bound before the check
D2L = type("MultiHeadAttention", (nn.Module,), {"__module__": "d2l.torch"})  # d2l's, by name


LAYOUT_CLASSES = {"any": Folded, "folded": Folded, "head axis": HeadAxis,
                  "loop over heads": Loop}


def student_class(layout, causal, **sizes):
    """A right answer to a variant: the student-like class of its layout, masking the future
    as it asks (tests/student_layouts.py, not the library's causal_lens)."""
    return type("Mine", (LAYOUT_CLASSES[layout],), {"causal": causal})


ANSWERS = {ex2: lambda **values: (student_class(**values),)}


@pytest.mark.parametrize("cls", [Folded, HeadAxis, Loop])
def test_ex2_passes_correct_classes_of_three_layouts(cls):
    assert ex2.check_part(0, cls)


@pytest.mark.parametrize("i", range(1, len(ex2.variants)))
def test_ex2_refuses_a_right_class_in_another_layout_or_alignment_saying_which(i):
    values = ex2.variants[i]
    variant = ex2.for_variant(i)
    for layout in LAYOUT_CLASSES:
        if layout not in ("any", values["layout"]):
            message = variant.check_part(0, student_class(layout, values["causal"])).message
            assert "not in the layout your version asks for" in message, message
    for causal in public.CAUSAL:
        if causal != values["causal"]:
            message = variant.check_part(0, student_class(values["layout"], causal)).message
            assert public.causal_slip(causal, values["causal"]) in message, message


def test_ex2_variants_keep_a_key_for_every_query_and_judge_the_graders_way():
    for i, values in enumerate(ex2.variants):
        checker = ex2.for_variant(i).parts[0][1]
        cases = checker.graded().cases()
        assert cases[0][:2] == (values["num_hiddens"], values["num_heads"])
        if values["causal"] == "bottom-right":  # query 0 sees key m - n, so m >= n
            assert all(case.num_queries <= case.num_keys for case in cases)
    checker = ex2.for_variant(9).parts[0][1]  # a loop over heads, top-left
    brought_back = [checker.run(student_class("head axis", "top-left"), case)
                    for case in checker.cases()]
    message = ex2.for_variant(9).check_part(0, CallResults(brought_back)).message
    assert "its softmax got scores of shape (2, 3, 3, 5) (1 call)" in message, message
    with pytest.raises(ValueError, match="layout must be 'any' or one of"):
        public.class_checker(layout="rows")
    with pytest.raises(ValueError, match="causal must be one of"):
        public.class_checker(causal=True)


MUTANTS = {  # a step of HeadAxis replaced: what the message says
    "split": ({"split": lambda s, X: X.reshape(X.shape[0], s.num_heads, X.shape[1], -1)},
              "between the projections and W_o"),
    "merge": ({"merge": lambda s, X: X.reshape(X.shape[0], X.shape[2], -1)}, "and W_o"),
    "head order": ({"merge": lambda s, X: HeadAxis.merge(s, X.flip(1))}, "and W_o"),
    "scale": ({"scale": lambda s, p: math.sqrt(p * s.num_heads)}, "and W_o"),
    "mask inverted": ({"mask": lambda s, v, m: ~HeadAxis.mask(s, v, m)}, "and W_o"),
    "mask ignored": ({"mask": lambda s, v, m: torch.ones(1, dtype=bool)}, "and W_o"),
    "another's lengths": ({"mask": lambda s, v, m: HeadAxis.mask(s, v.roll(1, 0), m)}, "W_o"),
    "softmax axis": ({"softmax": lambda s, x: F.softmax(x, dim=-2)}, "and W_o"),
    "values from keys": ({"project": lambda s, q, k, v: (s.W_q(q), s.W_k(k), s.W_v(k))},
                         "departs at the projections"),
    "projections swapped": ({"project": lambda s, q, k, v: (s.W_k(q), s.W_q(k), s.W_v(v))},
                            "departs at the projections"),
    "dropout never applied": ({"drop": lambda s, w: w}, "in training mode your class"),
    "dropout in eval": ({"drop": lambda s, w: F.dropout(w, s.dropout.p)}, "In eval() mode"),
    "bias ignored": ({"linear": lambda s, n, b: nn.LazyLinear(n, bias=False)}, "has no bias"),
    "bias always": ({"linear": lambda s, n, bias: nn.LazyLinear(n, bias=True)}, "has a bias"),
    "W_o never run": ({"forward": lambda s, q, k, v, lens=None: s.merge(s.split(s.W_v(v)))},
                      "never calls W_q"),
    "lazy W_o unused": ({"forward": lambda s, q, k, v, lens=None: sum(s.project(q, k, q))},
                        "never calls W_o: it is a lazy layer"),
}


@pytest.mark.parametrize("name", MUTANTS)
def test_ex2_refuses_a_mutant_of_every_step_in_a_sentence(name):
    steps, says = MUTANTS[name]
    message = ex2.check_part(0, type(name, (HeadAxis,), steps)).message
    assert message.startswith("not right yet: ") and says in message, message
    assert "departs at between" not in message


class Inside(nn.Module):  # delegates to an instance of the library's correct class
    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False):
        super().__init__()
        self.inner = bugs.LoopAttention(num_hiddens, num_heads, dropout, bias)
        self.num_heads, self.W_q, self.W_k, self.W_v, self.W_o = (
            num_heads, self.inner.W_q, self.inner.W_k, self.inner.W_v, self.inner.W_o)

    def forward(self, queries, keys, values, valid_lens=None):
        return self.inner(queries, keys, values, valid_lens)


class PreBound(Folded):  # the heads through d2lutil's one-head attention, bound before
    def forward(self, queries, keys, values, valid_lens=None):
        Q, K, V = (self.split(X).flatten(0, 1) for X in self.project(queries, keys, values))
        lens = None if valid_lens is None else valid_lens.repeat_interleave(self.num_heads, 0)
        out = DOT(self, Q, K, V, lens)
        return self.W_o(self.merge(out.unflatten(0, (-1, self.num_heads))))


DELEGATES = [type("Mine", (cls,), {}) for cls in (
    MultiHeadAttention, bugs.Reference, bugs.HeadAxisAttention, bugs.LoopAttention,
    D2L, nn.MultiheadAttention)] + [
    type("Copied", (HeadAxis,), {"forward": bugs.HeadAxisAttention.forward}), Inside, PreBound]


@pytest.mark.parametrize("cls", DELEGATES)
def test_ex2_refuses_attention_from_d2lutil_d2l_or_torch(cls):
    message = ex2.check_part(0, cls).message
    assert "may not call d2lutil's, d2l's or torch's" in message, message


@pytest.mark.parametrize("name", [n for n in bugs.CATALOGUE if "causal" not in n])
def test_ex2_rejects_every_catalogue_bug_naming_a_stage(name):
    """The catalogue's bugs run the library's forward, which the check refuses in a
    student's kernel; here they are run without that guard, as a student's own copy of
    the bug would run, and judged from what they bring back."""
    results = []
    for case in ex2.parts[0][1].cases():
        try:
            results.append(_run(bugs.CATALOGUE[name].bug, case,
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
        name, "first departs at the step between the projections and W_o")
    assert stage in message, message


def no_name(text):  # a "test" that fails what says it is the bug
    assert "Repeat" not in str(text)


@pytest.mark.parametrize("test, says", [
    *[(lambda mm, read=read: no_name(read(mm)), "passes the module with the bug") for read in (
        lambda mm: repr(mm(8, 2)), lambda mm: type(mm(8, 2)), lambda mm: mm(8, 2)._get_name(),
        lambda mm: [repr(m) for m in mm(8, 2).modules()], lambda mm: vars(mm(8, 2)),
        lambda mm: (mm, vars(mm), mm.__qualname__), lambda mm: dir(mm(8, 2)))],
    *[(test, "not available to this check") for test in (
        bound_before, lambda mm: bound_before(mm), behaviour.check_matches_torch,
        lambda mm: behaviour.check_keys_permuted.__wrapped__(mm))],
    (lambda mm: 1 / 0, "raised ZeroDivisionError: division by zero"),
    (lambda mm: no_name("Repeat!"), "fails 4 of the 4 correct modules: a correct module "
     "must pass (on the first, your test raised AssertionError: "),
    (lambda mm: None, "not answered yet"),
    (lambda mm: ..., "not answered yet")])  # the starter's return ...
def test_ex3_refuses_tests_that_do_not_test_and_shows_what_they_raised(test, says):
    message = ex3.check_part(0, test).message
    assert says in message, message


def keeps_its_mask(make_module):  # a right answer, on a copy in float64
    module = copy.deepcopy(make_module(8, 2)).double()
    keys = torch.randn(3, 5, 8, dtype=torch.float64)
    valid_lens, changed = torch.tensor([1, 5, 3]), keys.clone()
    changed[0, 1:] += 1.0
    assert torch.allclose(module(keys, keys, keys, valid_lens)[0],
                          module(keys, changed, changed, valid_lens)[0])


def test_ex3_takes_a_right_test_and_hides_which_module_is_the_bug():
    assert ex3.check_part(0, keeps_its_mask)
    calls = iter(range(99))  # a test that fails the public check's second module
    assert ex3.check_part(0, lambda mm: next(calls) != 1 or 1 / 0)
    with pytest.raises(Wrong, match="passes the module with the bug"):  # another order
        ex3.parts[0][1].graded()(lambda mm: next(calls) % 5 != 1 or 1 / 0)
    checker = ex3.parts[0][1]
    modules = [make(8, 2) for (make,) in checker.cases()]
    assert len({(type(m), repr(m)) for m in modules}) == 1 and len(modules) == 5
    brought_back = [checker.run(lambda make_module: ..., case) for case in checker.cases()]
    assert ex3.check_part(0, CallResults(brought_back)).message == "not answered yet"
