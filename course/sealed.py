"""Sealed checkers: the student edition's ``check``, with no right answer left to read.

:func:`seal` turns a checker of d2lutil.exercises.checkers into data: keyed hashes
(HMAC-SHA256, a key drawn per build) of the grid cells within its tolerance and of its
typical mistakes, with their messages; a function keeps its public cases and a sealed
checker of the reference's result on each. :func:`load`, in the wheel as
``d2lutil/exercises/sealed.py`` beside codec.py, makes checks that round an answer onto the
same grid (a cell a quarter of the tolerance), hash it and compare: the book's verdicts and
messages, no right value (course/README.md, "What the seal protects"). A function's
message says "the public checks pass": grading adds hidden cases.
"""

import hashlib
import hmac
import importlib
import math

import numpy as np

from d2lutil.exercises.answers import (
    FACTORS,
    Wrong,
    as_array,
    as_float,
    as_truth,
    as_word,
    exception_name,
    kind_of,
)
from d2lutil.exercises.checkers import _reader, judge_calls, whole_number

try:  # in the student wheel: d2lutil/exercises/codec.py, beside this module
    from d2lutil.exercises import codec
except ImportError:  # in course/, where the grader and the student edition import it
    import codec

CELLS = 4  # grid cells per tolerance
PATTERN_SIZE = 16  # arrays up to this size also get "every number is off by ..." messages
MAX_CELLS = 400  # hashes one number may need; more means a tolerance too wide for a grid
HELD = ("Your instructor holds the worked answer of this exercise: ask in class or in "
        "office hours once you have tried the hints.")


class Unsealable(ValueError):
    """A checker the student edition cannot seal (a custom one in a part that varies)."""


# --- hashing -----------------------------------------------------------------------------------

def digest(key, tag, value):
    """The keyed hash of ``value`` (a string) for part ``tag``: 16 hex digits."""
    return hmac.new(key, f"{tag}\n{value}".encode(), hashlib.sha256).hexdigest()[:16]


class Grid:
    """Where a number falls, as a string: a cell of a grid fixed by the tolerance alone,
    ``atol / CELLS`` wide (``abs``), ``log1p(rtol)`` or ``log(factor)`` over ``CELLS`` wide in
    log|x|, the sign kept (``log``), or the number itself (``exact``)."""

    def __init__(self, mode, step=None):
        self.mode, self.step = mode, step

    @classmethod
    def of(cls, atol=0.0, rtol=0.0, factor=None):
        if factor is not None:
            return cls("log", math.log(factor) / CELLS)
        if atol > 0:
            return cls("abs", atol / CELLS)
        if rtol > 0:
            return cls("log", math.log1p(rtol) / CELLS)
        return cls("exact")

    def cell(self, x):
        x = float(x)
        if self.mode == "exact":
            return repr(x + 0.0)
        if self.mode == "abs":
            return str(round(x / self.step))
        if x == 0:
            return "0"
        return f"{'-' if x < 0 else '+'}{round(math.log(abs(x)) / self.step)}"

    def cells_within(self, low, high):
        """Every cell that meets [low, high]."""
        if self.mode == "exact":
            return [self.cell(low)] if low == high else []
        if self.mode == "abs":
            first, last = round(low / self.step), round(high / self.step)
            if last - first > MAX_CELLS:
                raise Unsealable(f"a tolerance of {high - low:g} is too wide for the grid")
            return [str(c) for c in range(first, last + 1)]
        if low == high == 0:  # a relative tolerance of 0 is 0 itself
            return ["0"]
        if low <= 0 <= high:
            raise Unsealable("a relative tolerance around 0")
        sign = "-" if high < 0 else "+"
        ends = sorted(math.log(abs(v)) / self.step for v in (low, high))
        first, last = round(ends[0]), round(ends[1])
        if last - first > MAX_CELLS:
            raise Unsealable("a factor too wide for the grid")
        return [f"{sign}{c}" for c in range(first, last + 1)]

    def data(self):
        return [self.mode, self.step]


def _window(value, atol, rtol, factor):
    if factor is not None:
        return value / factor, value * factor
    tolerance = atol + rtol * abs(value)
    return value - tolerance, value + tolerance


# --- sealing (at build time, from the book's checkers) --------------------------------------

def seal(checker, key, tag):
    """``checker`` (built by d2lutil.exercises.checkers) as JSON-able sealed data."""
    kind = getattr(checker, "kind", None)
    sealer = _SEALERS.get(kind)
    if getattr(checker, "wraps", None) is not None:  # checkers.around: custom code
        raise Unsealable(f"{tag}: a custom checker around a {kind} checker cannot be sealed")
    if sealer is None:
        raise Unsealable(f"{tag}: a {kind or 'custom'} checker cannot be sealed")
    return sealer(checker, key, tag)


def _seal_number(checker, key, tag):
    atol, rtol, factor = checker.atol, checker.rtol, checker.factor
    grid = Grid.of(atol, rtol, factor)
    expected = float(checker.expected)
    low, high = _window(expected, atol, rtol, factor)
    ok = set(grid.cells_within(low, high)) if grid.mode != "exact" else {grid.cell(expected)}
    probes = []
    for value, message in checker.mistakes:
        probes.append((float(value), message, False))
    if factor is None:
        probes += [(expected * s, f"too {'large' if s > 1 else 'small'} by a factor of about "
                    f"{f}", True) for f in FACTORS for s in (f, 1 / f)]
        probes.append((-expected, "right in size but of the wrong sign", True))
    return {"kind": "number", "grid": grid.data(), "ok": _hashes(key, tag, ok),
            "probes": _probe_table(key, tag, grid, ok, probes, atol, rtol, factor),
            "factor": factor is not None}


def _probe_table(key, tag, grid, ok, probes, atol, rtol, factor):
    table = {}
    for value, message, phrase in probes:
        if value == 0 and grid.mode == "log":
            cells = ["0"]
        elif factor is not None:  # typical wrong values are estimates too: within 10 %
            cells = (grid.cells_within(*sorted((0.9 * value, 1.1 * value)))
                     if value > 0 else [])
        elif grid.mode == "exact":
            cells = [grid.cell(value)]
        else:
            cells = grid.cells_within(*_window(value, atol, rtol, None))
        for cell in cells:
            if cell not in ok:
                table.setdefault(digest(key, tag, cell), [message, phrase])
    return table


def _hashes(key, tag, cells):
    return sorted(digest(key, tag, c) for c in cells)


def _seal_integer(checker, key, tag):
    expected = int(checker.expected)
    probes = {}
    for value, message in checker.mistakes:
        probes.setdefault(digest(key, tag, str(int(value))), [message, False])
    near = [(expected * f, f"too large by a factor of about {f}") for f in FACTORS]
    near += [(expected // f, f"too small by a factor of about {f}") for f in FACTORS
             if expected % f == 0]
    near += [(-expected, "right in size but of the wrong sign"),
             (expected + 1, "off by one"), (expected - 1, "off by one")]
    for value, phrase in near:
        if value != expected:
            probes.setdefault(digest(key, tag, str(value)), [phrase, True])
    return {"kind": "integer", "ok": [digest(key, tag, str(expected))], "probes": probes,
            "what": checker.what, "read": checker.read}


def _seal_numbers_close(checker, key, tag):
    expected = np.asarray(checker.expected, dtype=float)
    atol, rtol, any_order = checker.atol, checker.rtol, checker.any_order
    grid = Grid.of(atol, rtol)
    flat = np.sort(expected, axis=None) if any_order else expected.ravel()

    def element_sets(values, prefix):
        sets = []
        for i, value in enumerate(values):
            value = float(value)
            cells = ([grid.cell(value)] if grid.mode == "exact"
                     else grid.cells_within(*_window(value, atol, rtol, None)))
            sets.append(_hashes(key, f"{tag}:{prefix}{i}", cells))
        return sets

    mistakes = []
    for value, message in checker.mistakes:
        value = np.asarray(value, dtype=float)
        if value.shape != expected.shape:
            continue
        values = np.sort(value, axis=None) if any_order else value.ravel()
        mistakes.append([element_sets(values, f"m{len(mistakes)}."), message])
    patterns = [(flat + 1, "every number is off by +1"), (flat - 1, "every number is off by -1")]
    patterns += [(flat * f, f"every number is too large by a factor of about {f}")
                 for f in (2, 10)]
    patterns += [(flat / f, f"every number is too small by a factor of about {f}")
                 for f in (2, 10)]
    for values, message in patterns if flat.size <= PATTERN_SIZE else []:
        if not np.allclose(values, flat):
            mistakes.append([element_sets(values, f"m{len(mistakes)}."), message])
    shape = list(expected.shape)
    return {"kind": "numbers_close", "grid": grid.data(), "size": int(expected.size),
            "shape": shape if checker.name_shape else None,
            "shape_hash": digest(key, f"{tag}:shape", str([n for n in shape if n != 1])),
            "read": checker.read,
            "any_order": bool(any_order),
            "keys": None if checker.keys is None else list(checker.keys),
            "ok": element_sets(flat, ""), "mistakes": mistakes}


def _seal_truth(checker, key, tag):
    return {"kind": "truth", "ok": digest(key, tag, str(bool(checker.expected))),
            "wrong": checker.mistakes[0][1]}


def _seal_word(checker, key, tag):
    mistakes = dict(checker.mistakes)
    return {"kind": "word", "choices": list(checker.choices),
            "aliases": dict(checker.aliases),
            "ok": digest(key, tag, checker.expected.lower()),
            "mistakes": {digest(key, tag, c.lower()): m for c, m in mistakes.items()}}


def _seal_exception_type(checker, key, tag):
    return {"kind": "exception_type", "ok": digest(key, tag, checker.expected.__name__)}


def _seal_function(checker, key, tag):
    cases = checker.cases()
    results = [seal(checker.result_checker(checker.expected(*case)), key, f"{tag}:case{i}")
               for i, case in enumerate(cases)]
    return {"kind": "function", "cases": codec.encode(cases),
            "describe": [checker.describe(case) for case in cases], "results": results}


_SEALERS = {"number": _seal_number, "integer": _seal_integer,
            "numbers_close": _seal_numbers_close, "truth": _seal_truth, "word": _seal_word,
            "exception_type": _seal_exception_type, "function": _seal_function}


# --- checking (in the student's kernel) -----------------------------------------------------

def checker_from(data, key, tag):
    """The check function of sealed ``data`` (see :func:`seal`)."""
    kind = data["kind"]
    if kind == "public":
        module, name = data["build"].split(":")
        return getattr(importlib.import_module(module), name)(**data.get("args", {}))
    return _CHECKS[kind](data, key, tag)


def _number_check(data, key, tag):
    grid = Grid(*data["grid"])

    def check(answer):
        x = as_float(answer)
        _verdict(data, digest(key, tag, grid.cell(x)), f"{x:.6g}")

    return check


def _verdict(data, cell, shown):
    """Return if ``cell`` is a right one; else raise the message of its probe, or "not the
    right value" (``shown``: the answer as the message prints it)."""
    if cell in data["ok"]:
        return
    if cell in data["probes"]:
        message, phrase = data["probes"][cell]
        raise Wrong(f"{shown} is {message}" if phrase else message)
    raise Wrong(f"{shown} is not the right value")


def _integer_check(data, key, tag):
    reader = _reader(data.get("read"))

    def check(answer):
        x = whole_number(answer, data["what"], reader)
        _verdict(data, digest(key, tag, str(int(x))), f"{x:.0f}")

    return check


def _numbers_close_check(data, key, tag):
    grid = Grid(*data["grid"])
    size, keys = data["size"], data["keys"]
    reader = _reader(data["read"])

    def matches(values, sets, prefix):
        return [digest(key, f"{tag}:{prefix}{i}", grid.cell(v)) in sets[i]
                for i, v in enumerate(values)]

    def check(answer):
        if isinstance(answer, dict):
            if keys is None:
                raise Wrong("expected numbers in a list, tuple, array or tensor, got a dict")
            if sorted(answer, key=repr) != sorted(keys, key=repr):
                raise Wrong(f"expected a dict with the keys {list(keys)}, got {list(answer)}")
            answer = [answer[k] for k in keys]
        if reader is not None:
            answer = reader(answer, size)
        x = as_array(answer)
        squeezed = [n for n in x.shape if n != 1]  # extra axes of length 1 are allowed
        if x.size != size or digest(key, f"{tag}:shape", str(squeezed)) != data["shape_hash"]:
            named = data["shape"]
            raise Wrong(f"wrong shape: expected {tuple(named)}, got {tuple(x.shape)}"
                        if named is not None else f"wrong shape: got {tuple(x.shape)}")
        values = np.sort(x, axis=None) if data["any_order"] else x.ravel()
        ok = matches(values, data["ok"], "")
        if all(ok):
            return
        for j, (sets, message) in enumerate(data["mistakes"]):
            if all(matches(values, sets, f"m{j}.")):
                raise Wrong(message)
        bad = ok.count(False)
        where = "" if data["any_order"] or not x.ndim else (
            "; the first at index "
            f"{[int(i) for i in np.unravel_index(ok.index(False), x.shape)]}")
        raise Wrong(f"{bad} of {size} numbers are wrong{where}")

    return check


def _whole_check(read, wrong):
    """The maker of a check that hashes the whole answer, as ``read(answer, data)`` reads
    it, against ``data["ok"]``; ``wrong(data, cell, text)`` is the message when it differs."""
    def make(data, key, tag):
        def check(answer):
            text = read(answer, data)
            cell = digest(key, tag, text)
            if cell != data["ok"]:
                raise Wrong(wrong(data, cell, text))

        return check

    return make


_truth_check = _whole_check(lambda answer, data: str(as_truth(answer)),
                            lambda data, cell, text: data["wrong"])
_word_check = _whole_check(
    lambda answer, data: as_word(answer, data["choices"], data["aliases"]),
    lambda data, cell, text: data["mistakes"].get(cell, f"{text!r} is not right"))
_exception_check = _whole_check(lambda answer, data: exception_name(answer),
                                lambda data, cell, text: f"{text} is not what is raised")


def _function_check(data, key, tag):
    results = [checker_from(r, key, f"{tag}:case{i}") for i, r in enumerate(data["results"])]

    def cases():
        return codec.decode(data["cases"])

    def check(answer):
        if not callable(answer):
            raise Wrong(f"expected a function, got {kind_of(answer)}")
        judge_calls(answer, cases(), lambda i, case, result: results[i](result),
                    lambda i, case: data["describe"][i])

    check.cases, check.public_only = cases, True
    return check


_CHECKS = {"number": _number_check, "integer": _integer_check,
           "numbers_close": _numbers_close_check, "truth": _truth_check, "word": _word_check,
           "exception_type": _exception_check, "function": _function_check}


# --- the wheel's exercise modules -------------------------------------------------------------

def load(module, data):
    """The exercises of a sealed module: ``data`` as :func:`seal_module` wrote it."""
    from d2lutil.exercises.core import Exercise

    key = bytes.fromhex(data["key"])
    exercises = []
    for item in data["exercises"]:
        number, variants = item["number"], item["variants"]
        sealed = item["parts"]  # per variant index (None for the book's): [(name, data)]

        def parts(_sealed=sealed, _variants=variants, _number=number, **values):
            index = _variants.index(values)
            if _sealed[index] is None:  # the book's values: not in a student's edition
                names = next(s for s in _sealed if s is not None)
                return [(name, _not_here) for name, _ in names]
            return _checks(_sealed, key, module, _number, index)

        def hints(_hints=item["hints"], _variants=variants, **values):
            given = _hints[_variants.index(values)]
            return given if given is not None else next(h for h in _hints if h)

        exercises.append(Exercise(
            number, parts if variants else _checks(sealed, key, module, number, 0),
            hints=hints if variants else item["hints"][0], solution=HELD,
            open_part=item["open_part"],
            points=item["points"], variants=variants or None,
            key=f"{module}.ex{number}"))
    return exercises


def _not_here(answer):
    raise Wrong("this edition checks your own values only: enter your student id first")


def _checks(sealed, key, module, number, index):
    """The (name, check) parts of variant ``index`` of a sealed exercise."""
    return [(name, checker_from(part, key, f"{module}.ex{number}.{index}.{j}"))
            for j, (name, part) in enumerate(sealed[index])]


def seal_exercise(exercise, key, module, book=False):
    """One exercise as the data :func:`load` reads: every variant but the book's sealed
    (the book's too with ``book``, for grading the book's answers)."""
    variants = exercise.variants
    indices = range(0 if book else 1, len(variants)) if variants else [0]
    parts, hints = {}, {}
    for index in indices:
        built_parts, built_hints = exercise.built(index)
        parts[index] = [(name, _seal_part(exercise, j, checker, key,
                                          f"{module}.ex{exercise.number}.{index}.{j}"))
                        for j, (name, checker) in enumerate(built_parts)]
        hints[index] = built_hints
    count = len(variants) if variants else 1
    return {"number": exercise.number, "variants": variants,
            "parts": [parts.get(i) for i in range(count)],
            "hints": [hints.get(i) for i in range(count)],
            "open_part": exercise.open_part, "points": exercise.points}


def _seal_part(exercise, index, checker, key, tag):
    """A part as sealed data; a checker that holds no answer (``public_build``, the name
    of a function of d2lutil.exercises.public that makes it) as that name."""
    public = getattr(checker, "public_build", None)
    if public:
        return {"kind": "public", "build": public, "args": getattr(checker, "public_args", {})}
    try:
        return seal(checker, key, tag)
    except Unsealable as error:
        raise Unsealable(f"{error}: build it from checkers' own, or, if it holds no "
                         "answer, from d2lutil.exercises.public (public_build)") from None
