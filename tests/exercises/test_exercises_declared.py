"""Every exercise of every notebook, run through its own check, from what it declares.

An exercise's module ``d2lutil.exercises.nbNN`` declares each part's checker with its
right answer and its typical mistakes; the checkers keep them (``checker.expected``,
``checker.mistakes``, see d2lutil.exercises.checkers). These tests read them, so adding an
exercise adds its tests: for each part of each exercise,

- the right answer passes in every form its checker promises, and earns the part's points
  as the module declares them (``Exercise(..., points=...)``, else 1);
- every declared mistake is refused with its own message and earns nothing; for a function
  answer, so is a function that makes a declared mistake of the result in every case;
- answers off by a factor, a sign, one, beyond the tolerance, of the wrong shape or type,
  are refused, and no message names the right whole number; a function wrong in one case
  is refused, naming that case;
- ``...`` (and None) is "not answered yet", no answer makes ``check`` raise, and checking
  leaves the global random state alone.

A checker written in its module around a library one (``checkers.around``) is read like
the one it wraps. One that keeps no ``expected`` is tested in
tests/exercises/test_exercises_nbNN.py. Whether each expected value is right is the
solutions notebooks' business: they compute every answer by their own route and assert that
it passes (nbval runs them). tests/exercises/test_exercise_cells.py ties the exercises to
the notebooks' Markdown items, starter cells and the solutions' asserts.
"""

import ast
import importlib
import inspect
import pathlib
import pkgutil
import re
from fractions import Fraction

import numpy as np
import pytest
import torch

from d2lutil import exercises as E


def every_exercise():
    """{"nbNN.exK": exercise} for every module nbNN of d2lutil.exercises."""
    found = {}
    for info in pkgutil.iter_modules(E.__path__):
        if re.fullmatch(r"nb\d\d", info.name):
            module = importlib.import_module(f"d2lutil.exercises.{info.name}")
            found.update({f"{info.name}.{name}": getattr(module, name)
                          for name in module.__all__})
    return found


EXERCISES = every_exercise()
PARTS = {f"{name}[{i}]": (exercise, i, checker)
         for name, exercise in EXERCISES.items()
         for i, (_, checker) in enumerate(exercise.parts)}
DECLARED = {key: part for key, part in PARTS.items() if hasattr(part[2], "expected")}


def kind(checker):
    """The d2lutil.exercises.checkers function that built ``checker`` ("number", ...)."""
    return getattr(checker, "wraps", checker).__qualname__.split(".")[0]


def message(exercise, index, answer):
    """What ``check`` says of ``answer`` for one part, and its points (never raises)."""
    result = exercise.check_part(index, answer)
    return result.message, result.points


# --- the right answer ---------------------------------------------------------------------

def right_forms(checker):
    """The right answer in each form the checker promises to accept."""
    e = checker.expected
    if kind(checker) == "number":
        return [e, float(e), np.float64(e), np.float32(e), np.array(e), [e], torch.tensor(e),
                torch.tensor([e], dtype=torch.float64), Fraction(e)]
    if kind(checker) == "integer":
        return [int(e), float(e), np.int64(e), torch.tensor(int(e)), [int(e)]]
    if kind(checker) == "numbers_close":
        forms = [e, e.tolist(), torch.tensor(e), e.astype(np.float32), e[None]]
        if checker.keys is not None:
            forms += [dict(zip(checker.keys, e.tolist(), strict=True)),
                      dict(reversed(list(zip(checker.keys, e.tolist(), strict=True))))]
        if checker.any_order:
            forms.append(e.ravel()[::-1].reshape(e.shape))
        return forms
    if kind(checker) == "truth":
        return [e, np.bool_(e), torch.tensor(e), "yes" if e else "no", f" {e} "]
    if kind(checker) == "word":
        return [e, e.upper(), f" {e} "] + [
            alias for alias, choice in checker.aliases.items() if choice == e.lower()]
    if kind(checker) == "exception_type":
        return [e, e("raised"), e.__name__]
    if kind(checker) == "function":  # the reference, its results, its results in each form
        results = [right_forms(checker.result_checker(e(*case))) for case in checker.cases()]
        return [e, E.CallResults(e(*case) for case in checker.cases())] + [
            E.CallResults(forms[j] for forms in results) for j in range(len(results[0]))]
    raise AssertionError(f"no right forms for a {kind(checker)} checker")


def declared_points(name):
    """The points the module's ``Exercise(...)`` call gives, one per part (1 if none)."""
    module_name, exercise_name = name.split(".")
    exercise = EXERCISES[name]
    module = importlib.import_module(f"d2lutil.exercises.{module_name}")

    def value(node):  # a literal or an expression of the module's names
        return eval(compile(ast.Expression(node), module_name, "eval"), vars(module))

    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Exercise"
                and value(node.args[0]) == exercise.number):
            given = {k.arg: k.value for k in node.keywords}.get("points")
            if given is None:
                return [1] * len(exercise.parts)
            points = value(given)
            return list(points) if isinstance(points, (list, tuple)) else (
                [points] * len(exercise.parts))
    raise AssertionError(f"no Exercise({exercise.number}, ...) in {module_name}.py "
                         f"({exercise_name})")


@pytest.mark.parametrize("name", list(EXERCISES))
def test_points_follow_the_modules_declaration(name):
    exercise = EXERCISES[name]
    assert exercise.points == declared_points(name)
    assert exercise.max_points == sum(exercise.points)


@pytest.mark.parametrize("key", list(DECLARED))
def test_the_right_answer_passes_in_every_form_and_earns_the_points(key):
    exercise, index, checker = DECLARED[key]
    state = torch.get_rng_state()
    for form in right_forms(checker):
        assert message(exercise, index, form) == ("correct", exercise.points[index]), (
            key, form)
    assert torch.equal(torch.get_rng_state(), state), f"{key}: checking moved torch's seed"


@pytest.mark.parametrize("name", [name for name, exercise in EXERCISES.items()
                                  if exercise.parts and all(
                                      hasattr(c, "expected") for _, c in exercise.parts)])
def test_the_right_answers_together_are_correct(name, capsys):
    exercise = EXERCISES[name]
    verdict = exercise.check(*(checker.expected for _, checker in exercise.parts))
    assert verdict, verdict.message
    assert verdict.message.startswith(f"Exercise {exercise.number}: correct.")
    assert ("is open-ended" in verdict.message) == (exercise.open_part is not None)
    assert capsys.readouterr().out.strip()


# --- declared mistakes --------------------------------------------------------------------

@pytest.mark.parametrize("key", [key for key, (_, _, checker) in DECLARED.items()
                                 if checker.mistakes])
def test_every_declared_mistake_gets_its_own_message(key):
    exercise, index, checker = DECLARED[key]
    for value, said in checker.mistakes:
        assert message(exercise, index, value) == (f"not right yet: {said}", 0), (key, value)


def function_mistakes():
    """(part, j): function parts whose result checker declares a mistake j in every case."""
    found = []
    for key, (_, _, checker) in DECLARED.items():
        if kind(checker) == "function":
            cases = checker.cases()
            counts = {len(getattr(checker.result_checker(checker.expected(*case)),
                                  "mistakes", ())) for case in cases}
            found += [(key, j) for j in range(min(counts))]
    return found


@pytest.mark.parametrize(("key", "j"), function_mistakes())
def test_a_function_making_a_declared_mistake_gets_its_message(key, j):
    exercise, index, checker = DECLARED[key]
    cases = checker.cases()
    mistakes = [list(checker.result_checker(checker.expected(*case)).mistakes)[j]
                for case in cases]
    calls = iter(value for value, _ in mistakes)

    def student(*case):
        return next(calls)

    said = mistakes[0][1]
    assert message(exercise, index, student) == (
        f"not right yet: wrong for {checker.describe(cases[0])} ({said}); wrong in "
        f"{len(cases)} of {len(cases)} cases tried", 0)


# --- other wrong answers ------------------------------------------------------------------

def wrong_forms(checker):
    """(wrong answer, words its message must hold, or None): near misses and wrong types."""
    e = checker.expected
    if kind(checker) in ("number", "integer"):
        yield str(e), "got a string"
        yield True, "True/False"
        yield [e, e], "expected one number"
        if e != 0:
            yield -e, None
            for factor in (2, 10, 1000):
                yield e * factor, None
                yield e / factor, None
    if kind(checker) == "number":
        if checker.factor is None:
            tolerance = checker.atol + checker.rtol * abs(e)
            yield e + 3 * tolerance, None
            yield e - 3 * tolerance, None
        else:
            yield e * checker.factor * 1.01, None
            yield e / checker.factor / 1.01, None
    if kind(checker) == "integer":
        yield e + 1, None
        yield e - 1, None
        yield e + 0.5, "whole number"
    if kind(checker) == "numbers_close":
        tolerance = checker.atol + checker.rtol * np.abs(e)
        yield e + 1, None
        yield e + 3 * tolerance * np.eye(1, e.size).reshape(e.shape), None  # one number off
        yield e.ravel()[:-1], "wrong shape"
        if e.ndim > 1 and e.shape[0] > 1:
            yield e[0], "wrong shape"  # one row of several
        yield np.full(e.shape, "a"), "expected numbers"
        if e.any():
            for factor in (2, 10, 1000):
                yield e * factor, None
                yield e / factor, None
        if not checker.any_order and not np.allclose(np.flip(e), e):
            yield np.flip(e), None
        if checker.keys is not None:
            yield {key + 1: value for key, value in zip(checker.keys, e.tolist(),
                                                        strict=True)}, "keys"
    if kind(checker) == "truth":
        yield "maybe", "expected True or False"
        yield int(e), "expected True or False"
    if kind(checker) == "word":
        for choice in checker.choices:
            if choice != e.lower():
                yield choice, None
        for alias, choice in checker.aliases.items():
            if choice != e.lower():
                yield alias, dict(checker.mistakes).get(choice)
        yield "zzz", "expected one of"
        yield 1, "expected a string"
    if kind(checker) == "exception_type":
        yield (ValueError if e is TypeError else TypeError), "is not what is raised"
        yield 3, "expected an exception class"
    if kind(checker) == "function":
        yield (lambda *args: 1 / 0), "your function raised ZeroDivisionError"
        yield 6, "expected a function"
        yield E.CallResults([]), "expected the results of"


@pytest.mark.parametrize("key", list(DECLARED))
def test_near_misses_and_wrong_types_are_refused(key):
    exercise, index, checker = DECLARED[key]
    for answer, words in wrong_forms(checker):
        said, points = message(exercise, index, answer)
        assert said.startswith("not right yet: ") and points == 0, (key, answer, said)
        # a checker written around another, or with a reader of other forms
        # (numbers_close(read=...)), may word a wrong type its own way
        assert words is None or hasattr(checker, "wraps") or getattr(
            checker, "read", None) or words in said, (key, answer, said)


@pytest.mark.parametrize("key", [key for key, (_, _, checker) in DECLARED.items()
                                 if kind(checker) == "function"])
def test_a_function_wrong_in_one_case_is_refused_naming_it_not_its_result(key):
    exercise, index, checker = DECLARED[key]
    cases = checker.cases()
    results = [checker.expected(*case) for case in cases]
    last = checker.result_checker(results[-1])
    wrong = list(last.mistakes)[0][0] if last.mistakes else next(  # a mistake, a near miss
        value for value, words in wrong_forms(last) if words is None)
    said, points = message(exercise, index, E.CallResults([*results[:-1], wrong]))
    assert said.startswith(f"not right yet: wrong for {checker.describe(cases[-1])} (")
    assert said.endswith(f"; wrong in 1 of {len(cases)} cases tried") and points == 0
    right = results[-1]
    if np.ndim(right) == 0 and not isinstance(right, bool) and float(right).is_integer():
        why = said.split(checker.describe(cases[-1]), 1)[1]  # the wrong value is echoed
        assert not re.search(rf"(?<![\d.,-]){right:.0f}(?![\d.])", why), (key, said)


# Parts whose question itself states the number (a message may repeat the question).
STATED_IN_THE_QUESTION = {"nb08.ex2[1]": "greedy decoding takes 11 steps"}


@pytest.mark.parametrize("key", [key for key, (_, _, checker) in DECLARED.items()
                                 if kind(checker) == "integer"
                                 and key not in STATED_IN_THE_QUESTION])
def test_no_message_names_the_right_whole_number(key):
    exercise, index, checker = DECLARED[key]
    right = re.compile(rf"(?<![\d.,/-]){checker.expected:.0f}(?![\d./])"  # not 1/2
                       + (f"|{checker.expected:,}" if checker.expected >= 1000 else ""))
    echoed = [answer for answer, _ in wrong_forms(checker)  # other answers are echoed
              if isinstance(answer, (int, float)) and float(answer).is_integer()]
    for answer in [value for value, _ in checker.mistakes] + echoed:
        said, _ = message(exercise, index, answer)
        assert not right.search(said), (key, answer, said)


# --- every exercise, whatever its checkers ------------------------------------------------

@pytest.mark.parametrize("name", list(EXERCISES))
def test_the_placeholder_is_not_answered_yet(name, capsys):
    exercise = EXERCISES[name]
    verdict = exercise.check(*[...] * max(len(exercise.parts), 1))
    assert not verdict and "is not answered yet" in verdict.message
    for index, (_, checker) in enumerate(exercise.parts):
        placeholders = [..., None] + (
            [lambda *args: ...] if getattr(checker, "expected", None) is not None
            and kind(checker) == "function" else [])
        for placeholder in placeholders:
            assert message(exercise, index, placeholder) == ("not answered yet", 0)
    capsys.readouterr()


STRANGE = [object(), "", "1.0", [], {}, set(), {0: 1}, [1, "a"], [[1], [1, 2]], 1j,
           float("nan"), float("inf"), np.zeros((2, 2)), torch.zeros(2, 2), int]


@pytest.mark.parametrize("name", list(EXERCISES))
def test_check_never_raises_and_refuses_strange_answers(name, capsys):
    exercise = EXERCISES[name]
    count = len(exercise.parts)
    for strange in STRANGE:
        verdict = exercise.check(*[strange] * max(count, 1))
        assert isinstance(verdict, E.Verdict) and not verdict, (name, strange)
        for index in range(count):
            assert not exercise.check_part(index, strange), (name, index, strange)
    assert not exercise.check(*[...] * (count + 1))  # one answer too many
    capsys.readouterr()


@pytest.mark.parametrize("name", list(EXERCISES))
def test_every_hint_and_the_solution_show(name, capsys):
    exercise = EXERCISES[name]
    assert exercise.hints and exercise._solution.strip()
    for level in range(1, len(exercise.hints) + 1):
        exercise.hint(level)
        assert f"Exercise {exercise.number}, hint {level} of {len(exercise.hints)}:" in (
            capsys.readouterr().out)
    exercise.solution()
    assert f"Exercise {exercise.number}, solution:" in capsys.readouterr().out


def test_a_checker_written_in_its_module_is_tested_in_its_notebooks_file():
    """Only a part the generic tests cannot read needs a test_exercises_nbNN.py (beside this
    file)."""
    tests = pathlib.Path(__file__).parent
    for key in sorted(set(PARTS) - set(DECLARED)):
        module_name, exercise_name = key.split("[")[0].split(".")
        path = tests / f"test_exercises_{module_name}.py"
        assert path.exists() and re.search(rf"\b{exercise_name}\b", path.read_text()), (
            f"{key} has its own checker: test it in {path.name}")
