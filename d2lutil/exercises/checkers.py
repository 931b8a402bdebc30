"""The checkers: functions of an answer that return when it is right, else raise.

Each accepts every correct form (ints and floats, lists, tuples, NumPy arrays and
tensors, within a tolerance) and says what is off without saying what is right.

Each returned check also keeps what it was built with, read by the tests that run every
exercise's declared mistakes through its check (tests/exercises/test_exercises_declared.py):
``check.expected``, a right answer (for :func:`function`, the reference function), and
``check.mistakes``, the (wrong answer, message) pairs it recognises; some keep more
(``atol``, ``choices``, ``cases``, ...). Reading them changes nothing a check does. A
checker written in an exercise's module around one of these keeps the same (:func:`around`).
"""

import sys

import numpy as np

from d2lutil.exercises.answers import (
    NotAnswered,
    Wrong,
    as_array,
    as_float,
    as_truth,
    as_word,
    close_enough,
    exception_name,
    how_far,
    is_placeholder,
    kind_of,
    known_mistake,
)


def distinct(expected, mistakes, *, atol=0.0, rtol=0.0):
    """``mistakes`` without those that are ``expected`` or an earlier kept one, within
    ``atol + rtol * |value|`` for every number (values of another shape, or not numbers,
    are compared as they are): a variant's formula can make two slips, or a slip and the
    answer, coincide, and each kept mistake must get its own message."""
    def same(u, v):
        try:
            a, b = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            return u == v
        return a.shape == b.shape and bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))

    kept = []
    for value, message in mistakes:
        if not any(same(value, seen) for seen in [expected, *(v for v, _ in kept)]):
            kept.append((value, message))
    return kept


class Raised:
    """What a student's function raised for one case: the exception's type name and text."""

    __slots__ = ("type_name", "text")

    def __init__(self, type_name, text):
        self.type_name, self.text = str(type_name), str(text)

    def __repr__(self):
        return f"Raised({self.type_name!r}, {self.text!r})"


def _built_with(check, expected, mistakes=(), **more):
    """``check`` with ``expected``, ``mistakes`` and ``more`` as attributes (see above)."""
    check.expected, check.mistakes = expected, mistakes
    check.kind = sys._getframe(1).f_code.co_name  # "number", "integer", ...: the builder
    for name, value in more.items():
        setattr(check, name, value)
    return check


def around(inner, *, mistakes=None):
    """Decorate a checker written around ``inner`` (built here) that takes its right answers.

    It keeps what ``inner`` keeps, ``inner`` itself as ``wraps``, and ``mistakes`` (the
    wrong answers it recognises) if given, else ``inner``'s.
    """
    def keep(check):
        vars(check).update(vars(inner), wraps=inner)
        check.mistakes = inner.mistakes if mistakes is None else mistakes
        return check

    return keep


class CallResults(list):
    """A function answer given by its results: one per case of the checker, in order.

    Each item is what the student's function returned for that case, or a
    :class:`Raised`. A :func:`function` checker given a ``CallResults`` judges these
    results as if it had called the function itself, with the same messages.
    """



def number(expected, *, atol=0.0, rtol=1e-6, factor=None, mistakes=()):
    """A checker for one number: ``|answer - expected| <= atol + rtol * |expected|``.

    With ``factor`` (> 1, for a positive ``expected`` that is only an estimate, such as a
    threshold) it accepts any answer between ``expected / factor`` and
    ``expected * factor`` instead. ``mistakes`` is a list of (wrong value, message): an
    answer close to a typical wrong value gets that message instead of a generic one.
    """
    if factor is not None and not (factor > 1 and expected > 0):
        raise ValueError(f"factor must be > 1 with a positive expected value, got factor "
                         f"{factor!r} and expected {expected!r}")

    def close(x, value):
        if factor is None:
            return close_enough(x, value, atol, rtol)
        return value / factor <= x <= value * factor if x > 0 else False

    def check(answer):
        x = as_float(answer)
        if close(x, expected):
            return
        if factor is None:
            message = known_mistake(x, mistakes, lambda v: close(x, v))
        else:  # typical wrong values are themselves estimates: within 10 %
            message = known_mistake(x, mistakes, lambda v: abs(x - v) <= 0.1 * abs(v))
        raise Wrong(message or f"{x:.6g} is {how_far(x, expected, rtol=0.1 if factor else 0.02)}")

    return _built_with(check, expected, mistakes, atol=atol, rtol=rtol, factor=factor)


def integer(expected, *, mistakes=(), what="count", read=None):
    """A checker for a whole number (``9327``, ``9327.0``, a NumPy int or a tensor).

    ``read`` names a reader of d2lutil.exercises.readers (``"a_count"``: a set is not its
    size)."""
    reader = _reader(read)

    def check(answer):
        x = whole_number(answer, what, reader)
        if x == expected:
            return
        message = known_mistake(x, mistakes, lambda v: x == v)
        raise Wrong(message or f"{x:.0f} is {how_far(x, expected)}")

    return _built_with(check, expected, mistakes, what=what, read=read)


def numbers_close(expected, *, atol=0.0, rtol=1e-6, any_order=False, keys=None,
                  mistakes=(), read=None, name_shape=True):
    """A checker for an array of numbers (list, tuple, NumPy array or tensor).

    The shape must be ``expected``'s (extra axes of length 1 are allowed). With
    ``any_order`` the numbers may come in any order. With ``keys`` (one per number of a
    1-D ``expected``, e.g. the values of d) the answer may also be a dict with exactly
    those keys. ``mistakes``: (wrong array, message). ``read`` names a reader of
    d2lutil.exercises.readers that reads other right forms first (True/False, a mask that
    broadcasts). ``name_shape=False``: a wrong shape's message does not say the right one
    (when the shape is the answer to another part).
    """
    reader = _reader(read)
    expected = np.asarray(expected, dtype=float)
    if keys is not None and (expected.ndim != 1 or len(keys) != expected.size):
        raise ValueError(f"keys must give one key per number of a 1-D expected, got "
                         f"{len(keys)} keys for shape {expected.shape}")

    def check(answer):
        if isinstance(answer, dict):
            if keys is None:
                raise Wrong("expected numbers in a list, tuple, array or tensor, got a dict")
            if sorted(answer, key=repr) != sorted(keys, key=repr):
                raise Wrong(f"expected a dict with the keys {list(keys)}, got "
                            f"{list(answer)}")
            answer = [answer[k] for k in keys]
        if reader is not None:
            answer = reader(answer, expected.size)
        x = as_array(answer)
        if x.size != expected.size or np.squeeze(x).shape != np.squeeze(expected).shape:
            raise Wrong(f"wrong shape: expected {tuple(expected.shape)}, got {tuple(x.shape)}"
                        if name_shape else f"wrong shape: got {tuple(x.shape)}")
        x = x.reshape(expected.shape)
        want = expected
        if any_order:
            x, want = np.sort(x, axis=None), np.sort(want, axis=None)
        ok = np.abs(x - want) <= atol + rtol * np.abs(want)
        if ok.all():
            return
        for value, message in mistakes:
            value = np.asarray(value, dtype=float)
            if value.shape == want.shape and np.allclose(
                    np.sort(value, axis=None) if any_order else value,
                    x, atol=atol, rtol=rtol):
                raise Wrong(message)
        bad = int((~ok).sum())
        diff = x - want
        if np.allclose(diff, diff.flat[0]) and float(diff.flat[0]).is_integer():
            raise Wrong(f"every number is off by {diff.flat[0]:+g}")
        nonzero = (want != 0) & (x != 0)
        if nonzero.all():
            how = how_far(float(x.flat[0]), float(want.flat[0]))
            if how.startswith("too") and np.allclose(x / want, x.flat[0] / want.flat[0],
                                                     rtol=0.02):
                raise Wrong(f"every number is {how}")
        where = "" if any_order else f"; the first at index {np.argwhere(~ok)[0].tolist()}"
        raise Wrong(f"{bad} of {want.size} numbers are wrong{where}")

    return _built_with(check, expected, mistakes, atol=atol, rtol=rtol, any_order=any_order,
                       keys=keys, read=read, name_shape=name_shape)


def truth(expected, *, wrong_message=None):
    """A checker for a yes/no answer: True/False, a NumPy or 0-d tensor bool, "yes"/"no"."""
    def check(answer):
        if as_truth(answer) != expected:
            raise Wrong(wrong_message or "that is the wrong way round")

    return _built_with(check, expected,
                       [(not expected, wrong_message or "that is the wrong way round")])


def word(expected, choices, *, aliases=None, mistakes=()):
    """A checker for one word out of ``choices`` (case and surrounding spaces ignored).

    ``aliases`` maps other spellings to a choice (``{"hessian": "second"}``); ``mistakes``
    is a list of (wrong choice, message).
    """
    choices = [c.lower() for c in choices]
    aliases = {k.lower(): v.lower() for k, v in (aliases or {}).items()}
    if expected.lower() not in choices or not set(aliases.values()) <= set(choices):
        raise ValueError(f"expected and every alias must be one of the choices {choices}")

    def check(answer):
        text = as_word(answer, choices, aliases)
        if text != expected.lower():
            raise Wrong(dict(mistakes).get(text, f"{text!r} is not right"))

    return _built_with(check, expected, mistakes, choices=choices, aliases=aliases)


def exception_type(expected):
    """A checker for an exception: the class, an instance of it, or its name as a string."""
    def check(answer):
        name = exception_name(answer)
        if name != expected.__name__:
            raise Wrong(f"{name} is not what is raised")

    return _built_with(check, expected)


def whole_number(answer, what, reader=None):
    """The answer as a float that is a whole number, read by ``reader`` first; a Wrong
    that names ``what`` ("count of parameters") for any other number."""
    if reader is not None:
        answer = reader(answer, 1)
    x = as_float(answer)
    if not x.is_integer():
        raise Wrong(f"a {what} is a whole number, got {x:g}")
    return x


def _reader(read):
    """The reader of d2lutil.exercises.readers named ``read`` (None: none)."""
    if read is None:
        return None
    from d2lutil.exercises import readers

    if read not in readers.__all__:
        raise ValueError(f"read must be one of {readers.__all__}, got {read!r}")
    return getattr(readers, read)


def judge_calls(answer, cases, judge, describe):
    """Judge a function ``answer`` (or its :class:`CallResults`) on ``cases``.

    ``judge(i, case, result)`` raises :class:`Wrong` for a wrong result of case ``i``;
    ``describe(i, case)`` names a case. The message names the first case that fails and
    how many fail, never the right result; a placeholder result is "not answered".
    """
    given = isinstance(answer, CallResults)
    failures = []
    for i, case in enumerate(cases):
        if given:
            result = answer[i]
            if isinstance(result, Raised):
                raise Wrong(f"your function raised {result.type_name} ({result.text}) "
                            f"for {describe(i, case)}")
        else:
            try:
                result = answer(*case)
            except Exception as error:
                raise Wrong(f"your function raised {type(error).__name__} ({error}) "
                            f"for {describe(i, case)}") from None
        if is_placeholder(result):
            raise NotAnswered
        try:
            judge(i, case, result)
        except Wrong as wrong:
            failures.append((i, case, str(wrong)))
    if failures:
        i, case, why = failures[0]
        raise Wrong(f"wrong for {describe(i, case)} ({why}); wrong in {len(failures)} of "
                    f"{len(cases)} cases tried")


def function(reference, cases, *, result_checker, describe=repr, hidden=()):
    """A checker for a function the student writes: it must agree with ``reference``.

    ``cases`` is a list of argument tuples, or a function returning one (built only when
    a check runs). For each case, ``result_checker(reference(*case))`` checks the
    student's result; the message names the first case that fails (via ``describe``) and
    how many fail, never the right result.

    The checker also takes a :class:`CallResults` instead of a function (the results of
    calling it on the cases, computed elsewhere), and its ``cases()`` returns the list of
    cases to call it on.

    ``hidden`` are more cases, judged only at grading (``graded()``, a checker of the
    public and hidden cases together): a student's edition never holds them. Like
    ``cases``, a list of argument tuples or a function returning one.
    """
    def all_cases():
        return list(cases() if callable(cases) else cases)

    def check(answer):
        given = isinstance(answer, CallResults)
        if not given and not callable(answer):
            raise Wrong(f"expected a function, got {kind_of(answer)}")
        tried = all_cases()
        if given and len(answer) != len(tried):
            raise Wrong(f"expected the results of {len(tried)} cases, got {len(answer)}")
        judge_calls(answer, tried, lambda i, case, result: result_checker(
            reference(*case))(result), lambda i, case: describe(case))

    def graded():
        """The checker that grading uses: the public cases, then the hidden ones."""
        if not hidden:
            return checker
        return function(reference, lambda: all_cases() + list(
            hidden() if callable(hidden) else hidden), result_checker=result_checker,
            describe=describe)

    checker = _built_with(check, reference, cases=all_cases, result_checker=result_checker,
                          describe=describe, hidden=hidden, graded=graded)
    return checker
