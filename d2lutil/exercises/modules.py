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

``check.run(answer, case)`` does one case: it builds the class with the case's ``dropout``
and ``bias`` in ``eval()`` mode, runs it once (so lazy layers exist), copies the
reference's weights and biases in by name, runs it on the case's inputs and returns the
output and what passes through the projections (forward hooks; ``W_o``'s input is the
merged heads), float32 tensors; with dropout, also the output in training mode, which must
differ from the output without dropout (while in ``eval()`` mode it must not). Beside the
cases given, the checker tries two with ``bias=True`` and two with ``dropout=0.5``.

The attention must be the student's own: ``run`` refuses a class that subclasses, or takes
a method from, a class of ``d2lutil`` or d2l or ``nn.MultiheadAttention`` (:func:`borrowed`),
and while it runs every function of those classes raises, however it is reached
(:func:`refuse_delegation`; ``F.scaled_dot_product_attention`` is allowed).
``course/grade.py`` calls ``run`` in the student's kernel and takes back only these tensors
(a :class:`CallResults`); the verdict, and which stage departs first, are made where
``check`` runs.

A query with no valid key has no agreed answer (the book spreads it uniformly,
``d2lutil`` returns zeros, ``nn.MultiheadAttention`` gives NaN), so no case has one: every
``valid_lens`` is at least 1.
"""

import contextlib
import copy
import inspect
import sys
import weakref
from typing import NamedTuple

import torch
from torch import nn
from torch.nn import functional as F
from torch.overrides import TorchFunctionMode

from d2lutil.exercises.answers import NotAnswered, Wrong, as_array, kind_of
from d2lutil.exercises.checkers import CallResults, Raised

PROJECTIONS = ("W_q", "W_k", "W_v", "W_o")
OBSERVED = ("W_q", "W_k", "W_v", "W_o input", "output")  # what run returns, in order
TRAINING = "training output"  # and, for a case with dropout, the output in training mode
SCORES = "score shapes"  # and the shape of the scores each softmax (or SDPA) was given
MAX_CALLS = 64  # the most softmax calls one forward's record keeps
ATOL, RTOL = 1e-5, 1e-4  # float32, the answer's own arithmetic against the reference's
NOT_ANSWERED = "not answered"  # what run brings back for a starter cell left as it is
BORROWED = "your class takes its attention from a library"  # how run's refusal begins
REFUSED = ("this check runs your own multi-head attention: it may not call d2lutil's, "
           "d2l's or torch's (F.scaled_dot_product_attention is allowed)")


class Case(NamedTuple):
    """One case: sizes, how ``valid_lens`` is given ("none", "sequence", "query"), seed,
    and the ``dropout`` and ``bias`` the class is built with."""

    num_hiddens: int
    num_heads: int
    batch_size: int
    num_queries: int
    num_keys: int
    lens: str
    seed: int
    dropout: float = 0.0
    bias: bool = False

    def describe(self):
        lens = {"none": "no valid_lens", "sequence": "valid_lens per sequence",
                "query": "valid_lens per query"}[self.lens]
        built = "".join([", bias=True" if self.bias else "",
                         f", dropout={self.dropout}" if self.dropout else ""])
        return (f"num_hiddens = {self.num_hiddens}, num_heads = {self.num_heads}, a batch "
                f"of {self.batch_size}, {self.num_queries} queries and {self.num_keys} "
                f"keys, {lens}{built}")


def interface_cases(cases):
    """Cases of the rest of the interface, made from the first two of ``cases`` with
    several heads: each with ``bias=True``, and each with ``dropout=0.5``."""
    picked = [case for case in cases if case.num_heads > 1][:2]
    return ([case._replace(bias=True, seed=case.seed + 1000) for case in picked]
            + [case._replace(dropout=0.5, seed=case.seed + 2000) for case in picked])


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


def _refusing_code(function, text):
    """A code object that raises ``RuntimeError(text)``, with the free variables of
    ``function``'s (a method calling ``super()`` has one), so it can be its ``__code__``."""
    names = ", ".join(function.__code__.co_freevars)
    space = {}
    exec(f"def outer({names}):\n    def refused(*args, **kwargs):\n"  # noqa: S102
         f"        raise RuntimeError({text!r})\n        {names or 'pass'}\n"
         "    return refused\n", space)
    return space["outer"](*function.__code__.co_freevars).__code__


@contextlib.contextmanager
def refusing(functions, text):
    """While active, each of ``functions`` raises ``RuntimeError(text)`` however it is
    reached (looked up on its class, bound to a name before, a bound method): its code is
    swapped, not a name."""
    saved = [(function, function.__code__) for function in dict.fromkeys(functions)]
    try:
        for function, _ in saved:
            function.__code__ = _refusing_code(function, text)
        yield
    finally:
        for function, code in saved:
            function.__code__ = code


def _from_library(thing):
    """True for a class or function of d2lutil or d2l, or of ``nn.MultiheadAttention``."""
    return (getattr(thing, "__module__", None) or "").split(".")[0] in ("d2lutil", "d2l") or (
        getattr(thing, "__qualname__", "").split(".")[0] == "MultiheadAttention")


def _attention_classes():
    """d2lutil's attention classes (``attention``, ``bugs``), d2l's and torch's."""
    from d2lutil import attention, bugs  # here: the library imports this package lazily

    modules = [attention, bugs] + [sys.modules[name] for name in ("d2l.torch",)
                                   if name in sys.modules]
    return [nn.MultiheadAttention] + [
        value for module in modules for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, nn.Module)
        and value.__module__ == module.__name__]


def borrowed(answer):
    """How class ``answer`` takes its attention from a library, or None: a class of d2lutil,
    d2l or ``nn.MultiheadAttention`` among its bases, or a method of one in its own body
    (``forward = LoopAttention.forward``)."""
    for klass in answer.__mro__:
        if klass in (nn.Module, object):
            continue
        if _from_library(klass):
            return f"it subclasses {klass.__module__}.{klass.__qualname__}"
        for name, value in vars(klass).items():
            function = getattr(value, "__func__", value)
            if (inspect.isfunction(function) and _from_library(function)
                    and "." in function.__qualname__):
                return f"its {name} is {function.__module__}.{function.__qualname__}"
    return None


@contextlib.contextmanager
def refuse_delegation():
    """While active, every function of d2lutil's, d2l's and torch's attention classes, and
    ``F.multi_head_attention_forward``, raises however it is called."""
    functions = [value for klass in _attention_classes() for value in vars(klass).values()
                 if inspect.isfunction(value)]
    with refusing(functions + [F.multi_head_attention_forward], REFUSED):
        yield


def _reference_weights(reference, case):
    """{name: (weight, bias or None)} of ``reference`` built under the case's seed (the
    caller's random state is left as it was)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case.seed)
        module = reference(case.num_hiddens, case.num_heads, 0.0, case.bias)
        queries, keys, values, valid_lens = inputs(case)
        with torch.no_grad():
            module(queries, keys, values, valid_lens)  # lazy layers, if any
    layers = {name: getattr(module, name) for name in PROJECTIONS}
    return {name: (layer.weight.detach().clone(),
                   None if layer.bias is None else layer.bias.detach().clone())
            for name, layer in layers.items()}


def _copy_into(module, name, weight, bias):
    """The reference's ``weight`` and ``bias`` into the module's projection ``name``."""
    layer = getattr(module, name, None)
    mine = getattr(layer, "weight", None)
    if not isinstance(mine, torch.Tensor):
        raise Wrong(f"your module has no projection {name} with a weight (an nn.Linear or "
                    f"nn.LazyLinear named {name})")
    if isinstance(mine, nn.parameter.UninitializedParameter):
        raise Wrong(f"your forward never calls {name}: it is a lazy layer, whose weight only "
                    "exists once it has run")
    if tuple(mine.shape) != tuple(weight.shape):
        raise Wrong(f"your {name} has a weight of shape {tuple(mine.shape)}, expected "
                    f"{tuple(weight.shape)}")
    mine.copy_(weight)
    theirs = getattr(layer, "bias", None)
    if (bias is None) == isinstance(theirs, torch.Tensor):
        raise Wrong(f"your {name} has a bias, though the class was built with bias=False"
                    if bias is None else f"your {name} has no bias, though the class was "
                    "built with bias=True: pass bias on to every projection")
    if bias is not None:
        theirs.copy_(bias)


class ScoreShapes(TorchFunctionMode):
    """While active, records the shape of the scores that each softmax, or each
    ``F.scaled_dot_product_attention``, is given: (..., num_queries, num_keys). The shapes
    tell a class's layout (:func:`layout_of`)."""

    SOFTMAX = (F.softmax, torch.softmax, torch.Tensor.softmax)

    def __init__(self):
        super().__init__()
        self.shapes = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if len(self.shapes) < MAX_CALLS and args and isinstance(args[0], torch.Tensor):
            if func in self.SOFTMAX:
                self.shapes.append(tuple(args[0].shape))
            elif func is F.scaled_dot_product_attention:
                key = args[1] if len(args) > 1 else kwargs.get("key")
                if isinstance(key, torch.Tensor) and key.dim() >= 2:
                    self.shapes.append((*args[0].shape[:-1], key.shape[-2]))
        return func(*args, **kwargs)

    def as_tensor(self):
        """The shapes as rows of 4 sizes, aligned right (0 where a shape has fewer)."""
        rows = [[0] * (4 - len(shape[-4:])) + list(shape[-4:]) for shape in self.shapes]
        return torch.tensor(rows, dtype=torch.float32).reshape(-1, 4)


LAYOUTS = {"folded": "the heads folded into the batch, one softmax over scores of shape "
                     "(batch_size * num_heads, num_queries, num_keys)",
           "head axis": "a head axis, one softmax over scores of shape (batch_size, "
                        "num_heads, num_queries, num_keys)",
           "loop over heads": "a loop over the heads, one softmax per head, each over scores "
                              "of shape (batch_size, num_queries, num_keys)"}


def layout_of(shapes, case):
    """The layout (a key of LAYOUTS) that the score shapes a class's forward recorded
    (rows of :meth:`ScoreShapes.as_tensor`) show on ``case``, or None. Only a case with
    several heads tells the layouts apart."""
    b, h, n, m = case.batch_size, case.num_heads, case.num_queries, case.num_keys
    rows = [tuple(int(x) for x in row) for row in as_array(shapes).reshape(-1, 4)]
    if rows == [(b, h, n, m)]:
        return "head axis"
    if rows == [(0, b * h, n, m)]:
        return "folded"
    if rows == [(0, b, n, m)] * h:
        return "loop over heads"
    return None


def _shapes_said(shapes):
    rows = [tuple(int(x) for x in row if x) for row in as_array(shapes).reshape(-1, 4)]
    if not rows:
        return "it called no softmax (nor F.scaled_dot_product_attention)"
    said = ", ".join(str(row) for row in rows[:3]) + (", ..." if len(rows) > 3 else "")
    calls = "1 call" if len(rows) == 1 else f"{len(rows)} calls"
    return f"its softmax got scores of shape {said} ({calls})"


def _run(answer, case, weights):
    """The observed tensors of ``answer`` on ``case`` with ``weights``; NotAnswered for a
    class whose forward returns nothing."""
    module = answer(case.num_hiddens, case.num_heads, case.dropout, bias=case.bias)
    if not isinstance(module, nn.Module):
        raise Wrong(f"your class should make an nn.Module, it made {kind_of(module)}")
    module.eval()
    queries, keys, values, valid_lens = inputs(case)
    with torch.no_grad():
        first = module(queries, keys, values, valid_lens)
        if first is None or first is Ellipsis:  # the starter's body
            raise NotAnswered
        for name in PROJECTIONS:
            _copy_into(module, name, *weights[name])
        seen = {}
        hooks = [getattr(module, name).register_forward_hook(
            lambda m, i, out, name=name: seen.setdefault(name, out)) for name in PROJECTIONS[:3]]
        hooks.append(module.W_o.register_forward_pre_hook(
            lambda m, i: seen.setdefault("W_o input", i[0])))
        try:
            with ScoreShapes() as scores:
                seen["output"] = module(queries, keys, values, valid_lens)
        finally:
            for hook in hooks:
                hook.remove()
        seen[SCORES] = scores.as_tensor()
        if case.dropout:
            torch.manual_seed(case.seed)
            seen[TRAINING] = module.train()(queries, keys, values, valid_lens)
    missing = [name for name in _observed(case) if not isinstance(seen.get(name), torch.Tensor)]
    if missing and missing[0] not in ("output", TRAINING):
        raise Wrong(f"your forward never calls {missing[0].split()[0]}")
    if missing:
        raise Wrong(f"your forward should return a tensor, it returned "
                    f"{kind_of(seen.get(missing[0]))}")
    return {name: seen[name].detach().float() for name in _observed(case)}


def _observed(case):
    return OBSERVED + (SCORES,) + ((TRAINING,) if case.dropout else ())


# Where a class departs: the stages in order, each with what lies there
STAGES = ((("W_q", "W_k", "W_v"), "the projections W_q, W_k, W_v",
           "the weights are the reference's: are they applied to the queries, keys and "
           "values as given?"),
          (("W_o input",), "the step between the projections and W_o",
           "the split into heads, the scores and their scaling, the mask, the softmax or the "
           "merge"),
          (("output",), "W_o or after it", None))


def _largest_difference(mine, theirs, atol, rtol):
    """The largest difference where ``mine`` and ``theirs`` are not close, or None."""
    difference = abs(mine - theirs)
    return None if (difference <= atol + rtol * abs(theirs)).all() else difference.max()


def _departure(got, expected, atol, rtol):
    """A clause naming the first observed stage that differs and by how much, or None."""
    for names, where, inside in STAGES:
        for name in names:
            mine, theirs = as_array(got[name]), expected[name].numpy()
            if mine.shape != theirs.shape:
                return (f"your class first departs at {where}: {name} has shape "
                        f"{mine.shape}, expected {theirs.shape}")
            largest = _largest_difference(mine, theirs, atol, rtol)
            if largest is not None:
                return (f"your class first departs at {where}, by up to {largest:.2g}"
                        + (f" ({inside})" if inside else ""))
    return None


def _dropout_fault(got, expected, where, atol, rtol):
    """What is wrong with the dropout of a case that has some, or None."""
    if where is not None:  # in eval() mode, where dropout must do nothing
        return (f"{where}. In eval() mode dropout must change nothing (nn.Dropout does "
                "that; F.dropout needs training=self.training)")
    if _largest_difference(as_array(got[TRAINING]), expected["output"].numpy(), atol,
                           rtol) is None:
        return ("in training mode your class gives the output it gives without dropout: "
                "apply dropout to the attention weights (nn.Dropout(dropout), which "
                "changes nothing in eval() mode)")
    return None


def implementation(reference, cases, *, atol=ATOL, rtol=RTOL, diagnose=None, hidden=(),
                   interface=True, layout="any", mistakes=()):
    """A checker for a class with the book's multi-head attention interface.

    ``reference`` makes a correct module, ``reference(num_hiddens, num_heads, dropout,
    bias)``; ``cases`` is a list of :class:`Case`, or a function returning one; with
    ``interface``, :func:`interface_cases` of them are added (bias, dropout). Outputs and
    the tensors between the stages must agree within ``atol`` + ``rtol`` * |reference|.
    The message names the first case that fails and the first stage that departs there;
    ``diagnose(answer)``, if given, adds a finer diagnosis when the class itself is at hand
    (not from a :class:`CallResults`), e.g. ``d2lutil.stages.first_departure``.
    ``hidden`` are more cases, judged only at grading (``graded()``). ``layout``, a key of
    :data:`LAYOUTS` or "any": the layout the class must compute in, told by the shapes of
    the scores its softmax calls get (:func:`layout_of`) on the cases with several heads.
    ``mistakes``: (class, message) pairs, a known slip and what to say when the class gives
    exactly that class's output (with the reference's weights).
    """
    def all_cases():
        given = list(cases() if callable(cases) else cases)
        return given + (interface_cases(given) if interface else [])

    def expected_of(case, made_by=reference):
        with torch.random.fork_rng(devices=[]):
            return _run(made_by, case, _reference_weights(reference, case))

    def run(answer, case):
        if isinstance(answer, type) and borrowed(answer):
            raise Wrong(f"{BORROWED} ({borrowed(answer)}): {REFUSED}")
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
        failures, raised = [], []  # (case, what is wrong there); (case, what it raised)
        for i, case in enumerate(tried):
            if given:
                got = answer[i]
                if got == NOT_ANSWERED:
                    raise NotAnswered
                if isinstance(got, Raised) and got.type_name == "Wrong":  # run's own
                    raise Wrong(got.text if got.text.startswith(BORROWED)
                                else f"{got.text}, for {case.describe()}")
                if isinstance(got, Raised):
                    raised.append((case, f"{got.type_name} ({got.text})"))
                    continue
                if not isinstance(got, dict) or set(got) != set(_observed(case)):
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
            expected = expected_of(case)
            where = _departure(got, expected, atol, rtol)
            if case.dropout:
                where = _dropout_fault(got, expected, where, atol, rtol)
            if where is None and layout != "any" and case.num_heads > 1 and (
                    layout_of(got[SCORES], case) != layout):
                where = (f"the output is right, but not in the layout your version asks "
                         f"for: {_shapes_said(got[SCORES])}, and your version asks for "
                         f"{LAYOUTS[layout]}")
            if where is not None and not case.dropout:
                for other, said in mistakes:  # a known slip that gives exactly this output
                    if _departure(got, expected_of(case, other), atol, rtol) is None:
                        where = said
                        break
            if where is not None:
                failures.append((case, where))
        if not failures and not raised:
            return
        sentences = [f"wrong for {case.describe()}: {where}" for case, where in failures[:1]]
        sentences += [f"{'Also, your' if failures else 'your'} class raised {error} for "
                      f"{case.describe()}" for case, error in raised[:1]]
        sentences.append(f"It is wrong in {len(failures) + len(raised)} of the {len(tried)} "
                         "cases tried.")
        more = "" if given or diagnose is None else f"\n{diagnose(answer)}"
        raise Wrong(". ".join(sentences) + more)

    def graded():
        if not hidden:
            return check
        extra = list(hidden() if callable(hidden) else hidden)
        return implementation(reference, lambda: all_cases() + extra + (
            interface_cases(extra) if interface else []), atol=atol, rtol=rtol,
            interface=False, layout=layout, mistakes=mistakes)

    check.cases, check.run, check.reference = all_cases, run, reference
    check.hidden, check.graded, check.layout = hidden, graded, layout
    return check


_INSIDE = weakref.WeakKeyDictionary()  # each Attention's module, out of its submodules


class Attention(nn.Module):
    """A module of a behaviour-test check. Every case is of this type, and its name, repr
    and submodules say nothing of what is inside: the module inside is kept out of the
    submodule tree (in ``_INSIDE``); only its projections show, as ``W_q`` ... ``W_o``."""

    def __init__(self, inside, num_hiddens):
        super().__init__()
        _INSIDE[self] = inside
        self.num_hiddens, self.num_heads = num_hiddens, inside.num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (getattr(inside, name) for name in PROJECTIONS)

    def __repr__(self):
        return f"Attention(num_hiddens={self.num_hiddens}, num_heads={self.num_heads})"

    def __deepcopy__(self, memo):
        inside = copy.deepcopy(_INSIDE[self], memo)
        return Attention(inside, self.num_hiddens).train(self.training)

    def train(self, mode=True):
        _INSIDE[self].train(mode)
        return super().train(mode)

    @property
    def attention_weights(self):
        return _INSIDE[self].attention_weights

    def forward(self, queries, keys, values, valid_lens=None):
        return _INSIDE[self](queries, keys, values, valid_lens)


def _maker(cls):
    def make_module(num_hiddens, num_heads):
        return Attention(cls(num_hiddens, num_heads), num_hiddens)
    return make_module


def _behaviour_functions():
    """The library's behaviour tests (``d2lutil.behaviour``), what they are wrapped around,
    and the ``_build`` every one of them starts with."""
    from d2lutil import behaviour

    functions = [behaviour._build] + [getattr(behaviour, name) for name in behaviour.__all__]
    functions += [getattr(function, "__wrapped__", None) for function in functions]
    return [function for function in functions if inspect.isfunction(function)]


def refuse_behaviour_tests():
    """While active, the library's behaviour tests raise, however they were bound."""
    return refusing(_behaviour_functions(), "the library's behaviour tests are not available "
                    "to this check: write the test yourself")


def _said(error):
    """An exception as the student sees it: its type and the start of its message."""
    text = str(error)
    text = text if len(text) <= 150 else f"{text[:150]}..."
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


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
    and not shown; every module made is an :class:`Attention`, whatever class is inside.
    ``run`` calls the test on a case, through a ``make_module`` of its own (which says
    nothing of the case), with the library's behaviour tests refused, and says "passed",
    or "failed: " and what the test raised; ``check`` takes the test or those results (a
    :class:`CallResults`), never says which case holds the bug, and shows what the test
    raised on a correct module.

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
        def make_module(num_hiddens, num_heads):
            return case[0](num_hiddens, num_heads)

        with refuse_behaviour_tests(), torch.random.fork_rng(devices=[]):
            try:
                if answer(make_module) is Ellipsis:  # the starter's return ...
                    return NOT_ANSWERED
            except Exception as error:  # a test fails by raising, whatever it raises
                return f"failed: {_said(error)}"
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
        if not all(isinstance(g, str) and g.partition(":")[0] in ("failed", "passed")
                   for g in got):
            raise Wrong("could not read what your test did")
        pairs = list(zip(got, expected, strict=True))
        bug_passed = any(g == "passed" and e == "failed" for g, e in pairs)
        said = [g.partition(": ")[2] for g, e in pairs if g != "passed" and e == "passed"]
        shown = f" (on the first, your test raised {said[0]})" if said and said[0] else ""
        if bug_passed and said:
            raise Wrong(f"your test passes the module with the bug and fails {len(said)} "
                        f"of the {len(correct)} correct modules{shown}")
        if bug_passed:
            raise Wrong("your test passes the module with the bug: it must fail it (raise)")
        if said:
            raise Wrong(f"your test fails {len(said)} of the {len(correct)} correct "
                        f"modules: a correct module must pass{shown}")

    def graded():
        if hidden_seed is None:
            return check
        return behaviour_test(bug, correct, seed=hidden_seed, make=make)

    check.cases, check.run, check.verdicts = all_cases, run, expected
    check.hidden, check.graded = hidden_seed is not None, graded
    return check
