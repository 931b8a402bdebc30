"""Unit tests of d2lutil.exercises, the mechanism behind the chapter's exercises.

Every notebook's exercises are run through their checks from what their modules declare
(right answers, typical mistakes, points) in tests/exercises/test_exercises_declared.py;
what that cannot say (checkers written in a module, typical wrong functions, routes the
solutions do not take) is in tests/exercises/test_exercises_nbNN.py; the solutions
notebooks compute every answer by their own route; tests/exercises/test_exercise_cells.py
ties them to the notebooks' starter cells and solutions.
"""

import numpy as np
import pytest
import torch

from d2lutil import exercises as E
from d2lutil.exercises.checkers import around
from import_probe import imported_modules


def simple(*parts, **kwargs):
    kwargs.setdefault("hints", ["first hint", "second hint"])
    kwargs.setdefault("solution", "the worked answer")
    return E.Exercise(7, list(parts), **kwargs)


def ok(checker, answer):
    """True when ``checker`` accepts ``answer``; the message of ``Wrong`` otherwise."""
    try:
        checker(answer)
    except E.Wrong as wrong:
        return str(wrong)
    return True


# --- the verdict and the messages -----------------------------------------------------------

def test_verdict_is_truthy_exactly_when_correct_and_equals_bools():
    right, wrong = E.Verdict(True, "m"), E.Verdict(False, "m")
    assert right and not wrong
    assert right == True and wrong == False and right != False  # noqa: E712
    assert repr(right) == "True" and repr(wrong) == "False"
    assert right.message == "m"


def test_verdict_displays_nothing_in_ipython():
    # IPython calls _ipython_display_ instead of showing the repr: the printed message
    # is the only output of a starter cell.
    assert E.Verdict(False, "m")._ipython_display_() is None


def test_check_prints_not_answered_yet_for_placeholders(capsys):
    ex = simple(("a", E.number(1.0)), ("b", E.number(2.0)))
    for answers in [(..., ...), (None, ...), ((..., 1), None)]:
        verdict = ex.check(*answers)
        assert verdict == False  # noqa: E712
        assert "Exercise 7 is not answered yet" in capsys.readouterr().out


def test_check_reports_each_part(capsys):
    ex = simple(("first", E.number(1.0)), ("second", E.number(2.0)))
    assert not ex.check(1.0, ...)
    out = capsys.readouterr().out
    assert "- first: correct" in out and "- second: not answered yet" in out
    assert not ex.check(3.0, 2.0)
    out = capsys.readouterr().out
    assert "- first: not right yet: 3 is too large by a factor of about 3" in out
    assert "ex7.hint()" in out
    assert ex.check(1, torch.tensor(2.0))
    assert capsys.readouterr().out == "Exercise 7: correct.\n"


def test_a_one_part_message_ends_with_one_stop(capsys):
    ex = simple(("only", E.number(1.0, mistakes=[(2.0, "twice too large: why?")])))
    assert not ex.check(2.0)
    assert "twice too large: why? Try again" in capsys.readouterr().out
    assert not ex.check(3.0)
    assert "factor of about 3. Try again" in capsys.readouterr().out


def test_check_wants_one_answer_per_part(capsys):
    ex = simple(("first", E.number(1.0)), ("second", E.number(2.0)))
    assert not ex.check(1.0)
    assert "asks for 2 answers (first, second), got 1" in capsys.readouterr().out


def test_check_wants_answers_by_position(capsys):
    ex = simple(("first", E.number(1.0)))
    assert not ex.check(first=1.0)
    assert "give the answers by position, ex7.check(...)" in capsys.readouterr().out


def test_check_never_raises(capsys):
    def broken(answer):
        raise RuntimeError("bug in a checker")

    ex = simple(("x", broken))
    assert not ex.check(1.0)
    assert "could not check this answer (RuntimeError: bug in a checker)" in (
        capsys.readouterr().out)
    ex = simple(("x", E.number(1.0)))
    for strange in [object(), "1.0", [1, "a"], {1: 2}, float("nan"), [[1], [1, 2]], 1j, True]:
        assert not ex.check(strange)
        assert "not right yet" in capsys.readouterr().out


def test_open_ended_exercise_has_no_check_but_hints_and_solution(capsys):
    ex = simple()
    assert ex.open_ended
    assert not ex.check(...)
    assert "(open-ended) is not answered yet" in capsys.readouterr().out
    assert not ex.check("because the softmax must spend its weight")
    assert "open-ended: no check can grade" in capsys.readouterr().out
    ex.solution()
    assert capsys.readouterr().out == "Exercise 7, solution: the worked answer\n"


def test_open_part_is_named_after_a_correct_answer(capsys):
    ex = simple(("x", E.number(1.0)), open_part="why it holds")
    assert ex.check(1.0)
    out = capsys.readouterr().out
    assert "correct" in out and "Why it holds is open-ended" in out
    assert "ex7.solution()" in out


def test_hints_come_one_after_another_and_by_level(capsys):
    ex = simple(("x", E.number(1.0)))
    ex.hint()
    assert "hint 1 of 2: first hint" in capsys.readouterr().out
    ex.hint()
    assert "hint 2 of 2: second hint" in capsys.readouterr().out
    ex.hint()  # stays at the last one
    assert "hint 2 of 2" in capsys.readouterr().out
    ex.hint(1)
    assert "hint 1 of 2" in capsys.readouterr().out
    for bad in (0, 3, "1", True):
        ex.hint(bad)
        assert "has 2 hints" in capsys.readouterr().out


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"number": 0}, "number must be a positive int"),
    ({"parts": [("x", 1.0)]}, "each part must be a"),
    ({"hints": []}, "hints must be a non-empty list"),
    ({"solution": ""}, "solution must be a non-empty string"),
    ({"parts": [("x", E.integer(1))], "answers": ("class",)}, "distinct variable names, one"),
    ({"parts": [("x", E.integer(1))], "answers": ("a", "b")}, "must be 1 distinct variable"),
    ({"parts": [("x", E.integer(1)), ("y", E.integer(2))], "answers": ("a", "a")},
     "must be 2 distinct variable names"),
])
def test_exercise_rejects_bad_arguments(kwargs, message):
    arguments = {"number": 1, "parts": [], "hints": ["h"], "solution": "s"} | kwargs
    with pytest.raises((TypeError, ValueError), match=message):
        E.Exercise(arguments.pop("number"), arguments.pop("parts"), **arguments)


# --- the checkers ----------------------------------------------------------------------

@pytest.mark.parametrize("answer", [
    0.25, 1 / 4, np.float32(0.25), np.array(0.25), torch.tensor(0.25),
    torch.tensor([0.25]), [0.25], torch.tensor(0.25, requires_grad=True)])
def test_number_accepts_every_form(answer):
    assert ok(E.number(0.25), answer) is True


@pytest.mark.parametrize(("answer", "message"), [
    (0.5, "too large by a factor of about 2"),
    (0.025, "too small by a factor of about 10"),
    (-0.25, "wrong sign"),
    (0.26, "not the right value"),
    ("0.25", "got a string"),
    (True, "True/False"),
    ([0.25, 0.25], "expected one number, got 2"),
    (float("inf"), "finite"),
])
def test_number_says_what_is_off(answer, message):
    assert message in ok(E.number(0.25), answer)


def test_number_spots_a_square_root_or_a_square():
    assert ok(E.number(0.3), 0.3 ** 0.5) == (
        "0.547723 is close to the square root of the right value")
    assert ok(E.number(0.3), 0.09) == "0.09 is close to the square of the right value"


def test_number_tolerance_and_mistakes():
    check = E.number(2 / 3, atol=0.005, mistakes=[(0.5, "the two-position answer")])
    assert ok(check, 0.667) is True and ok(check, 0.663) is True
    assert "not the right value" in ok(check, 0.68)
    assert ok(check, 0.502) == "the two-position answer"
    assert "square root" in ok(E.number(0.2, atol=0.005), 0.2 ** 0.5)


def test_integer_wants_a_whole_number():
    check = E.integer(15, mistakes=[(10, "the diagonal is missing")])
    for answer in (15, 15.0, np.int64(15), torch.tensor(15)):
        assert ok(check, answer) is True
    assert "whole number, got 15.5" in ok(check, 15.5)
    assert ok(check, 16) == "16 is off by one"
    assert ok(check, 10) == "the diagonal is missing"
    assert "factor of about 3" in ok(check, 45)


def test_numbers_close_shape_order_and_offsets():
    check = E.numbers_close([[1, 2, 3], [1, 2, 3]])
    assert ok(check, torch.tensor([[1, 2, 3], [1, 2, 3]])) is True
    assert ok(check, np.array([[[1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]]])) is True  # extra axis
    assert ok(check, [(1, 2, 3), (1, 2, 3)]) is True
    assert "wrong shape: expected (2, 3), got (3,)" in ok(check, [1, 2, 3])
    assert ok(check, [[0, 1, 2], [0, 1, 2]]) == "every number is off by -1"
    assert ok(check, [[2, 4, 6], [2, 4, 6]]) == ("every number is too large by a factor "
                                                 "of about 2")
    assert "1 of 6 numbers are wrong; the first at index [1, 2]" in ok(
        check, [[1, 2, 3], [1, 2, 4]])
    assert "True/False" in ok(check, [[True] * 3] * 2)
    unordered = E.numbers_close([1, 2, 3], any_order=True)
    assert ok(unordered, (3, 1, 2)) is True
    assert "numbers are wrong" in ok(unordered, (3, 1, 1))
    assert ok(E.numbers_close([1, 2], mistakes=[([2, 1], "swapped")]), [2, 1]) == "swapped"


def test_truth_accepts_bools_and_yes_no():
    check = E.truth(False, wrong_message="look again")
    for answer in (False, np.bool_(False), torch.tensor(False), "no", " False "):
        assert ok(check, answer) is True
    assert ok(check, True) == "look again"
    assert "expected True or False" in ok(check, 0)
    assert "expected True or False" in ok(check, "maybe")


def test_word_ignores_case_and_names_the_choices():
    check = E.word("split", ["sharp", "split", "diffuse"], mistakes=[("sharp", "one copy?")])
    assert ok(check, " Split") is True
    assert ok(check, "sharp") == "one copy?"
    assert "'diffuse' is not right" in ok(check, "diffuse")
    assert "expected one of" in ok(check, "spread")
    assert "expected a string" in ok(check, 1)


def test_exception_type_accepts_class_instance_and_name():
    check = E.exception_type(ValueError)
    for answer in (ValueError, ValueError("x"), "ValueError"):
        assert ok(check, answer) is True
    assert "TypeError is not what is raised" in ok(check, TypeError)
    assert "something is raised" in ok(check, None)
    assert "got an int" in ok(check, 3)


def test_function_checks_cases_and_never_names_the_result():
    check = E.function(lambda a, b: a * b, [(2, 3), (4, 5), (1, 7)],
                       result_checker=E.number)
    assert ok(check, lambda a, b: b * a) is True
    assert ok(check, lambda a, b: float(a * b)) is True
    message = ok(check, lambda a, b: a + b)
    assert message.startswith("wrong for (2, 3)") and "wrong in 3 of 3" in message
    assert "6" not in message.split("(")[2]  # the right product of the first case
    assert "factor of about 2" in ok(check, lambda a, b: 2 * a * b)
    assert "raised ZeroDivisionError" in ok(check, lambda a, b: a / 0)
    assert "expected a function" in ok(check, 6)
    with pytest.raises(E.NotAnswered):
        check(lambda a, b: ...)


def test_function_builds_lazy_cases_only_when_checking():
    built = []

    def cases():
        built.append(1)
        return [(1,)]

    check = E.function(lambda x: x, cases, result_checker=E.number)
    assert built == []
    assert ok(check, lambda x: x) is True and built == [1]


def test_checkers_keep_what_they_were_built_with():
    """What test_exercises_declared.py reads: a right answer and the mistakes."""
    mistakes = [(0.5, "m")]
    for checker, right in [(E.number(0.25, mistakes=mistakes), 0.25),
                           (E.integer(3, mistakes=mistakes), 3),
                           (E.numbers_close([1, 2], mistakes=mistakes), [1, 2]),
                           (E.word("a", ["a", "b"], mistakes=mistakes), "a"),
                           (E.exception_type(KeyError), KeyError)]:
        assert np.array_equal(checker.expected, right) and ok(checker, right) is True
        assert list(checker.mistakes) == ([] if right is KeyError else mistakes)
    assert E.truth(False, wrong_message="w").mistakes == [(True, "w")]
    assert E.truth(True).mistakes == [(False, "that is the wrong way round")]
    square = E.function(lambda x: x * x, [(2,)], result_checker=E.number)
    assert ok(square, square.expected) is True and square.mistakes == ()
    inner = E.integer(3, mistakes=mistakes)

    @around(inner, mistakes=[*mistakes, ({3}, "a set")])
    def size(answer):
        if isinstance(answer, set):
            raise E.Wrong("a set")
        inner(answer)

    assert size.wraps is inner and size.expected == 3 and size.what == "count"
    assert size.mistakes == [(0.5, "m"), ({3}, "a set")] and inner.mistakes == mistakes


# --- grading: points and one part at a time --------------------------------------------------

def test_points_default_to_one_per_part_and_can_be_set():
    two = (("a", E.number(1.0)), ("b", E.number(2.0)))
    assert simple(*two).points == [1, 1] and simple(*two).max_points == 2
    assert simple(*two, points=3).points == [3, 3]
    assert simple(*two, points=[2, 0.5]).max_points == 2.5
    assert E.Exercise(1, [], hints=["h"], solution="s").max_points == 0
    for bad in ([1], [1, 2, 3], -1, [1, True], float("nan"), "2"):
        with pytest.raises(ValueError, match="points must be"):
            simple(*two, points=bad)


def test_check_part_grades_one_part_quietly_with_check_messages(capsys):
    exercise = simple(("a", E.number(1.0)), ("b", E.number(2.0)), points=[2, 3])
    right, wrong, empty = (exercise.check_part(0, 1.0), exercise.check_part(1, 4.0),
                           exercise.check_part(1, ...))
    assert capsys.readouterr().out == ""
    assert right and (right.points, right.max_points, right.message) == (2, 2, "correct")
    assert not wrong and (wrong.points, wrong.max_points) == (0, 3)
    assert wrong.message == "not right yet: 4 is too large by a factor of about 2"
    assert (empty.message, empty.name, empty.index, empty.exercise) == (
        "not answered yet", "b", 1, 7)
    exercise.check(1.0, 4.0)  # the same messages as check's, part by part
    assert f"- b: {wrong.message}" in capsys.readouterr().out
    broken = simple(("a", lambda answer: 1 / 0)).check_part(0, 1.0)
    assert broken.message.startswith("could not check this answer (ZeroDivisionError")
    for bad in (2, -1, True, "0"):
        with pytest.raises(IndexError, match="index must be a part of exercise 7"):
            exercise.check_part(bad, 1.0)


def test_function_judges_call_results_as_if_it_had_called():
    check = E.function(lambda a, b: a * b, [(2, 3), (4, 5), (1, 7)],
                       result_checker=E.number)
    assert check.cases() == [(2, 3), (4, 5), (1, 7)]
    for student in (lambda a, b: b * a, lambda a, b: a + b, lambda a, b: 2 * a * b):
        results = E.CallResults(student(*case) for case in check.cases())
        assert ok(check, results) == ok(check, student)
    raised = E.CallResults([6, E.Raised("ZeroDivisionError", "division by zero"), 7])
    assert ok(check, raised) == ok(check, lambda a, b: a * b if a != 4 else a / 0)
    assert "the results of 3 cases, got 2" in ok(check, E.CallResults([6, 20]))
    with pytest.raises(E.NotAnswered):
        check(E.CallResults([..., ..., ...]))


# --- every notebook's exercises --------------------------------------------------------------

def test_importing_the_exercises_stays_light():
    """d2lutil.exercises and every exercises.nbNN, before any other d2lutil module."""
    imported = imported_modules()["exercises"]
    assert {"d2lutil.exercises", "d2lutil.exercises.nb01"} <= imported
    assert {"d2l", "torchvision", "pandas", "scipy", "IPython"} & imported == set()
    assert imported_modules()["stderr"] == ""


def test_numbers_close_takes_a_dict_by_keys():
    check = E.numbers_close([17, 20], keys=[128, 256])
    assert ok(check, {256: 20, 128: 17}) is True
    assert ok(check, (17, 20)) is True
    assert "keys [128, 256]" in ok(check, {64: 17, 256: 20})
    assert "got a dict" in ok(E.numbers_close([1, 2]), {0: 1, 1: 2})
    with pytest.raises(ValueError, match="one key per number"):
        E.numbers_close([[1, 2]], keys=[0, 1])


def test_word_takes_aliases():
    check = E.word("second", ["first", "second"], aliases={"Hessian": "second",
                                                           "gradient": "first"})
    assert ok(check, "hessian") is True and ok(check, "SECOND") is True
    assert ok(check, "gradient") == "'first' is not right"
    with pytest.raises(ValueError, match="one of the choices"):
        E.word("third", ["first", "second"])


# --- hints and solutions: Markdown with maths in Jupyter, raw text elsewhere ------------------

@pytest.mark.parametrize(("kwargs", "message"), [
    ({"hints": ["fine", "an $x$ and a $y"]}, r"hint 2 of exercise 7 has an unmatched \$"),
    ({"hints": ["call `ex7.hint( for more"]}, "hint 1 of exercise 7 has an unmatched `"),
    ({"solution": "run `ex7.check( again"}, "the solution of exercise 7 has an unmatched `"),
])
def test_exercise_rejects_text_it_cannot_show(kwargs, message):
    with pytest.raises(ValueError, match=message):
        simple(**kwargs)


def test_message_is_markdown_with_maths_and_plain_text():
    shown = E.Message("Exercise 7, hint 1 of 2:",
                      r"the prediction is $\sum_i \xi_i c_i(x)$, so compare 8*32 with "
                      "`ex7.check(...)` and valid_lens [i, t].")
    # Maths and code as written, everything else escaped so Markdown shows it literally.
    assert shown._repr_markdown_() == (
        r"**Exercise 7, hint 1 of 2:** the prediction is $\sum_i \xi_i c_i(x)$, so compare "
        r"8\*32 with `ex7.check(...)` and valid\_lens \[i, t\].")
    # Outside Jupyter: the text as written, wrapped, nothing escaped.
    assert repr(shown) == str(shown) == shown.plain == (
        "Exercise 7, hint 1 of 2: the prediction is $\\sum_i \\xi_i c_i(x)$, so compare\n"
        "8*32 with `ex7.check(...)` and valid_lens [i, t].")


def test_message_keeps_paragraphs_and_lists():
    shown = E.Message("Lead:", "first\n- one\n- two\nlast")
    assert shown.markdown == "**Lead:** first\n\n- one\n- two\n\nlast"
    assert shown.plain == "Lead: first\n- one\n- two\nlast"


def test_hint_and_solution_display_markdown_in_jupyter(monkeypatch, capsys):
    shown = []
    monkeypatch.setattr(E.display, "jupyter_display", lambda: shown.append)
    ex = simple(("x", E.number(1.0)), hints=[r"use $\sqrt{d}$", "then `ex7.check(1)`"],
                solution=r"it is $H_{ii}/2$")
    ex.hint()
    ex.solution()
    assert capsys.readouterr().out == ""  # displayed, not printed
    hint, solution = shown
    assert hint._repr_markdown_() == (
        r"**Exercise 7, hint 1 of 2:** use $\sqrt{d}$ (`ex7.hint()` again for the next one.)")
    assert repr(hint) == (
        r"Exercise 7, hint 1 of 2: use $\sqrt{d}$ (`ex7.hint()` again for the next one.)")
    assert solution._repr_markdown_() == r"**Exercise 7, solution:** it is $H_{ii}/2$"
    assert repr(solution) == r"Exercise 7, solution: it is $H_{ii}/2$"
    ex.check(2.0)  # check messages stay printed text
    assert "not right yet" in capsys.readouterr().out and len(shown) == 2


def test_outside_jupyter_hint_and_solution_print_the_raw_text(capsys):
    assert E.display.jupyter_display() is None  # pytest runs no kernel
    ex = simple(hints=[r"use $\sqrt{d}$", "then `ex7.check(1)`"], solution=r"$\frac{a}{b}$")
    ex.hint(2)
    ex.solution()
    assert capsys.readouterr().out == ("Exercise 7, hint 2 of 2: then `ex7.check(1)`\n"
                                       "Exercise 7, solution: $\\frac{a}{b}$\n")


def test_printed_lines_fit_79_columns(capsys):
    ex = simple(("the relative squared error of the even split over every head", E.number(1.0)),
                ("the smallest number of samples", E.number(2.0)))
    ex.check(3.0, ...)
    ex.hint(1)
    lines = capsys.readouterr().out.splitlines()
    assert E.WIDTH == 79 and len(lines) >= 4
    assert max(map(len, lines)) <= 79 < len(" ".join(lines))
    assert any(line.startswith("  ") for line in lines)  # a list item's continuation


def exercises_of_every_notebook():
    import importlib
    import pkgutil
    import re

    for info in pkgutil.iter_modules(E.__path__):
        if not re.fullmatch(r"nb\d\d", info.name):  # core, checkers, display, ...
            continue
        module = importlib.import_module(f"d2lutil.exercises.{info.name}")
        for name in module.__all__:
            yield f"{info.name}.{name}", getattr(module, name)


EVERY_EXERCISE = dict(exercises_of_every_notebook())


@pytest.mark.parametrize("name", list(EVERY_EXERCISE))
def test_every_hint_and_solution_renders_both_ways(name):
    """Every notebook's hints and solutions: Markdown, and the raw text in lines that fit."""
    ex = EVERY_EXERCISE[name]
    texts = [(f"hint {i}", text) for i, text in enumerate(ex.hints, 1)]
    for what, text in [*texts, ("solution", ex._solution)]:
        shown = E.Message(f"Exercise {ex.number}, {what}:", text)
        lead = f"Exercise {ex.number}, {what}:"
        # the raw text, only its white space changed by the wrapping
        assert "".join(shown.plain.split()) == "".join(f"{lead} {text}".split()), name
        assert max(map(len, shown.plain.splitlines())) <= E.WIDTH, f"{name}, {what}"
        assert shown.markdown.count("$") % 2 == 0


KERNEL_CODE = r"""
from d2lutil.exercises import Exercise
ex = Exercise(3, [], hints=[r"the prediction is $\sum_i \xi_i c_i(x)$"],
              solution=r"switching head $i$ off costs $-g_i + H_{ii}/2$")
ex.hint()
ex.solution()
"""


def test_in_a_jupyter_kernel_hints_are_markdown_and_imports_print_nothing():
    """A real kernel, as in JupyterLab: importing the exercises outputs nothing; a hint and a
    solution are one display each, Markdown and the raw text, no stream."""
    from jupyter_client.manager import start_new_kernel

    def run(code):
        outputs = []
        reply = client.execute_interactive(
            code, timeout=120, output_hook=lambda msg: outputs.append(msg)
            if msg["msg_type"] in ("stream", "display_data", "execute_result", "error")
            else None)
        assert reply["content"]["status"] == "ok", reply["content"]
        return [(msg["msg_type"], msg["content"]) for msg in outputs]

    manager, client = start_new_kernel(kernel_name="python3", startup_timeout=120)
    try:
        assert run("import d2lutil.exercises, d2lutil.exercises.nb01\n"
                   "import d2lutil.exercises.nb06") == []
        outputs = run(KERNEL_CODE)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert [kind for kind, _ in outputs] == ["display_data", "display_data"]
    hint, solution = (content["data"] for _, content in outputs)
    assert set(hint) == {"text/markdown", "text/plain"}
    assert hint["text/markdown"] == (r"**Exercise 3, hint 1 of 1:** the prediction is "
                                     r"$\sum_i \xi_i c_i(x)$")
    assert hint["text/plain"] == (r"Exercise 3, hint 1 of 1: the prediction is "
                                  r"$\sum_i \xi_i c_i(x)$")
    assert solution["text/markdown"].endswith(r"costs $-g_i + H_{ii}/2$")
    assert solution["text/plain"] == (r"Exercise 3, solution: switching head $i$ off costs "
                                      r"$-g_i + H_{ii}/2$")


def test_a_rubric_marks_the_open_part_and_shows_after_the_solution(capsys):
    ex = E.Exercise(4, [("n", E.integer(3))], hints=["h"], solution="Three.",
                  open_part="why three", rubric=[(2, "names the reason"),
                                                 (1, "says where it fails")])
    assert ex.rubric_points == 3 and ex.max_points == 1
    ex.solution()
    out = capsys.readouterr().out
    assert out.index("Three.") < out.index("by hand, 3 points")
    assert "- 2 points: names the reason" in out and "- 1 point: says where it fails" in out
    plain = E.Exercise(5, [("n", E.integer(3))], hints=["h"], solution="Three.")
    assert plain.rubric == [] and plain.rubric_points == 0


@pytest.mark.parametrize("kwargs, message", [
    (dict(rubric=[(2, "x")]), "rubric is for an open part"),
    (dict(open_part="why", rubric=[]), "non-empty list"),
    (dict(open_part="why", rubric=[(4, "x")]), "points from above 0 to 3"),
    (dict(open_part="why", rubric=[(2, " ")]), "non-empty criterion"),
    (dict(open_part="why", rubric=[("2", "x")]), "pairs")])
def test_a_bad_rubric_is_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        E.Exercise(6, [("n", E.integer(3))], hints=["h"], solution="s", **kwargs)
