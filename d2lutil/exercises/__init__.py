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
the student (or :class:`NotAnswered`). The checkers below cover the common cases and accept
every correct form: ints and floats, lists, tuples, NumPy arrays and tensors, within a
tolerance. A question that asks for an explanation is *open-ended*: nothing checks it; it
has hints and a solution only (an exercise without parts, or the ``open_part`` of one).

Hints and solutions are written as Markdown-light text: maths between single dollars in
LaTeX (``$\sum_i \xi_i c_i(x)$``), code between backticks (```ex1.hint()```), everything
else literal (``*``, ``_`` and ``[`` need no escaping; a literal dollar is not possible).
In a Jupyter notebook ``hint`` and ``solution`` display them as Markdown, the maths
typeset (a :class:`Message`, with the plain text as its text/plain fallback); in a
terminal, or wherever no Jupyter kernel runs, they print the plain text: the maths
written out by :func:`plain_math` (``sum_i xi_i c_i(x)``), the backticks dropped. Its
LaTeX is the small subset that :func:`plain_math` knows; an exercise with any other
command fails when it is created. ``check`` messages are plain text, printed as they are.
Everything printed is wrapped to ``WIDTH`` = 79 characters, the notebooks' line length.

For grading, each part carries points (``Exercise(..., points=...)``, 1 per part unless
given) and :meth:`Exercise.check_part` checks one part quietly: it prints nothing and
returns a :class:`PartResult` (correct or not, the part's message, the points earned). A
function answer can be checked from its results alone: :class:`CallResults` holds what the
student's function returned (or :class:`Raised`) for each of the checker's cases
(``checker.cases()``), computed elsewhere, e.g. in the student's own kernel
(``tools/grade.py``).
"""

import math
import numbers
import re
import sys
import textwrap

import numpy as np

__all__ = [
    "Exercise",
    "Verdict",
    "PartResult",
    "CallResults",
    "Raised",
    "Message",
    "plain_math",
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
    "function",
]

WIDTH = 79  # every line a notebook prints fits the notebooks' 79 columns
FACTORS = (2, 3, 4, 5, 8, 10, 100, 1000)


class Wrong(Exception):
    """Raised by a checker: the answer is wrong; the message says how, not what is right."""


class NotAnswered(Exception):
    """Raised by a checker when the answer is (or holds) the placeholder ``...`` or None."""


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


def _is_placeholder(answer):
    if answer is Ellipsis or answer is None:
        return True
    if isinstance(answer, (list, tuple)):
        return any(_is_placeholder(a) for a in answer)
    if isinstance(answer, dict):
        return any(_is_placeholder(a) for a in answer.values())
    return False


def _say(text):
    """Print ``text`` wrapped to WIDTH columns, paragraph by paragraph."""
    print(_wrap(text))


def _wrap(text):
    """``text`` wrapped to WIDTH columns, each line of it a paragraph ("- " a list item)."""
    return "\n".join(textwrap.fill(p, WIDTH, subsequent_indent="  " if p.startswith("- ")
                                   else "") if p.strip() else p for p in text.split("\n"))


# --- hints and solutions: Markdown with maths, or plain text -------------------------------

_SPAN = re.compile(r"(`[^`]*`|\$[^$]*\$)")

_GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta",
    "iota", "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon",
    "phi", "varphi", "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi",
    "Pi", "Sigma", "Phi", "Psi", "Omega",
}
_WORDS = {"sum", "prod", "log", "exp", "min", "max", "det", "in", "mod"}
_SYMBOLS = {
    "cdot": "*", "times": "x", "le": "<=", "leq": "<=", "ge": ">=", "geq": ">=",
    "ne": "!=", "neq": "!=", "approx": "~", "to": "->", "rightarrow": "->", "infty": "inf",
    "ldots": "...", "dots": "...", "cdots": "...", "top": "T", "bmod": "mod", "pm": "+-",
    "lvert": "|", "rvert": "|", "vert": "|", "mid": "|", "lVert": "||", "rVert": "||",
    "quad": " ", "qquad": " ", ",": " ", ";": " ", ":": " ", " ": " ", "!": "",
    "%": "%", "{": "{", "}": "}", "_": "_", "#": "#", "&": "&",
    "left": "", "right": "", "big": "", "Big": "", "bigl": "", "bigr": "", "Bigl": "",
    "Bigr": "",
}
_TEXT_COMMANDS = {"mathrm", "operatorname", "text", "textrm", "mathbf", "mathit", "mathcal",
                  "mathbb", "boldsymbol", "mathsf", "mathtt"}
_MATH_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|[{}^_]|[^\\{}^_]")


def plain_math(latex):
    r"""The maths of ``latex`` written out in plain text: ``\frac{H_{ii}}{2}`` is ``H_ii/2``.

    It knows a small subset of LaTeX, enough for an exercise's formulas: Greek letters
    (``\xi`` is ``xi``); ``\sum``, ``\log``, ``\min`` ... (their names); ``\frac{a}{b}``
    and ``\tfrac`` (``a/b``, each side in brackets unless it is one term); ``\sqrt{x}``
    (``sqrt(x)``); sub- and superscripts (``x_{ij}`` is ``x_ij``, ``e^{a + b}`` is
    ``e^(a + b)``); ``\mathrm{Var}``, ``\mathbf{g}``, ``\mathbb{R}`` and the like (their
    text); relations and operators (``\le`` is ``<=``, ``\ne`` is ``!=``, ``\cdot`` is
    ``*``, ``\times`` is ``x``, ``\approx`` is ``~``, ``\bmod`` is ``mod``); ``\dots``;
    spacing and ``\left``/``\right`` (dropped). Any other command is a ValueError that
    names it.
    """
    if not isinstance(latex, str):
        raise TypeError(f"latex must be a str, got {type(latex).__name__}")
    tokens = _MATH_TOKEN.findall(latex)
    text, end = _plain_tokens(tokens, 0, latex)
    if end != len(tokens):
        raise ValueError(f"unbalanced }} in the maths ${latex}$")
    return re.sub(r" {2,}", " ", text).strip()


def _plain_tokens(tokens, i, latex, until_close=False):
    """Plain text of tokens[i:] up to the matching ``}``; returns it and where it stopped."""
    out = ""
    while i < len(tokens):
        token = tokens[i]
        if token == "}":
            if until_close:
                return out, i + 1
            return out, i
        if token == "{":
            inner, i = _group(tokens, i, latex)
            out += inner
            continue
        if token in ("_", "^"):
            inner, i = _argument(tokens, i + 1, latex)
            simple = re.fullmatch(r"-?[\w.]+|\||'+|\*+|\([^()]*\)", inner)
            out += token + (inner if simple else f"({inner})")
            continue
        i += 1
        if token == "~":
            out += " "
        elif not token.startswith("\\"):
            out += token
        elif token[1:] in _SYMBOLS:
            out += _SYMBOLS[token[1:]]
        elif token[1:] in _GREEK or token[1:] in _WORDS:
            word = "epsilon" if token[1:] == "varepsilon" else (
                "phi" if token[1:] == "varphi" else token[1:])
            out += (" " if out[-1:].isalnum() else "") + word
        elif token[1:] in _TEXT_COMMANDS:
            inner, i = _argument(tokens, i, latex)
            out += (" " if out[-1:].isalnum() else "") + inner
        elif token in ("\\frac", "\\tfrac", "\\dfrac"):
            top, i = _argument(tokens, i, latex)
            bottom, i = _argument(tokens, i, latex)
            out += f"{_bracket(top)}/{_bracket(bottom)}"
        elif token == "\\sqrt":
            inner, i = _argument(tokens, i, latex)
            out += f"sqrt({inner})"
        else:
            raise ValueError(f"the plain-text rendering does not know {token} (in the maths "
                             f"${latex}$): see plain_math for the LaTeX it knows")
    if until_close:
        raise ValueError(f"unbalanced {{ in the maths ${latex}$")
    return out, i


def _group(tokens, i, latex):
    """The plain text of the braced group that starts at tokens[i] (a ``{``)."""
    inner, i = _plain_tokens(tokens, i + 1, latex, until_close=True)
    return re.sub(r" {2,}", " ", inner).strip(), i


def _argument(tokens, i, latex):
    """A command's argument at tokens[i]: a braced group or one token (spaces skipped)."""
    while i < len(tokens) and tokens[i] == " ":
        i += 1
    if i == len(tokens) or tokens[i] == "}":
        raise ValueError(f"a command lacks its argument in the maths ${latex}$")
    if tokens[i] == "{":
        return _group(tokens, i, latex)
    return _plain_tokens(tokens[i:i + 1], 0, latex)[0], i + 1


def _bracket(text):
    """``text`` as one side of a fraction: in brackets unless it is a single term."""
    depth = 0
    for char in text:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif depth == 0 and char in " +-*/,=<>":
            return f"({text})"
    return text


def _spans(text, what):
    """``text`` cut into ("text" | "math" | "code", content) pieces; checks the maths."""
    pieces = []
    for piece in _SPAN.split(text):
        if piece.startswith("`") and piece.endswith("`") and len(piece) > 1:
            pieces.append(("code", piece[1:-1]))
        elif piece.startswith("$") and piece.endswith("$") and len(piece) > 2:
            pieces.append(("math", piece[1:-1]))
        elif "$" in piece or "`" in piece:
            mark = "$" if "$" in piece else "`"
            raise ValueError(f"{what} has an unmatched {mark}: maths goes between two $, "
                             f"code between two backticks: {text!r}")
        elif piece:
            pieces.append(("text", piece))
    for kind, content in pieces:
        if kind == "math":
            try:
                plain_math(content)
            except ValueError as error:
                raise ValueError(f"{what}: {error}") from None
    return pieces


_MARKDOWN_SPECIAL = re.compile(r"([\\*_\[\]<>#|~])")


def _markdown(text):
    """Markdown of hint or solution ``text``: its maths and code as they are, the rest
    escaped, each line a paragraph ("- " lines a list)."""
    out = []
    for kind, content in _spans(text, "the text"):
        if kind == "math":
            out.append(f"${content}$")
        elif kind == "code":
            out.append(f"`{content}`")
        else:
            out.append(_MARKDOWN_SPECIAL.sub(r"\\\1", content))
    lines = "".join(out).split("\n")
    return "".join(line + ("\n" if i + 1 < len(lines) and line.startswith("- ")
                           and lines[i + 1].startswith("- ") else "\n\n")
                   for i, line in enumerate(lines)).rstrip("\n")


def _plain(text):
    """Plain text of hint or solution ``text``: the maths written out, backticks dropped."""
    return "".join(plain_math(content) if kind == "math" else content
                   for kind, content in _spans(text, "the text"))


class Message:
    """A hint or a solution as shown: Markdown with maths in Jupyter, plain text elsewhere.

    ``Message("Exercise 1, hint 1 of 2:", text)`` holds ``text`` (maths between $, code
    between backticks) after the bold ``lead``. ``markdown`` is what Jupyter renders (its
    ``_repr_markdown_``); ``plain`` is the same with the maths written out by
    :func:`plain_math`, wrapped to WIDTH: its ``str`` and ``repr``, Jupyter's text/plain.
    """

    __slots__ = ("markdown", "plain")

    def __init__(self, lead, text):
        self.markdown = f"**{_markdown(lead)}** {_markdown(text)}"
        self.plain = _wrap(f"{_plain(lead)} {_plain(text)}")

    def _repr_markdown_(self):
        return self.markdown

    def __repr__(self):
        return self.plain

    __str__ = __repr__


def _jupyter_display():
    """IPython's ``display`` when a Jupyter kernel runs this code, else None.

    IPython is never imported here: a kernel has imported it already.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    from IPython.display import display

    return display


def _show(message):
    """Display ``message`` as Markdown in Jupyter; print its plain text elsewhere."""
    display = _jupyter_display()
    if display is None:
        print(message.plain)
    else:
        display(message)


class Exercise:
    """One exercise of a notebook, with ``check``, ``hint`` and ``solution``.

    Parameters
    ----------
    number : int
        The exercise's number in its notebook (``ex1`` is 1).
    parts : list of (name, checker)
        One entry per answer ``check`` takes, in order; ``name`` says what the answer is
        ("error of the even split"), ``checker`` is one of this module's checkers or any
        function that raises :class:`Wrong` or :class:`NotAnswered`. No parts: the
        exercise is open-ended.
    hints : list of str
        At least one hint, from gentle to nearly the answer; maths between $ (the LaTeX
        of :func:`plain_math`), code between backticks (see the module's docstring).
    solution : str
        The worked answer, written like the hints.
    open_part : str, optional
        The open-ended part of an otherwise checked exercise ("why a test misses it"),
        named after a correct answer so the student compares it with the solution.
    points : number or list of numbers, optional
        What each part is worth when graded (:meth:`check_part`): one number for every
        part, or one per part. Default 1 per part; an open-ended exercise has none.
    """

    def __init__(self, number, parts, *, hints, solution, open_part=None, points=None):
        if not isinstance(number, int) or number < 1:
            raise ValueError(f"number must be a positive int, got {number!r}")
        parts = list(parts)
        for part in parts:
            if not (isinstance(part, tuple) and len(part) == 2 and isinstance(part[0], str)
                    and callable(part[1])):
                raise TypeError(f"each part must be a (name, checker) pair, got {part!r}")
        hints = list(hints)
        if not hints or not all(isinstance(h, str) and h.strip() for h in hints):
            raise ValueError("hints must be a non-empty list of non-empty strings")
        if not isinstance(solution, str) or not solution.strip():
            raise ValueError("solution must be a non-empty string")
        for i, hint in enumerate(hints, 1):
            _spans(hint, f"hint {i} of exercise {number}")
        _spans(solution, f"the solution of exercise {number}")
        self.number = number
        self.parts = parts
        self.hints = hints
        self._solution = solution
        self.open_part = open_part
        self.points = _points_per_part(points, len(parts))
        self._next_hint = 1

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
        _say(message)
        return Verdict(correct, message)

    def _check(self, answers):
        head = f"Exercise {self.number}"
        if self.open_ended:
            if not answers or all(_is_placeholder(a) for a in answers):
                return False, (f"{head} (open-ended) is not answered yet: write your "
                               "explanation in place of the ... (as a string), then run the "
                               f"cell again. {self.name}.hint() gives a hint.")
            return False, (f"{head} is open-ended: no check can grade an explanation. Compare "
                           f"yours with {self.name}.solution().")
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
            if self.open_part:
                part = self.open_part[:1].upper() + self.open_part[1:]
                message += (f" {part} is open-ended, so no check grades it: compare your "
                            f"reasoning with {self.name}.solution().")
            return True, message
        if len(self.parts) == 1:
            return False, f"{head}: {results[0]}.{self._try_again()}"
        lines = [f"{head}:"] + [f"- {name}: {r}" for (name, _), r in
                                zip(self.parts, results, strict=True)]
        return False, "\n".join(lines) + "\n" + self._try_again().strip()

    def check_part(self, index, answer):
        """Check the answer to part ``index`` (from 0, in the order of ``parts``) quietly.

        Prints nothing and never raises for any ``answer``; returns a :class:`PartResult`
        whose message is the one ``check`` shows for that part ("correct", "not answered
        yet", "not right yet: ...") and whose points are the part's points when correct,
        else 0. A bad ``index`` is an IndexError that names it.
        """
        if isinstance(index, bool) or not isinstance(index, int) or not (
                0 <= index < len(self.parts)):
            raise IndexError(f"index must be a part of exercise {self.number}, 0 to "
                             f"{len(self.parts) - 1}, got {index!r}")
        name, checker = self.parts[index]
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
        if _is_placeholder(answer):
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
        elsewhere its plain text is printed.
        """
        count = len(self.hints)
        if level is None:
            level = self._next_hint
        if not isinstance(level, int) or isinstance(level, bool) or not 1 <= level <= count:
            _say(f"Exercise {self.number} has {count} hint{'s' if count > 1 else ''}: "
                 f"{self.name}.hint() for the next one, or {self.name}.hint(1)"
                 + (f" to {self.name}.hint({count})." if count > 1 else "."))
            return
        self._next_hint = min(level + 1, count)
        more = (f" (`{self.name}.hint()` again for the next one.)" if level < count else "")
        _show(Message(f"Exercise {self.number}, hint {level} of {count}:",
                      self.hints[level - 1] + more))

    def solution(self):
        """Show the worked answer: Markdown with maths in Jupyter, plain text elsewhere."""
        _show(Message(f"Exercise {self.number}, solution:", self._solution))


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


class Raised:
    """What a student's function raised for one case: the exception's type name and text."""

    __slots__ = ("type_name", "text")

    def __init__(self, type_name, text):
        self.type_name, self.text = str(type_name), str(text)

    def __repr__(self):
        return f"Raised({self.type_name!r}, {self.text!r})"


class CallResults(list):
    """A function answer given by its results: one per case of the checker, in order.

    Each item is what the student's function returned for that case, or a
    :class:`Raised`. A :func:`function` checker given a ``CallResults`` judges these
    results as if it had called the function itself, with the same messages.
    """


# --- reading answers --------------------------------------------------------------------------

def _kind(answer):
    """'an int', 'a str', ...: the type of an answer, for a message."""
    name = type(answer).__name__
    return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"


def as_array(answer):
    """The answer as a float64 NumPy array: numbers, nested lists and tuples, arrays, tensors."""
    if isinstance(answer, (str, bytes)):
        raise Wrong(f"expected numbers, got a string ({answer!r}); write them without quotes")
    if hasattr(answer, "detach") and hasattr(answer, "cpu"):  # a torch tensor
        answer = answer.detach().cpu().numpy()
    try:
        raw = np.asarray(answer)
    except ValueError:
        raise Wrong("expected numbers in rows of equal length") from None
    if raw.dtype.kind == "b":
        raise Wrong("expected numbers, got True/False values")
    if raw.dtype.kind in "USO":
        if raw.dtype.kind in "US" or any(isinstance(a, (str, bytes, bool, np.bool_))
                                        for a in raw.flat):
            raise Wrong(f"expected numbers, got {_kind(answer)} holding other things")
        try:  # e.g. a list of 0-d tensors
            raw = np.asarray([float(a) for a in raw.flat], dtype=float).reshape(raw.shape)
        except (TypeError, ValueError):
            raise Wrong(f"expected numbers, got {_kind(answer)} holding other things") from None
    if raw.dtype.kind == "c":
        raise Wrong("expected real numbers, got complex ones")
    if raw.dtype.kind not in "iuf":
        raise Wrong(f"expected numbers, got {_kind(answer)}")
    array = raw.astype(float)
    if not np.isfinite(array).all():
        raise Wrong("not every number is finite (inf or nan)")
    return array


def as_float(answer):
    """One number from an int, float, NumPy scalar, one-element list, array or tensor."""
    if isinstance(answer, numbers.Number) and not isinstance(answer, (bool, np.bool_)):
        if isinstance(answer, numbers.Complex) and not isinstance(answer, numbers.Real):
            raise Wrong("expected a real number, got a complex one")
        value = float(answer)
        if not math.isfinite(value):
            raise Wrong(f"expected a finite number, got {value}")
        return value
    array = as_array(answer)
    if array.size != 1:
        raise Wrong(f"expected one number, got {array.size} (shape {array.shape})")
    return float(array.reshape(()))


def _close(x, expected, atol, rtol):
    return abs(x - expected) <= atol + rtol * abs(expected)


def _how_far(x, expected, rtol=0.02):
    """How a wrong number relates to the right one, without saying the right one."""
    if expected != 0 and x != 0:
        ratio = x / expected
        if abs(ratio + 1) < rtol:
            return "right in size but of the wrong sign"
        for factor in FACTORS:
            if abs(ratio / factor - 1) < rtol:
                return f"too large by a factor of about {factor}"
            if abs(ratio * factor - 1) < rtol:
                return f"too small by a factor of about {factor}"
        if 0 < expected < 1 and abs(x - math.sqrt(expected)) < rtol * math.sqrt(expected):
            return "close to the square root of the right value"
        if 0 < expected < 1 and abs(x - expected ** 2) < rtol * expected ** 2:
            return "close to the square of the right value"
    if float(x).is_integer() and float(expected).is_integer() and abs(x - expected) == 1:
        return "off by one"
    return "not the right value"


def _mistake(x, mistakes, close):
    for value, message in mistakes:
        if close(value):
            return message
    return None


# --- checkers -------------------------------------------------------------------------

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
            return _close(x, value, atol, rtol)
        return value / factor <= x <= value * factor if x > 0 else False

    def check(answer):
        x = as_float(answer)
        if close(x, expected):
            return
        if factor is None:
            message = _mistake(x, mistakes, lambda v: close(x, v))
        else:  # typical wrong values are themselves estimates: within 10 %
            message = _mistake(x, mistakes, lambda v: abs(x - v) <= 0.1 * abs(v))
        raise Wrong(message or f"{x:.6g} is {_how_far(x, expected, rtol=0.1 if factor else 0.02)}")

    return check


def integer(expected, *, mistakes=(), what="count"):
    """A checker for a whole number (``9327``, ``9327.0``, a NumPy int or a tensor)."""
    def check(answer):
        x = as_float(answer)
        if not x.is_integer():
            raise Wrong(f"a {what} is a whole number, got {x:g}")
        if x == expected:
            return
        message = _mistake(x, mistakes, lambda v: x == v)
        raise Wrong(message or f"{x:.0f} is {_how_far(x, expected)}")

    return check


def numbers_close(expected, *, atol=0.0, rtol=1e-6, any_order=False, keys=None,
                  mistakes=()):
    """A checker for an array of numbers (list, tuple, NumPy array or tensor).

    The shape must be ``expected``'s (extra axes of length 1 are allowed). With
    ``any_order`` the numbers may come in any order. With ``keys`` (one per number of a
    1-D ``expected``, e.g. the values of d) the answer may also be a dict with exactly
    those keys. ``mistakes``: (wrong array, message).
    """
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
        x = as_array(answer)
        if x.size != expected.size or np.squeeze(x).shape != np.squeeze(expected).shape:
            raise Wrong(f"wrong shape: expected {tuple(expected.shape)}, got {tuple(x.shape)}")
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
            how = _how_far(float(x.flat[0]), float(want.flat[0]))
            if how.startswith("too") and np.allclose(x / want, x.flat[0] / want.flat[0],
                                                     rtol=0.02):
                raise Wrong(f"every number is {how}")
        where = "" if any_order else f"; the first at index {np.argwhere(~ok)[0].tolist()}"
        raise Wrong(f"{bad} of {want.size} numbers are wrong{where}")

    return check


_YES = {"yes", "true", "y"}
_NO = {"no", "false", "n"}


def truth(expected, *, wrong_message=None):
    """A checker for a yes/no answer: True/False, a NumPy or 0-d tensor bool, "yes"/"no"."""
    def check(answer):
        if isinstance(answer, str):
            text = answer.strip().lower()
            if text not in _YES | _NO:
                raise Wrong(f"expected True or False, got the string {answer!r}")
            value = text in _YES
        elif isinstance(answer, (bool, np.bool_)):
            value = bool(answer)
        elif hasattr(answer, "dtype") and str(answer.dtype) in ("bool", "torch.bool") and (
                getattr(answer, "ndim", 0) == 0):
            value = bool(answer)
        else:
            raise Wrong(f"expected True or False, got {_kind(answer)}")
        if value != expected:
            raise Wrong(wrong_message or "that is the wrong way round")

    return check


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
        if not isinstance(answer, str):
            raise Wrong(f"expected a string, one of {choices}, got {_kind(answer)}")
        text = answer.strip().lower()
        text = aliases.get(text, text)
        if text not in choices:
            raise Wrong(f"expected one of {choices}, got {answer!r}")
        if text != expected.lower():
            raise Wrong(dict(mistakes).get(text, f"{text!r} is not right"))

    return check


def exception_type(expected):
    """A checker for an exception: the class, an instance of it, or its name as a string."""
    def check(answer):
        if isinstance(answer, type) and issubclass(answer, BaseException):
            name = answer.__name__
        elif isinstance(answer, BaseException):
            name = type(answer).__name__
        elif isinstance(answer, str):
            name = answer.strip()
        elif isinstance(answer, bool) or answer is None:
            raise Wrong("expected an exception class such as KeyError (something is raised)"
                        if answer in (False, None) else
                        "expected an exception class such as KeyError, not True")
        else:
            raise Wrong(f"expected an exception class such as KeyError, got {_kind(answer)}")
        if name != expected.__name__:
            raise Wrong(f"{name} is not what is raised")

    return check


def function(reference, cases, *, result_checker, describe=repr):
    """A checker for a function the student writes: it must agree with ``reference``.

    ``cases`` is a list of argument tuples, or a function returning one (built only when
    a check runs). For each case, ``result_checker(reference(*case))`` checks the
    student's result; the message names the first case that fails (via ``describe``) and
    how many fail, never the right result.

    The checker also takes a :class:`CallResults` instead of a function (the results of
    calling it on the cases, computed elsewhere), and its ``cases()`` returns the list of
    cases to call it on.
    """
    def all_cases():
        return list(cases() if callable(cases) else cases)

    def check(answer):
        given = isinstance(answer, CallResults)
        if not given and not callable(answer):
            raise Wrong(f"expected a function, got {_kind(answer)}")
        failures = []
        tried = all_cases()
        if given and len(answer) != len(tried):
            raise Wrong(f"expected the results of {len(tried)} cases, got {len(answer)}")
        for i, case in enumerate(tried):
            if given:
                result = answer[i]
                if isinstance(result, Raised):
                    raise Wrong(f"your function raised {result.type_name} ({result.text}) "
                                f"for {describe(case)}")
            else:
                try:
                    result = answer(*case)
                except Exception as error:
                    raise Wrong(f"your function raised {type(error).__name__} ({error}) "
                                f"for {describe(case)}") from None
            if _is_placeholder(result):
                raise NotAnswered
            try:
                result_checker(reference(*case))(result)
            except Wrong as wrong:
                failures.append((case, str(wrong)))
        if failures:
            case, why = failures[0]
            raise Wrong(f"wrong for {describe(case)} ({why}); wrong in {len(failures)} of "
                        f"{len(tried)} cases tried")

    check.cases = all_cases
    return check
