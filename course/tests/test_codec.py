"""course/codec.py, the one JSON format between the grader and the student's kernel: the
chapter's cases come back as they were, a student's answer travels whatever it holds, and
the runner's last cell sends a class answer's results that the grader judges."""

import collections
import importlib
import json
import sys

import numpy as np
import pytest
import torch

import codec
import grade
import grade_runner
from d2lutil import MultiHeadAttention
from d2lutil.exercises import CallResults, Raised, cases, nb10
from student_layouts import HeadAxis

CHAPTER = grade.load_chapter()


def through_json(value, **options):
    return json.loads(json.dumps(codec.encode(value, **options)))


def function_cases():
    """(label, cases) of every function part of the chapter, public and hidden."""
    return [(f"nb{number}.{label}", checker.cases())
            for number, notebook in sorted(CHAPTER.items())
            for _, _, name, label, checker in notebook.graded_parts(None)
            if name in notebook.functions]


@pytest.mark.parametrize("label, given", function_cases(), ids=lambda x: str(x)[:12])
def test_every_case_of_the_chapter_comes_back_as_it_was(label, given):
    try:
        sent = through_json(given)
    except TypeError:  # cannot travel: the kernel's own module makes them (job_functions)
        return
    back = codec.decode(sent)
    assert codec.encode(back) == sent, label
    for case, case_back in zip(given, back, strict=True):
        assert [type(a) for a in case] == [type(a) for a in case_back], label


def test_a_built_case_is_built_again_but_never_from_an_answer():
    module = cases.refusing_attention(8, 2, seed=3)
    back = codec.decode(through_json((module, 5)))
    assert isinstance(back[0], cases.RefusingAttention) and back[1] == 5
    assert torch.equal(back[0].W_q.weight, module.W_q.weight)
    with pytest.raises(ValueError, match="cases are not built by"):
        codec.decode(through_json(module), builders=())
    assert through_json(module, loose=True) == {"$": "function"}  # a module is callable
    with pytest.raises(TypeError, match="a case cannot hold builtin_function_or_method"):
        codec.encode([len])


def test_a_students_answer_travels_whatever_it_holds():
    point = collections.namedtuple("Point", "x y")
    answer = {"a": [np.float64(0.5), np.int32(3), torch.ones(2, 3), ...],
              (1, "b"): point(1, 2), "f": len, "o": object(), "e": KeyError("x"), "c": ValueError}
    back = codec.decode(through_json(answer, max_items=10, loose=True), builders=())
    assert back["a"][0].dtype == np.float64 and back["a"][0] == 0.5  # not a stand-in
    assert back["a"][1].dtype == np.int32 and back["a"][3] is Ellipsis
    assert torch.equal(back["a"][2], torch.ones(2, 3)) and back[(1, "b")] == (1, 2)
    assert repr(back["f"]) == "<a value of type function>"
    assert repr(back["o"]) == "<a value of type object>"
    assert type(back["e"]) is KeyError and back["c"] is ValueError
    too_large = through_json([list(range(11))], max_items=10, loose=True)
    assert too_large == [{"$": "too_large", "size": 11, "limit": 10}]
    with pytest.raises(ValueError, match="holds 11 values, more than the 10 the grader reads"):
        codec.decode(too_large)
    nested = []
    for _ in range(30):
        nested = [nested]
    assert "nested too deeply" in json.dumps(through_json(nested, loose=True))


def test_decode_rebuilds_the_answers_the_checkers_know():
    def decode(value):
        return codec.decode(value, builders=())

    assert decode({"$": "ellipsis"}) is Ellipsis
    assert decode({"$": "tuple", "items": [1, [2.5]]}) == (1, [2.5])
    assert decode({"$": "dict", "items": [[1, 0.5]]}) == {1: 0.5}
    array = decode({"$": "ndarray", "dtype": "int64", "shape": [2], "data": [1, 2]})
    assert array.dtype == np.int64 and array.tolist() == [1, 2]
    tensor = decode({"$": "tensor", "dtype": "bool", "shape": [], "data": True})
    assert tensor.dtype == torch.bool and tensor.ndim == 0
    assert decode({"$": "exception_class", "name": "ValueError"}) is ValueError
    made = decode({"$": "exception_class", "name": "MyError"})
    assert issubclass(made, Exception) and made.__name__ == "MyError"
    results = decode({"$": "results", "items": [1, {"$": "raised", "type": "KeyError",
                                                    "text": "'x'"}]})
    assert isinstance(results, CallResults) and isinstance(results[1], Raised)
    for bad in ({"$": "ndarray", "dtype": "object", "shape": [], "data": 1},
                {"$": "tensor", "dtype": "nonsense", "shape": [], "data": 1},
                {"$": "too_large", "size": 10**9}, {"$": "unknown"},
                {"$": "built", "module": "cases", "name": "refusing_attention", "args": []}):
        with pytest.raises(ValueError):
            decode(bad)


class IgnoresLens(HeadAxis):  # a wrong class: every key is valid
    def forward(self, queries, keys, values, valid_lens=None):
        return super().forward(queries, keys, values, None)


def test_the_runners_last_cell_sends_what_the_grader_judges(tmp_path, monkeypatch):
    """Notebook 10's class answer run by the runner's last cell as in the kernel, on the
    grader's cases or its own module's, and judged: right, wrong, or calling the library's."""
    monkeypatch.setitem(sys.modules, "d2lutil.exercises.codec", codec)
    notebook, path = CHAPTER["10"], tmp_path / "answers.json"
    options = grade.Options(tmp_path / "grades.csv", isolation="none")
    functions = notebook.job_functions(None)
    module, name, index, _ = functions["MyMultiHeadAttention"]
    cells = [grade_runner.answers_cell(notebook.names, sent, str(path), grade.MAX_ITEMS)
             for sent in (functions, {"MyMultiHeadAttention": [module, name, index, None]})]
    for cls, points, says in ((HeadAxis, nb10.ex2.max_points, "correct"),
                              (IgnoresLens, 0, "first departs at"),
                              (MultiHeadAttention, 0, "may not call d2lutil's")):
        exec(cells[0], {"MyMultiHeadAttention": cls})
        row = {"parts": {}}
        grade._fill(row, notebook, {"status": "graded", "answers": path.read_text()}, options)
        got, message = row["parts"]["ex2.1"][:2]
        assert got == points and says in message, message
        assert row["parts"]["ex1.1"][1].startswith("not answered: the notebook has no")
        exec(cells[1], {"MyMultiHeadAttention": cls})
        answer = codec.decode(json.loads(path.read_text())["MyMultiHeadAttention"], ())
        exercise = getattr(importlib.import_module(module), name)
        assert exercise.check_part(index, answer).points == points
