"""A checker for a class the student writes: multi-head attention with the book's interface.

``implementation(reference, cases)`` checks a class such as::

    class MyMultiHeadAttention(nn.Module):
        def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False): ...
        def forward(self, queries, keys, values, valid_lens=None): ...

with projections ``W_q``, ``W_k``, ``W_v``, ``W_o`` (``nn.Linear`` or ``nn.LazyLinear``),
against ``reference`` given the same weights. The book's head convention fixes what the
same weights mean: head j owns output features j*p ... (j+1)*p - 1 of ``W_q``, ``W_k`` and
``W_v`` (p = num_hiddens / num_heads) and the j-th block of p input features of ``W_o``.
Any correct layout passes: heads folded into the batch, a head axis, a loop over heads.

``check.run(answer, case)`` does one case: it builds the class with ``dropout=0`` in
``eval()`` mode, runs it once (so lazy layers exist), copies the reference's weights in
by name, runs it on the case's inputs and returns the output and what passes through the
projections (forward hooks; ``W_o``'s input is the merged heads), float32 tensors. While
it runs, the library's, d2l's and torch's multi-head attention refuse to be called
(:func:`refuse_delegation`): the split, the merge and the masks must be the student's own
(``F.scaled_dot_product_attention`` is allowed). ``course/grade.py`` calls ``run`` in the
student's kernel and takes back only these tensors (a :class:`CallResults`); the verdict,
and which stage departs first, are made where ``check`` runs.

A query with no valid key has no agreed answer (the book spreads it uniformly,
``d2lutil`` returns zeros, ``nn.MultiheadAttention`` gives NaN), so no case has one: every
``valid_lens`` is at least 1.
"""

import contextlib
import sys
from typing import NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

from d2lutil.exercises.answers import NotAnswered, Wrong, as_array, kind_of
from d2lutil.exercises.checkers import CallResults, Raised

PROJECTIONS = ("W_q", "W_k", "W_v", "W_o")
OBSERVED = ("W_q", "W_k", "W_v", "W_o input", "output")  # what run returns, in order
ATOL, RTOL = 1e-5, 1e-4  # float32, the answer's own arithmetic against the reference's
NOT_ANSWERED = "not answered"  # what run brings back for a starter cell left as it is


class Case(NamedTuple):
    """One case: sizes, how ``valid_lens`` is given ("none", "sequence", "query"), seed."""

    num_hiddens: int
    num_heads: int
    batch_size: int
    num_queries: int
    num_keys: int
    lens: str
    seed: int

    def describe(self):
        lens = {"none": "no valid_lens", "sequence": "valid_lens per sequence",
                "query": "valid_lens per query"}[self.lens]
        return (f"num_hiddens = {self.num_hiddens}, num_heads = {self.num_heads}, a batch "
                f"of {self.batch_size}, {self.num_queries} queries and {self.num_keys} "
                f"keys, {lens}")


def inputs(case):
    """The case's queries, keys, values (float32) and valid_lens, all from its seed."""
    generator = torch.Generator().manual_seed(case.seed)
    def randn(length):
        return torch.randn(case.batch_size, length, case.num_hiddens, generator=generator)
    queries, keys, values = randn(case.num_queries), randn(case.num_keys), randn(case.num_keys)
    shape = {"none": None, "sequence": (case.batch_size,),
             "query": (case.batch_size, case.num_queries)}[case.lens]
    valid_lens = None if shape is None else torch.randint(
        1, case.num_keys + 1, shape, generator=generator)  # at least one key each
    return queries, keys, values, valid_lens


@contextlib.contextmanager
def refuse_delegation():
    """While active, d2lutil's, d2l's and torch's multi-head attention raise when called."""
    from d2lutil import attention  # here: the library imports this package lazily

    targets = [(attention.MultiHeadAttention, "forward"), (nn.MultiheadAttention, "forward"),
               (F, "multi_head_attention_forward")]
    d2l = sys.modules.get("d2l.torch")
    if d2l is not None and hasattr(d2l, "MultiHeadAttention"):
        targets.append((d2l.MultiHeadAttention, "forward"))

    def refuse(*args, **kwargs):
        raise RuntimeError("this check runs your own multi-head attention: it may not call "
                           "d2lutil's, d2l's or torch's (scaled_dot_product_attention is "
                           "allowed)")

    saved = [(owner, name, owner.__dict__[name]) for owner, name in targets]
    for owner, name, _ in saved:
        setattr(owner, name, refuse)
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def _reference_weights(reference, case):
    """The weights of ``reference`` built under the case's seed (the caller's random
    state is left as it was)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case.seed)
        module = reference(case.num_hiddens, case.num_heads, 0.0, False)
        queries, keys, values, valid_lens = inputs(case)
        with torch.no_grad():
            module(queries, keys, values, valid_lens)  # lazy layers, if any
    return {name: getattr(module, name).weight.detach().clone() for name in PROJECTIONS}


def _run(answer, case, weights):
    """The observed tensors of ``answer`` on ``case`` with ``weights``; NotAnswered for a
    class whose forward returns nothing."""
    module = answer(case.num_hiddens, case.num_heads, 0.0, bias=False)
    if not isinstance(module, nn.Module):
        raise Wrong(f"your class should make an nn.Module, it made {kind_of(module)}")
    module.eval()
    queries, keys, values, valid_lens = inputs(case)
    with torch.no_grad():
        first = module(queries, keys, values, valid_lens)
        if first is None or first is Ellipsis:  # the starter's body
            raise NotAnswered
        for name in PROJECTIONS:
            layer = getattr(module, name, None)
            if not isinstance(getattr(layer, "weight", None), torch.Tensor):
                raise Wrong(f"your module has no projection {name} with a weight")
            if tuple(layer.weight.shape) != tuple(weights[name].shape):
                raise Wrong(f"{name}.weight has shape {tuple(layer.weight.shape)}, expected "
                            f"{tuple(weights[name].shape)}")
            layer.weight.copy_(weights[name])
        seen = {}
        hooks = [getattr(module, name).register_forward_hook(
            lambda m, i, out, name=name: seen.setdefault(name, out)) for name in PROJECTIONS[:3]]
        hooks.append(module.W_o.register_forward_pre_hook(
            lambda m, i: seen.setdefault("W_o input", i[0])))
        try:
            seen["output"] = module(queries, keys, values, valid_lens)
        finally:
            for hook in hooks:
                hook.remove()
    missing = [name for name in OBSERVED if not isinstance(seen.get(name), torch.Tensor)]
    if missing:
        raise Wrong(f"your forward should call {missing[0]} and return a tensor")
    return {name: seen[name].detach().float() for name in OBSERVED}


def _departure(got, expected, atol, rtol):
    """The first observed stage that differs and its largest difference, or None."""
    stages = (("W_q", "W_k", "W_v"), ("W_o input",), ("output",))
    where = {0: "the projections W_q, W_k, W_v (the weights are the reference's: are they "
                "applied to the queries, keys and values as given?)",
             1: "between the projections and W_o (the split into heads, the scores and "
                "their scaling, the mask, the softmax or the merge)",
             2: "W_o or after it"}
    for k, names in enumerate(stages):
        for name in names:
            mine, theirs = as_array(got[name]), expected[name].numpy()
            if mine.shape != theirs.shape:
                return f"{where[k]}: {name} has shape {mine.shape}, expected {theirs.shape}"
            difference = abs(mine - theirs)
            if not (difference <= atol + rtol * abs(theirs)).all():
                return f"{where[k]}, by up to {difference.max():.2g}"
    return None


def implementation(reference, cases, *, atol=ATOL, rtol=RTOL, diagnose=None, hidden=()):
    """A checker for a class with the book's multi-head attention interface.

    ``reference`` makes a correct module, ``reference(num_hiddens, num_heads, dropout,
    bias)``; ``cases`` is a list of :class:`Case`, or a function returning one. Outputs and
    the tensors between the stages must agree within ``atol`` + ``rtol`` * |reference|.
    The message names the first case that fails and the first stage that departs there;
    ``diagnose(answer)``, if given, adds a finer diagnosis when the class itself is at hand
    (not from a :class:`CallResults`), e.g. ``d2lutil.stages.first_departure``.
    ``hidden`` are more cases, judged only at grading (``graded()``).
    """
    def all_cases():
        return list(cases() if callable(cases) else cases)

    def expected_of(case):
        with torch.random.fork_rng(devices=[]):
            return _run(reference, case, _reference_weights(reference, case))

    def run(answer, case):
        weights = _reference_weights(reference, case)
        with refuse_delegation(), torch.random.fork_rng(devices=[]):
            try:
                return _run(answer, case, weights)
            except NotAnswered:  # brought back as such, not as an error
                return NOT_ANSWERED

    def check(answer):
        given = isinstance(answer, CallResults)
        if not given and not (isinstance(answer, type) and issubclass(answer, nn.Module)):
            raise Wrong(f"expected your class (a subclass of nn.Module), got {kind_of(answer)}")
        tried = all_cases()
        if given and len(answer) != len(tried):
            raise Wrong(f"expected the results of {len(tried)} cases, got {len(answer)}")
        failures, raised = [], []  # (case, where it departs); (case, what it raised)
        for i, case in enumerate(tried):
            if given:
                got = answer[i]
                if got == NOT_ANSWERED:
                    raise NotAnswered
                if isinstance(got, Raised) and got.type_name == "Wrong":  # run's own
                    raise Wrong(f"{got.text}, for {case.describe()}")
                if isinstance(got, Raised):
                    raised.append((case, f"{got.type_name} ({got.text})"))
                    continue
                if not isinstance(got, dict) or set(got) != set(OBSERVED):
                    raise Wrong(f"could not read the results for {case.describe()}")
            else:
                try:
                    got = run(answer, case)
                except Wrong:
                    raise
                except Exception as error:
                    raised.append((case, f"{type(error).__name__} ({error})"))
                    continue
            if got == NOT_ANSWERED:
                raise NotAnswered
            where = _departure(got, expected_of(case), atol, rtol)
            if where is not None:
                failures.append((case, where))
        if not failures and not raised:
            return
        count = f"wrong in {len(failures) + len(raised)} of {len(tried)} cases tried"
        also = ""
        if raised:  # named after a departure, which says more, if there is one
            case, error = raised[0]
            also = f"your class raised {error} for {case.describe()}"
        if failures:
            case, where = failures[0]
            message = f"wrong for {case.describe()}: it first departs at {where}"
            message += f"; {also}" if also else ""
        else:
            message = also
        more = "" if given or diagnose is None else f"\n{diagnose(answer)}"
        raise Wrong(f"{message}; {count}{more}")

    def graded():
        if not hidden:
            return check
        return implementation(reference, lambda: all_cases() + list(
            hidden() if callable(hidden) else hidden), atol=atol, rtol=rtol)

    check.cases, check.run, check.reference = all_cases, run, reference
    check.hidden, check.graded = hidden, graded
    return check


class _Attention(nn.Module):
    """One module of a behaviour-test check: every case is of this type, whatever is inside."""

    def __init__(self, inside):
        super().__init__()
        self._inside = inside
        self.num_heads = inside.num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (getattr(inside, name) for name in PROJECTIONS)

    @property
    def attention_weights(self):
        return self._inside.attention_weights

    def forward(self, queries, keys, values, valid_lens=None):
        return self._inside(queries, keys, values, valid_lens)


def _maker(cls):
    def make_module(num_hiddens, num_heads):
        return _Attention(cls(num_hiddens, num_heads))
    return make_module


@contextlib.contextmanager
def refuse_behaviour_tests():
    """While active, the library's behaviour tests (``d2lutil.behaviour``) raise."""
    from d2lutil import behaviour

    def refuse(*args, **kwargs):
        raise RuntimeError("the library's behaviour tests are not available to this check: "
                           "write the test yourself")

    saved = {name: getattr(behaviour, name) for name in behaviour.__all__}
    for name in saved:
        setattr(behaviour, name, refuse)
    try:
        yield
    finally:
        for name, original in saved.items():
            setattr(behaviour, name, original)


def _empty_function(make_module):
    ...


def _empty(function):
    """True for a function whose body is only ``...`` (a starter cell's)."""
    code = getattr(function, "__code__", None)
    model = _empty_function.__code__
    return code is not None and (code.co_code, code.co_consts) == (model.co_code,
                                                                    model.co_consts)


def behaviour_test(bug, correct, *, seed=0, hidden_seed=None, make=None):
    """A checker for a test the student writes: a function of ``make_module`` that must
    raise (fail) for a module with ``bug`` and return (pass) for every module of
    ``correct``, a list of classes with the book's interface.

    Each case is one ``make_module(num_hiddens, num_heads)``, in an order fixed by ``seed``
    and not shown; every module made is of one type whatever class is inside. ``run``
    calls the test on a case and says "failed" (it raised) or "passed", with the library's
    behaviour tests refused; ``check`` takes the test or those results (a
    :class:`CallResults`) and never says which case holds the bug.

    ``hidden_seed``: grading (``graded()``) calls the test in another order, which the
    student never saw. ``make(cls)`` makes a case's ``make_module`` (default: a closure).
    """
    classes = [bug, *correct]
    order = torch.randperm(len(classes), generator=torch.Generator().manual_seed(seed))
    makers = [((make or _maker)(classes[i]),) for i in order.tolist()]
    expected = ["failed" if classes[i] is bug else "passed" for i in order.tolist()]

    def all_cases():
        return list(makers)

    def run(answer, case):
        with refuse_behaviour_tests(), torch.random.fork_rng(devices=[]):
            try:
                if answer(*case) is Ellipsis:  # the starter's return ...
                    return NOT_ANSWERED
            except Exception:  # a test fails by raising, whatever it raises
                return "failed"
        return "passed"

    def check(answer):
        given = isinstance(answer, CallResults)
        if not given and not callable(answer):
            raise Wrong(f"expected your test, a function of make_module, got {kind_of(answer)}")
        if given and len(answer) != len(makers):
            raise Wrong(f"expected the results of {len(makers)} cases, got {len(answer)}")
        if not given and _empty(answer):  # the starter's body: ...
            raise NotAnswered
        got = list(answer) if given else [run(answer, case) for case in makers]
        if NOT_ANSWERED in got:
            raise NotAnswered
        if not all(g in ("failed", "passed") for g in got):
            raise Wrong("could not read what your test did")
        pairs = list(zip(got, expected, strict=True))
        bug_passed = any(g == "passed" and e == "failed" for g, e in pairs)
        correct_failed = sum(g == "failed" and e == "passed" for g, e in pairs)
        if bug_passed and correct_failed:
            raise Wrong(f"your test passes the module with the bug and fails {correct_failed} "
                        f"of the {len(correct)} correct modules")
        if bug_passed:
            raise Wrong("your test passes the module with the bug: it must fail it (raise)")
        if correct_failed:
            raise Wrong(f"your test fails {correct_failed} of the {len(correct)} correct "
                        "modules: a correct module must pass")

    def graded():
        if hidden_seed is None:
            return check
        return behaviour_test(bug, correct, seed=hidden_seed, make=make)

    check.cases, check.run, check.verdicts = all_cases, run, expected
    check.hidden, check.graded = hidden_seed is not None, graded
    return check
