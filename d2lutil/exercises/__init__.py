r"""Exercises that answer back: ``check``, ``hint`` and ``solution``.

The exercises of notebook ``NN`` are ``ex1``, ``ex2``, ... in ``d2lutil.exercises.nbNN``,
each an :class:`Exercise`. In a notebook::

    from d2lutil.exercises.nb01 import ex1

    best_error = ...        # the placeholder the student replaces
    ex1.check(best_error)   # says "correct", or what is off, or "not answered yet"
    ex1.hint()              # the next hint; ex1.hint(2) asks for a given one
    ex1.solution()          # the worked answer

``check`` never raises, whatever it is given: a wrong answer, a wrong type or a function
that fails all end in a printed message. It says what is wrong without giving the answer
away (wrong type or shape, wrong value, off by a factor, off by one) and returns a
:class:`Verdict`, truthy exactly when every checked part is right, so a solutions notebook
can ``assert ex1.check(...)``. In a notebook the verdict shows nothing beyond the message.

An exercise has one *part* per answer it asks for, each with a checker: a function that
takes the answer and returns when it is right, or raises :class:`Wrong` with a message for
the student (or :class:`NotAnswered`). The checkers cover the common cases and accept
every correct form: ints and floats, lists, tuples, NumPy arrays and tensors, within a
tolerance. A question that asks for an explanation is *open-ended*: nothing checks it; it
has hints and a solution only (an exercise without parts, or the ``open_part`` of one).

Hints and solutions are written as Markdown-light text: maths between single dollars in
LaTeX (``$\sum_i \xi_i c_i(x)$``), code between backticks (```ex1.hint()```). In a
Jupyter notebook ``hint`` and ``solution`` display them as Markdown, the maths typeset (a
:class:`Message`); in a terminal they print the text as written. ``check`` messages are
plain text. Everything printed is wrapped to ``WIDTH`` = 79 characters.

For grading, each part carries points (``Exercise(..., points=...)``, 1 per part unless
given) and the name of its answer (``answers=(...)``: the variables the starter cell passes
to ``check``, which the grader collects), and :meth:`Exercise.check_part` checks one part
quietly: it prints nothing and returns a :class:`PartResult` (correct or not, the part's
message, the points earned). A function answer can be checked from its results alone:
:class:`CallResults` holds what the student's function returned (or :class:`Raised`) for
each of the checker's cases (``checker.cases()``), computed elsewhere, e.g. in the
student's own kernel (``course/grade.py``).

A class answer (a multi-head attention the student writes) is checked by
``modules.implementation``: against the reference with the same weights, naming the first
stage that departs; for grading, its ``run`` brings back only outputs and hooked tensors.

The package's modules: ``core`` (:class:`Exercise`, :class:`Verdict`,
:class:`PartResult`), ``answers`` (reading an answer, :class:`Wrong`), ``checkers`` (the
checkers, :class:`CallResults`), ``modules`` (a class the student writes) and ``display``
(:class:`Message`, Markdown or raw text).
"""

from d2lutil.exercises.answers import NotAnswered, Wrong, as_array, as_float
from d2lutil.exercises.checkers import (
    CallResults,
    Raised,
    distinct,
    exception_type,
    function,
    integer,
    number,
    numbers_close,
    truth,
    word,
)
from d2lutil.exercises.core import Exercise, PartResult, Verdict
from d2lutil.exercises.display import WIDTH, Message
from d2lutil.exercises.variants import student

__all__ = [
    "Exercise",
    "Verdict",
    "PartResult",
    "CallResults",
    "Raised",
    "Message",
    "Wrong",
    "NotAnswered",
    "as_array",
    "as_float",
    "number",
    "numbers_close",
    "integer",
    "truth",
    "word",
    "exception_type",
    "distinct",
    "function",
    "WIDTH",
    "student",
]
