"""The exercise mechanism: an :class:`Exercise` and what its checks return."""

import keyword
import math
import numbers
import sys

import numpy as np

from d2lutil.exercises import variants
from d2lutil.exercises.answers import NotAnswered, Wrong, is_placeholder
from d2lutil.exercises.display import Message, say, show, spans

PUBLIC_ONLY = ("the public checks pass; grading checks more cases that this notebook does "
               "not hold")
NO_ID = ("Your exercises depend on your student id: run the cell near the top that calls "
         "student(...) with your id first.")


class Verdict:
    """The result of ``Exercise.check``: truthy exactly when the answer is correct.

    It compares equal to ``True`` or ``False``. Jupyter displays nothing for it, because
    ``check`` has printed the message already; elsewhere its repr is ``True`` or ``False``.
    """

    __slots__ = ("correct", "message")

    def __init__(self, correct, message):
        self.correct = bool(correct)
        self.message = message

    def __bool__(self):
        return self.correct

    def __eq__(self, other):
        if isinstance(other, (bool, np.bool_, Verdict)):
            return self.correct == bool(other)
        return NotImplemented

    def __hash__(self):
        return hash(self.correct)

    def __repr__(self):
        return repr(self.correct)

    def _ipython_display_(self):
        """Show nothing: the message is printed by ``check``."""



class Exercise:
    """One exercise of a notebook, with ``check``, ``hint`` and ``solution``.

    Parameters
    ----------
    number : int
        The exercise's number in its notebook (``ex1`` is 1).
    parts : list of (name, checker)
        One entry per answer ``check`` takes, in order; ``name`` says what the answer is
        ("error of the even split"), ``checker`` is one of d2lutil.exercises.checkers or any
        function that raises :class:`Wrong` or :class:`NotAnswered`. No parts: the
        exercise is open-ended.
    answers : tuple of str, optional
        The names of the variables that the notebook's starter cell passes to ``check``,
        one per part, in order (``("params_with_bias", "depends_on_heads")``): the grader
        collects these variables from a submission, and the starter cell must pass
        exactly these (tests/exercises/test_exercise_cells.py). Every exercise of the
        chapter declares them.
    hints : list of str
        At least one hint, from gentle to nearly the answer; maths between $ (LaTeX),
        code between backticks (see d2lutil.exercises.display).
    solution : str
        The worked answer, written like the hints.
    open_part : str, optional
        The open-ended part of an otherwise checked exercise ("why a test misses it"),
        named after a correct answer so the student compares it with the solution.
    points : number or list of numbers, optional
        What each part is worth when graded (:meth:`check_part`): one number for every
        part, or one per part. Default 1 per part; an open-ended exercise has none. The
        chapter's scale: 1 for a look-up, 2 for a computation or a derivation, 3 for an
        implementation or a proof.
    rubric : list of (points, criterion), optional
        How an instructor marks the open part (``open_part``, or a wholly open-ended
        exercise) by hand: each criterion a sentence, its points by the same scale. Shown
        by :meth:`solution` after the worked answer; no check grades it.
    """

    def __init__(self, number, parts, *, hints, solution, answers=None, open_part=None,
                 points=None, rubric=None, variants=None, open_book=None, key=None):
        if not isinstance(number, int) or number < 1:
            raise ValueError(f"number must be a positive int, got {number!r}")
        self.number = number
        self.key = key or f"{sys._getframe(1).f_globals.get('__name__', '?')}.ex{number}"
        self.variants = _variants(variants, number)
        if self.variants is None:
            self._make_parts, self._make_hints = None, None
            parts, hints = _parts(parts), _hints(hints, number)
        else:
            if not callable(parts):
                raise TypeError(f"exercise {number} has variants, so parts must be a "
                                "function of their values returning the parts, got "
                                f"{type(parts).__name__}")
            self._make_parts = parts
            self._make_hints = hints if callable(hints) else None
            parts = _parts(parts(**self.variants[0]))
            hints = _hints(hints(**self.variants[0]) if callable(hints) else hints, number)
        if not isinstance(solution, str) or not solution.strip():
            raise ValueError("solution must be a non-empty string")
        spans(solution, f"the solution of exercise {number}")
        self._book_parts, self._book_hints = parts, hints
        self._built = {0: (parts, hints)}
        self._solution = solution
        self.open_part = open_part
        self.answers = _answers(answers, len(parts), number)
        self.points = _points_per_part(points, len(parts))
        self.rubric = _rubric(rubric, open_part is not None or not parts, number)
        self.open_book = _open_book(open_book, len(parts), number)
        self._next_hint = 1

    # --- variants ---------------------------------------------------------------------

    def variant(self, student_id=None):
        """The variant in force: 0 (the book's) without variants or, in the book, without
        an id; else the student's (see d2lutil.exercises.variants). None in the student
        edition before an id is given."""
        if self.variants is None:
            return 0
        student_id = student_id or variants.current_id()
        if student_id is None:
            return 0 if variants.EDITION == "book" else None
        return variants.variant_index(self.key, len(self.variants), student_id)

    def built(self, index):
        """(parts, hints) of variant ``index`` (built once, then kept)."""
        if index not in self._built:
            if self.variants is None or not 0 <= index < len(self.variants):
                count = 1 if self.variants is None else len(self.variants)
                raise IndexError(f"index must be a variant of exercise {self.number}, 0 to "
                                 f"{count - 1}, got {index!r}")
            params = self.variants[index]
            parts = _parts(self._make_parts(**params))
            if [n for n, _ in parts] != [n for n, _ in self._book_parts]:
                raise ValueError(f"variant {index} of exercise {self.number} names other "
                                 "parts than the book's")
            hints = (_hints(self._make_hints(**params), self.number)
                     if self._make_hints else self._book_hints)
            self._built[index] = (parts, hints)
        return self._built[index]

    @property
    def parts(self):
        """The parts, (name, checker) pairs, of the variant in force (the book's before an
        id is given)."""
        index = self.variant()
        return self.built(0 if index is None else index)[0]

    @property
    def hints(self):
        index = self.variant()
        return self.built(0 if index is None else index)[1]

    @property
    def params(self):
        """The values of the variant in force, a dict ({} without variants)."""
        if self.variants is None:
            return {}
        index = self.variant()
        return dict(self.variants[0 if index is None else index])

    def values(self):
        """Print the values of this exercise that the student's variant uses."""
        if self.variants is None:
            say(f"Exercise {self.number} is the same for everyone: it has no values of "
                "your own.")
            return
        index = self.variant()
        if index is None:
            say(NO_ID)
            return
        shown = ", ".join(f"{k} = {_show(v)}" for k, v in self.variants[index].items())
        book = ", ".join(f"{k} = {_show(v)}" for k, v in self.variants[0].items())
        if index == 0:
            say(f"Exercise {self.number} uses the book's values: {shown}.")
        else:
            say(f"Exercise {self.number}, your values: {shown} (where the text says "
                f"{book}).")

    def for_variant(self, index):
        """Exercise ``index``'s variant as an exercise of its own, without variants (for
        the grader and the student edition's build)."""
        parts, hints = self.built(index)
        copy = Exercise(self.number, parts, hints=hints, solution=self._solution,
                        answers=self.answers or None, open_part=self.open_part,
                        points=self.points, rubric=self.rubric or None, key=self.key)
        copy.open_book = self.open_book
        return copy

    @property
    def name(self):
        return f"ex{self.number}"

    @property
    def open_ended(self):
        """True when nothing of the exercise can be checked (no parts)."""
        return not self.parts

    @property
    def max_points(self):
        """The points of all parts together (0 for an open-ended exercise)."""
        return sum(self.points)

    def __repr__(self):
        kind = "open-ended" if self.open_ended else (
            f"checked, {len(self.parts)} answer{'s' if len(self.parts) > 1 else ''}")
        return (f"<Exercise {self.number} ({kind}): {self.name}.check(...), "
                f"{self.name}.hint(), {self.name}.solution()>")

    # --- check ----------------------------------------------------------------------------

    def check(self, *answers, **named):
        """Print whether ``answers`` are right, or what is off; return a :class:`Verdict`.

        Give one answer per part, in order. Never raises.
        """
        try:
            if named:
                dots = ", ".join(["..."] * max(len(self.parts), 1))
                correct, message = False, (f"Exercise {self.number}: give the answers by "
                                           f"position, {self.name}.check({dots}), not by "
                                           f"name ({', '.join(named)}).")
            else:
                correct, message = self._check(answers)
        except Exception as error:  # a bug in a checker must not stop "Run all"
            correct, message = False, (f"Exercise {self.number}: could not check this answer "
                                       f"({type(error).__name__}: {error}).")
        say(message)
        return Verdict(correct, message)

    def _check(self, answers):
        head = f"Exercise {self.number}"
        if self.variant() is None:
            return False, f"{head}: {NO_ID}"
        if self.open_ended:
            if not answers or all(is_placeholder(a) for a in answers):
                return False, (f"{head} (open-ended) is not answered yet: write your "
                               "explanation in place of the ... (as a string), then run the "
                               f"cell again. {self.name}.hint() gives a hint.")
            return False, (f"{head} is open-ended: no check can grade an explanation. "
                           + (f"Compare yours with {self.name}.solution()."
                              if variants.EDITION == "book" else
                              "Your instructor marks it."))
        if len(answers) != len(self.parts):
            names = ", ".join(name for name, _ in self.parts)
            dots = ", ".join(["..."] * len(self.parts))
            return False, (f"{head} asks for {len(self.parts)} answer"
                           f"{'s' if len(self.parts) > 1 else ''} ({names}), got "
                           f"{len(answers)}: {self.name}.check({dots}).")
        results = [self._check_part(checker, answer)
                   for (_, checker), answer in zip(self.parts, answers, strict=True)]
        if all(r == "not answered yet" for r in results):
            each = "each ..." if len(self.parts) > 1 else "the ..."
            return False, (f"{head} is not answered yet: replace {each} with your answer and "
                           "run the cell.")
        correct = all(r == "correct" for r in results)
        if correct:
            message = f"{head}: correct."
            if any(getattr(checker, "public_only", False) for _, checker in self.parts):
                message = f"{head}: {PUBLIC_ONLY}."
            if self.open_part:
                part = self.open_part[:1].upper() + self.open_part[1:]
                message += (f" {part} is open-ended, so no check grades it: "
                            + (f"compare your reasoning with {self.name}.solution()."
                               if variants.EDITION == "book" else
                               "your instructor marks it."))
            return True, message
        if len(self.parts) == 1:  # one sentence: no "." after a "?" that ends it
            end = "" if results[0].endswith((".", "?", "!")) else "."
            return False, f"{head}: {results[0]}{end}{self._try_again()}"
        lines = [f"{head}:"] + [f"- {name}: {r}" for (name, _), r in
                                zip(self.parts, results, strict=True)]
        return False, "\n".join(lines) + "\n" + self._try_again().strip()

    def check_part(self, index, answer, checker=None):
        """Check the answer to part ``index`` (from 0, in the order of ``parts``) quietly.

        Prints nothing and never raises for any ``answer``; returns a :class:`PartResult`
        whose message is the one ``check`` shows for that part ("correct", "not answered
        yet", "not right yet: ...") and whose points are the part's points when correct,
        else 0. A bad ``index`` is an IndexError that names it. ``checker``, if given,
        judges instead of the part's own (the grader's, with its hidden cases).
        """
        if isinstance(index, bool) or not isinstance(index, int) or not (
                0 <= index < len(self.parts)):
            raise IndexError(f"index must be a part of exercise {self.number}, 0 to "
                             f"{len(self.parts) - 1}, got {index!r}")
        name, own = self.parts[index]
        checker = own if checker is None else checker
        try:
            message = self._check_part(checker, answer)
        except Exception as error:  # an answer whose own methods fail: a message, no raise
            message = f"could not check this answer ({type(error).__name__}: {error})"
        correct = message == "correct"
        worth = self.points[index]
        return PartResult(self.number, index, name, correct, message,
                          worth if correct else 0, worth)

    def _try_again(self):
        return f" Try again, or {self.name}.hint() for a hint."

    @staticmethod
    def _check_part(checker, answer):
        if is_placeholder(answer):
            return "not answered yet"
        try:
            checker(answer)
        except NotAnswered:
            return "not answered yet"
        except Wrong as wrong:
            return f"not right yet: {wrong}"
        except Exception as error:
            return f"could not check this answer ({type(error).__name__}: {error})"
        return "correct"

    # --- hints and solution ---------------------------------------------------------------

    def hint(self, level=None):
        """Show a hint: the next one at each call, or hint number ``level`` (from 1).

        In Jupyter it is displayed as Markdown with its maths typeset (a :class:`Message`);
        elsewhere its raw text is printed.
        """
        count = len(self.hints)
        if level is None:
            level = self._next_hint
        if not isinstance(level, int) or isinstance(level, bool) or not 1 <= level <= count:
            say(f"Exercise {self.number} has {count} hint{'s' if count > 1 else ''}: "
                f"{self.name}.hint() for the next one, or {self.name}.hint(1)"
                + (f" to {self.name}.hint({count})." if count > 1 else "."))
            return
        self._next_hint = min(level + 1, count)
        more = (f" (`{self.name}.hint()` again for the next one.)" if level < count else "")
        show(Message(f"Exercise {self.number}, hint {level} of {count}:",
                     self.hints[level - 1] + more))

    @property
    def rubric_points(self):
        """The points of the rubric's criteria together (0 without a rubric)."""
        return sum(points for points, _ in self.rubric)

    def solution(self):
        """Show the worked answer, then the rubric of the open part if there is one:
        Markdown with maths in Jupyter, raw text elsewhere."""
        text = self._solution
        if self.rubric:
            text += ("\n\nHow the open part is marked (by hand, "
                     f"{_count(self.rubric_points, 'point')}):\n" + "\n".join(
                         f"- {_count(points, 'point')}: {criterion}"
                         for points, criterion in self.rubric))
        show(Message(f"Exercise {self.number}, solution:", text))


def _parts(parts):
    parts = list(parts)
    for part in parts:
        if not (isinstance(part, tuple) and len(part) == 2 and isinstance(part[0], str)
                and callable(part[1])):
            raise TypeError(f"each part must be a (name, checker) pair, got {part!r}")
    return parts


def _hints(hints, number):
    hints = list(hints)
    if not hints or not all(isinstance(h, str) and h.strip() for h in hints):
        raise ValueError("hints must be a non-empty list of non-empty strings")
    for i, hint in enumerate(hints, 1):
        spans(hint, f"hint {i} of exercise {number}")
    return hints


def _answers(given, count, number):
    """``answers`` of ``Exercise``: a tuple of ``count`` distinct variable names, or () when
    none are declared."""
    if given is None:
        return ()
    names = () if isinstance(given, str) else tuple(given)
    if len(names) != count or len(set(names)) != count or not all(
            isinstance(n, str) and n.isidentifier() and not keyword.iskeyword(n)
            for n in names):
        raise ValueError(f"answers of exercise {number} must be {count} distinct variable "
                         f"names, one per part, got {given!r}")
    return names


def _variants(given, number):
    """``variants`` of ``Exercise``: None, or a list of at least 2 dicts with the same
    keys (the book's values first), each value distinct from the book's somewhere."""
    if given is None:
        return None
    items = [dict(v) if isinstance(v, dict) else v for v in given]
    if len(items) < 2 or not all(isinstance(v, dict) and v for v in items):
        raise ValueError(f"variants of exercise {number} must be a list of at least 2 "
                         f"non-empty dicts (the book's values first), got {given!r}")
    keys = list(items[0])
    for v in items[1:]:
        if list(v) != keys:
            raise ValueError(f"every variant of exercise {number} must name the values "
                             f"{keys}, got {list(v)}")
        if v == items[0]:
            raise ValueError(f"a variant of exercise {number} repeats the book's values "
                             f"{v}: a student's variant must differ from the book's")
    return items


def _open_book(given, count, number):
    """``open_book`` of ``Exercise``: {part index: why its answer is the same for
    everyone}."""
    given = dict(given or {})
    for index, why in given.items():
        if not (isinstance(index, int) and 0 <= index < count and isinstance(why, str)
                and why.strip()):
            raise ValueError(f"open_book of exercise {number} maps a part index (0 to "
                             f"{count - 1}) to why it is the same for everyone, got "
                             f"{index!r}: {why!r}")
    return given


def _show(value):
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_show(v) for v in value) + ")"
    if isinstance(value, str):
        return repr(value)
    return str(value)


def _count(number, noun):
    return f"{number:g} {noun}{'' if number == 1 else 's'}"


def _rubric(rubric, has_open_part, number):
    """``rubric`` of ``Exercise`` as a list of (points, criterion) pairs."""
    if rubric is None:
        return []
    if not has_open_part:
        raise ValueError(f"rubric is for an open part, and exercise {number} has none "
                         "(give open_part too)")
    items = list(rubric)
    if not items or not all(
            isinstance(item, tuple) and len(item) == 2
            and isinstance(item[0], numbers.Real) and not isinstance(item[0], bool)
            and 0 < item[0] <= 3 and isinstance(item[1], str) and item[1].strip()
            for item in items):
        raise ValueError("rubric must be a non-empty list of (points, criterion) pairs, "
                         f"points from above 0 to 3 and a non-empty criterion, got {rubric!r}")
    for _, criterion in items:
        spans(criterion, f"the rubric of exercise {number}")
    return items


def _points_per_part(points, count):
    """``points`` of ``Exercise`` as a list with one number per part."""
    if points is None:
        return [1] * count
    each = list(points) if isinstance(points, (list, tuple)) else [points] * count
    if len(each) != count or not all(
            isinstance(p, numbers.Real) and not isinstance(p, (bool, np.bool_)) and p >= 0
            and math.isfinite(p) for p in each):
        raise ValueError(f"points must be a number >= 0 or a list of {count} such numbers "
                         f"(one per part), got {points!r}")
    return each


class PartResult:
    """The result of :meth:`Exercise.check_part`: one part of an exercise, graded.

    ``exercise`` (its number), ``index`` (of the part, from 0), ``name`` (the part's),
    ``correct``, ``message`` (as ``check`` says it for that part), ``points`` (earned) and
    ``max_points`` (what the part is worth). Truthy exactly when correct.
    """

    __slots__ = ("exercise", "index", "name", "correct", "message", "points", "max_points")

    def __init__(self, exercise, index, name, correct, message, points, max_points):
        self.exercise, self.index, self.name = exercise, index, name
        self.correct, self.message = bool(correct), message
        self.points, self.max_points = points, max_points

    def __bool__(self):
        return self.correct

    def __repr__(self):
        return (f"<PartResult ex{self.exercise} part {self.index} ({self.name}): "
                f"{self.points}/{self.max_points}, {self.message!r}>")


