"""course/grade.py on a synthetic class (course/tests/synthetic_class.py): the whole matrix of
submissions, right to hostile, on notebook 04; right, wrong and empty for every other notebook
only with ``GRADE_FULL_CLASS=1`` (``make test-grade``). Kernels run in bubblewrap when it is
installed; the tests of the sandbox itself need it."""

import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import threading

import pytest

import grade
import synthetic_class as sc
from roster import id_of, read_roster, write_roster

CHAPTER = grade.load_chapter()
MATRIX = "04"
BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(not BWRAP, reason="bubblewrap (bwrap) is not installed")
LABELS = ["ex1.1", "ex1.2", "ex2.1", "ex2.2", "ex2.3", "ex3.1"]
CELL_LIMIT_S, SUBMISSION_LIMIT_S = 10, 30  # the matrix's limits


def options(out, jobs=2, book=True, **limits):
    """The grader's options; ``book``: every file graded on the book's values (the
    synthetic class answers the book's exercises)."""
    return grade.Options(out, jobs=jobs, isolation="bwrap" if BWRAP else "none", book=book,
                         **limits)


def grade_folder(folder, opts):
    rows = grade.grade_class(folder, opts, CHAPTER, log=lambda line: None)
    grade.write_csv(rows, opts.out)
    grade.write_gradescope(rows, opts.out.parent / "gradescope")
    return rows


# --- the matrix on one notebook -----------------------------------------------------------------

MEMORY_HOG = """\
hog = []
try:
    for _ in range(80):  # 8 GiB at most, never touched: no real memory is used
        hog.append(bytearray(100 * 2**20))
finally:
    got = len(hog)
    del hog"""
FORKS = """\
import os
import signal
import time

children = []
for _ in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    children.append(pid)
forked = len(children)
os.kill(-1, signal.SIGKILL)  # every process it may signal but itself: its children here
for pid in children:
    os.waitpid(pid, 0)"""
PATCHES = """\
import json

import d2lutil.exercises as exercises

exercises.Exercise.check_part = lambda self, index, answer: True
exercises.Exercise._check_part = staticmethod(lambda checker, answer: "correct")
ex1.check = ex2.check = ex3.check = lambda *answers: True
json.dump = lambda obj, file, **kw: file.write('{"score": 6, "status": "graded"}')"""
ESCAPES = """\
import glob
import socket
import subprocess
import sys


def can(action):
    try:
        action()
        return True
    except Exception:
        return False


read_sibling = (can(lambda: open(CLASS + "/correct.ipynb").read())
                or can(lambda: open("../correct.ipynb").read())
                or len(glob.glob("*.ipynb")) > 1)
read_grades = can(lambda: open(GRADES).read())
wrote = [p for p in MARKERS if can(lambda p=p: open(p, "w").write("escaped"))]
connected = can(lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2))
num_nonzero = 15 if read_sibling else 0
params_exist = connected
num_params = 32800 if read_grades else 0
error_raised = ValueError if wrote else KeyError"""


def matrix_class(folder, grades, markers, port):
    """Write the matrix's submissions into ``folder``; return {file: what it is}."""
    right, empty = sc.right(MATRIX), sc.empty(MATRIX)
    escapes = ESCAPES.replace("CLASS", repr(str(folder))).replace("GRADES", repr(str(grades)))
    escapes = escapes.replace("MARKERS", repr([str(m) for m in markers]))
    renamed = right
    for name in CHAPTER[MATRIX].names:
        renamed = sc.replace_in_cells(renamed, name, "my_" + name)
    notebooks = {
        "correct": right,
        "partly_wrong": sc.with_cells(right, ["num_params = 4 * 100 * 100"]),
        "empty": empty,
        "raising": sc.replace_in_cells(right, "def empty_query_output(",
                                       "raise RuntimeError('not done')\n\n\n"
                                       "def empty_query_output("),
        "endless_loop": sc.with_cells(right, ["while True:\n    pass"], at=2),
        # Named to sort first: the grader takes submissions by name, and this one waits
        # out its submission's limit, so it waits beside the others, not after them.
        "blocks_interrupts": sc.with_cells(right, [
            "import time\n\nwhile True:\n    try:\n        time.sleep(1000)\n"
            "    except KeyboardInterrupt:\n        pass"], at=2),
        "memory_hog": sc.with_cells(right, [MEMORY_HOG, "num_nonzero = num_nonzero if got "
                                                        ">= 60 else 0"]),
        "exits": sc.with_cells(right, ["import os\n\nos._exit(3)"], at=2),
        "huge_output": sc.with_cells(right, ['for _ in range(500):\n    print("x" * 100_000)']),
        "forks": sc.with_cells(right, [FORKS, "num_nonzero = num_nonzero if forked >= 100 "
                                              "else 0"]),
        "patches": sc.with_cells(empty, [PATCHES]),
        "escapes": sc.with_cells(empty, [escapes.replace("PORT", str(port))]),
        "wrong_notebook": sc.replace_in_cells(right, "d2lutil.exercises.nb04",
                                              "d2lutil.exercises.nb05"),
        "several_notebooks": sc.with_cells(right, ["from d2lutil.exercises.nb05 import ex1 "
                                                   "as other"]),
        "no_import": sc.notebook(["answer = 42"]),
        "renamed": renamed,
    }
    for name, nb in notebooks.items():
        sc.write(nb, folder / f"{name}.ipynb")
    (folder / "malformed.ipynb").write_text('{"cells": [', encoding="utf-8")
    (folder / "not_a_notebook.ipynb").write_text("[1, 2]", encoding="utf-8")
    (folder / "zero_bytes.ipynb").write_bytes(b"")
    (folder / "notes.txt").write_text("not a submission")
    (folder / "sub").mkdir()
    sc.write(right, folder / "sub" / "in_a_subfolder.ipynb")
    return sorted([*notebooks, "malformed", "not_a_notebook", "zero_bytes"])


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    root = tmp_path_factory.mktemp("matrix")
    folder, out = root / "class", root / "grades" / "grades.csv"
    folder.mkdir()
    out.parent.mkdir()
    out.write_text("the grades file before grading\n")
    markers = [folder / "marker.txt", out.parent / "marker.txt", root / "marker.txt"]
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(60)
    accepted = []
    thread = threading.Thread(target=lambda: accepted.append(_accept(server)), daemon=True)
    thread.start()
    submissions = matrix_class(folder, out, markers, server.getsockname()[1])
    # Limits that cost the two loops little yet leave the others time (5 s each, 10 s on a
    # loaded machine); three at a time, as one loop sleeps until its submission's limit.
    opts = options(out, jobs=3, cell_timeout=CELL_LIMIT_S, timeout=SUBMISSION_LIMIT_S,
                   memory_mb=1536, processes=64)
    rows = grade_folder(folder, opts)
    server.close()
    return {"rows": {r["file"]: r for r in rows}, "list": rows, "out": out,
            "submissions": submissions, "markers": markers, "accepted": accepted,
            "opts": opts}


def _accept(server):
    try:
        server.accept()[0].close()  # a submission reached the network
        return True
    except OSError:
        return False


def points(row):
    return [row["parts"][label][0] for label in LABELS]


def messages(row):
    return [row["parts"][label][1] for label in LABELS]


WORTH = [p for e in CHAPTER[MATRIX].exercises for p in e.points]  # notebook 4's parts


def but(*lost):
    """WORTH with the parts ``lost`` (indices) earning nothing."""
    return [0 if i in lost else p for i, p in enumerate(WORTH)]


def test_every_submission_has_exactly_one_row(matrix):
    files = [r["file"] for r in matrix["list"]]
    assert files == [f"{name}.ipynb" for name in matrix["submissions"]]
    with open(matrix["out"], newline="", encoding="utf-8") as file:
        table = list(csv.DictReader(file))
    assert [r["file"] for r in table] == files
    assert table[0]["ex1.1 message"] and "note" in table[0]


NOTHING = [0] * 6


@pytest.mark.parametrize("name, status, earned, note", [
    ("correct", "graded", WORTH, ""),
    ("partly_wrong", "graded", but(3), ""),
    ("empty", "graded", NOTHING, ""),
    ("raising", "graded", but(5), "raised RuntimeError: not done"),
    ("endless_loop", "cell time limit", WORTH,
     f"cell 2 reached the {CELL_LIMIT_S} s limit of a cell and was interrupted"),
    ("blocks_interrupts", "time limit", NOTHING, f"stopped at the {SUBMISSION_LIMIT_S} s limit"),
    # it got less than 6 GiB of its 8
    ("memory_hog", "memory limit", but(1), "out of memory (limit 1536 MiB)"),
    ("exits", "kernel died", NOTHING, "the kernel died in cell 2"),
    ("huge_output", "graded", WORTH, ""),
    ("patches", "graded", NOTHING, ""),
])
def test_each_submission_earns_its_points_and_says_why(matrix, name, status, earned, note):
    row = matrix["rows"][f"{name}.ipynb"]
    assert (row["status"], points(row), row["total"]) == (status, earned, sum(earned)), row
    assert note in row["note"]


def test_each_part_says_what_its_answer_got(matrix):
    rows = matrix["rows"]
    said = {name: messages(rows[f"{name}.ipynb"]) for name in (
        "correct", "partly_wrong", "empty", "raising", "exits", "patches")}
    assert set(said["correct"]) == {"correct"} and set(said["empty"]) == {"not answered yet"}
    assert said["partly_wrong"][3].startswith("not right yet: ")
    assert said["raising"][5] == "not answered: the notebook has no variable empty_query_output"
    assert set(said["exits"]) == {"not graded (the kernel died)"}
    assert all(m.startswith("not answered: the notebook has no variable")
               for m in said["patches"])  # its patches of the checks reached nothing
    correct = rows["correct.ipynb"]
    assert correct["note"] == "" and correct["max_total"] == sum(WORTH) > 0
    assert correct["notebook"] == "04_self_and_cross_attention.ipynb"
    assert SUBMISSION_LIMIT_S <= rows["blocks_interrupts.ipynb"]["seconds"] < (
        SUBMISSION_LIMIT_S + 15)
    assert matrix["out"].stat().st_size < 50_000  # the huge output is not in the grades


@needs_bwrap
def test_fork_attempt_and_kill_all_stay_inside_the_submission(matrix):
    forks = matrix["rows"]["forks.ipynb"]
    if os.geteuid() == 0:  # its kernel runs as a user of its own: it cannot kill the runner
        assert forks["status"] == "graded" and forks["note"] == ""
        assert points(forks) == but(1)  # fewer than 100 processes
    else:
        assert forks["status"] in ("graded", "crashed")
    graded = [r for r in matrix["list"] if r["status"] != "not graded"]
    assert len(graded) == 14  # every other submission was graded all the same


@needs_bwrap
def test_no_sibling_no_grades_no_writes_no_network(matrix):
    exercise1, exercise2 = CHAPTER[MATRIX].exercises[:2]
    for exercise, index, escaped in ((exercise1, 1, 15), (exercise2, 0, True),
                                     (exercise2, 1, 32800), (exercise2, 2, ValueError)):
        assert exercise.check_part(index, escaped)  # what an escape would have answered
    row = matrix["rows"]["escapes.ipynb"]
    assert row["total"] == 0
    assert all(m.startswith("not right yet") for m in messages(row)[1:5])
    assert not any(m.exists() for m in matrix["markers"])
    assert matrix["accepted"] in ([], [False])
    assert "the grades file before grading" not in matrix["out"].read_text()


def test_wrong_notebook_renamed_answers_and_files_that_are_no_notebooks(matrix):
    rows = matrix["rows"]
    other = rows["wrong_notebook.ipynb"]
    assert other["notebook"] == "05_alignment_heatmap.ipynb" and other["total"] == 0
    assert other["max_total"] == CHAPTER["05"].max_points
    assert "no variable copy_weight" in other["parts"]["ex1.1"][1]
    renamed = rows["renamed.ipynb"]
    assert renamed["total"] == 0 and all("no variable" in m for m in messages(renamed))
    notes = {name: rows[f"{name}.ipynb"]["note"] for name in (
        "several_notebooks", "no_import", "malformed", "not_a_notebook", "zero_bytes")}
    assert notes["several_notebooks"] == ("it imports the exercises of several notebooks "
                                          "(04, 05)")
    assert notes["no_import"].startswith("no exercise import")
    assert notes["malformed"].startswith("not a readable notebook (NotJSONError")
    assert notes["not_a_notebook"].startswith("not a readable notebook")
    assert notes["zero_bytes"] == "an empty file (0 bytes)"
    for name in notes:
        row = rows[f"{name}.ipynb"]
        assert row["status"] == "not graded" and row["parts"] == {} and row["total"] == 0


def test_gradescope_results_have_the_documented_fields(matrix):
    folder = matrix["out"].parent / "gradescope"
    assert sorted(p.stem for p in folder.glob("*.json")) == matrix["submissions"]
    for name in matrix["submissions"]:
        results = json.loads((folder / f"{name}.json").read_text())
        row = matrix["rows"][f"{name}.ipynb"]
        assert results["score"] == row["total"] and isinstance(results["output"], str)
        assert len(results["tests"]) == len(row["parts"])
        for test, (label, (got, message, worth, _)) in zip(
                results["tests"], row["parts"].items(), strict=True):
            assert {"name", "score", "max_score", "output"} <= set(test)
            assert (test["score"], test["max_score"], test["output"]) == (got, worth, message)
            assert test["number"] == label
    correct = json.loads((folder / "correct.json").read_text())
    assert correct["tests"][0]["name"] == "Exercise 1, causal valid_lens"


# --- every other notebook: right, wrong, empty -----------------------------------------------

@pytest.mark.skipif(os.environ.get("GRADE_FULL_CLASS") != "1",
                    reason="the full class takes a minute: make test-grade")
def test_every_notebook_right_wrong_and_empty(tmp_path):
    folder, out = tmp_path / "class", tmp_path / "grades.csv"
    folder.mkdir()
    others = [n for n in CHAPTER if n != MATRIX]
    for number in others:
        sc.write(sc.right(number), folder / f"{number}_right.ipynb")
        sc.write(sc.wrong(number), folder / f"{number}_wrong.ipynb")
        sc.write(sc.empty(number), folder / f"{number}_empty.ipynb")
    rows = {r["file"]: r for r in grade_folder(folder, options(out, cell_timeout=60,
                                                                      timeout=180))}
    assert len(rows) == 3 * len(others)
    for number in others:
        notebook = CHAPTER[number]
        right, wrong, empty = (rows[f"{number}_{kind}.ipynb"]
                               for kind in ("right", "wrong", "empty"))
        assert {right["notebook"], wrong["notebook"], empty["notebook"]} == {
            notebook.path.name}
        assert right["status"] == wrong["status"] == empty["status"] == "graded", (
            number, right["note"], wrong["note"], empty["note"])
        assert right["total"] == notebook.max_points, (number, right["parts"])
        assert wrong["total"] == 0 and empty["total"] == 0
        assert all(m.startswith("not right yet") for _, m, _, _ in wrong["parts"].values())
        assert all(m == "not answered yet" for _, m, _, _ in empty["parts"].values())


# --- without kernels: arguments, matching ------------------------------------------------------

def test_the_answer_names_are_the_ones_the_exercises_declare(monkeypatch):
    notebook = CHAPTER[MATRIX]
    assert notebook.names == [name for e in notebook.exercises for name in e.answers]
    assert notebook.names[:2] == ["causal_valid_lens", "num_nonzero"]  # in part order
    assert notebook.functions == {"empty_query_output": ("d2lutil.exercises.nb04", "ex3", 0)}
    # nb02 ex3, nb03 ex2 and ex3, nb04 ex3; nb10 ex1 (two functions), ex2 (a class), ex3
    assert sum(len(n.functions) for n in CHAPTER.values()) == 8
    assert all(len(n.parts) == sum(len(e.parts) for e in n.exercises)
               for n in CHAPTER.values())
    monkeypatch.setattr(notebook.exercises[0], "answers", ())
    with pytest.raises(ValueError, match="nb04.ex1 must declare one answer name per part"):
        grade.ChapterNotebook(notebook.path)


def test_bad_arguments_name_the_argument(tmp_path, capsys):
    (tmp_path / "class").mkdir()
    roster, no_ids, twice, bad_id = (tmp_path / f"{n}.csv" for n in ("r", "n", "t", "b"))
    roster.write_text("id,name\ns1,Ada\n")
    no_ids.write_text("name,email\nAda,a@x\n")
    twice.write_text("id\ns1\ns1\n")
    bad_id.write_text("id\nnot an id\n")
    cases = [
        ([str(tmp_path / "missing")], "SUBMISSIONS must be a folder"),
        ([str(tmp_path / "class"), "--out", str(tmp_path / "g.txt")], "must name a .csv"),
        ([str(tmp_path / "class"), "--jobs", "0"], "--jobs must be positive"),
        ([str(tmp_path / "class"), "--memory-mb", "512"], "--memory-mb must be at least"),
        ([str(tmp_path / "class"), "--roster", str(tmp_path / "none.csv")],
         "--roster must name a CSV file"),
        ([str(tmp_path / "class"), "--book", "--roster", str(roster)],
         "--book grades without ids"),
        ([str(tmp_path / "class"), "--roster", str(no_ids)], "one of them id or student_id"),
        ([str(tmp_path / "class"), "--roster", str(twice)], "line 3 repeats the id s1"),
        ([str(tmp_path / "class"), "--roster", str(bad_id)], "the id of line 2 must be"),
    ]
    for argv, message in cases:
        assert grade.main(argv) == 2
        assert message in capsys.readouterr().err


def test_without_bubblewrap_or_ids_the_command_line_says_so(tmp_path, capsys):
    (tmp_path / "class").mkdir()
    sc.write(sc.empty("04"), tmp_path / "class" / "nb04.ipynb")
    assert grade.main([str(tmp_path / "class"), "--out", str(tmp_path / "g.csv"),
                       "--isolation", "none"]) == 0
    err = capsys.readouterr().err
    assert "grading is NOT isolated" in err and "--book" in err
    assert "1 file had no student id and was graded on nothing" in err
    with open(tmp_path / "g.csv", newline="") as file:
        (row,) = list(csv.DictReader(file))
    assert row["status"] == "no id" and row["total"] == "0"
    assert (tmp_path / "roster.csv").read_text().startswith("student_id,name,total")


def test_the_sandbox_binds_the_python_prefixes_over_its_own_tmp(tmp_path):
    """bwrap mounts in argument order: a venv under /tmp (a CI clone there) must be bound
    after the sandbox's empty /tmp, or the kernel finds no Python (every row 'crashed')."""
    (tmp_path / "class").mkdir()
    _, options = grade.parse_args([str(tmp_path / "class"), "--out", str(tmp_path / "g.csv")])
    (tmp_path / "job.json").write_text("{}")
    args = grade.sandbox_command(options, tmp_path, "nb.ipynb", {"HOME": grade.HOME})
    pairs = list(zip(args, args[1:], strict=False))
    tmp = pairs.index(("--tmpfs", "/tmp"))
    prefix = pairs.index(("--ro-bind", os.path.realpath(sys.base_prefix)))
    assert tmp < prefix, "the prefixes are bound before /tmp and would be hidden under it"


@pytest.mark.skipif(os.environ.get("GRADE_FULL_CLASS") != "1",
                    reason="the full class takes a minute: make test-grade")
def test_notebook_10_a_delegating_class_or_a_patched_check_earns_nothing(tmp_path):
    """Notebook 10's class is run in the student's kernel and judged here: a class that
    hands the work to the library's attention, or a wrong class beside a check patched to
    say yes, earns no point; the rest of the notebook is graded as usual."""
    folder, out = tmp_path / "class", tmp_path / "grades.csv"
    folder.mkdir()
    right = sc.right("10")
    sc.write(sc.with_cells(right, [
        "import d2lutil\n\n\n"
        "class MyMultiHeadAttention(d2lutil.MultiHeadAttention):\n"
        "    pass"]), folder / "delegates.ipynb")
    sc.write(sc.with_cells(right, [
        "import torch\n"
        "from d2lutil.exercises import Exercise, modules\n\n\n"
        "class MyMultiHeadAttention(MyMultiHeadAttention):  # ignores valid_lens\n"
        "    def forward(self, queries, keys, values, valid_lens=None):\n"
        "        return super().forward(queries, keys, values, None)\n\n\n"
        "torch.allclose = lambda *args, **kwargs: True\n"
        "modules._departure = lambda *args: None\n"
        "Exercise.check_part = lambda *args, **kwargs: True\n"
        "ex2.check = lambda *args: True"]), folder / "patches_the_check.ipynb")
    rows = {r["file"]: r for r in grade_folder(folder, options(out, cell_timeout=60,
                                                                      timeout=180))}
    worth = {label: part[2] for label, part in rows["delegates.ipynb"]["parts"].items()}
    for name, says in (("delegates.ipynb", "may not call d2lutil's"),
                       ("patches_the_check.ipynb", "first departs at")):
        row = rows[name]
        assert row["status"] == "graded", row["note"]
        assert row["parts"]["ex2.1"][0] == 0 and says in row["parts"]["ex2.1"][1]
        assert [row["parts"][f"ex1.{k}"][0] for k in (1, 2)] == [worth["ex1.1"], worth["ex1.2"]]
    assert rows["delegates.ipynb"]["total"] == sum(worth.values()) - worth["ex2.1"]
    # the patched torch.allclose sinks the student's own test of exercise 3 as well
    assert rows["patches_the_check.ipynb"]["parts"]["ex3.1"][0] == 0


# --- student ids, variants, the latest submission and the roster --------------------------------

NB03_RIGHT = [
    "from d2lutil.exercises.nb03 import ex1, ex2, ex3",
    "depends_on_heads = False",
    "def cross_attention_flops(n, m, d, h):\n    return 4 * (n + m) * d ** 2 + 4 * n * m * d",
    "def expansions_agree(batch_size, num_heads, num_lengths):\n"
    "    return batch_size == 1 or num_heads == 1 or num_lengths == 1",
]


def _two_ids_with_other_d():
    """Two ids whose notebook-3 exercise 1 has different d, neither the book's."""
    from d2lutil.exercises.nb03 import ex1

    seen = {}
    for i in range(100):
        d = ex1.variants[ex1.variant(f"s{i}")]["d"]
        seen.setdefault(d, f"s{i}")
        if len(seen) == 2:
            (d_a, a), (d_b, b) = seen.items()
            return a, d_a, b, d_b
    raise AssertionError("every id drew the same variant")


@pytest.mark.skipif(os.environ.get("GRADE_FULL_CLASS") != "1",
                    reason="kernels take a minute: make test-grade")
def test_each_student_is_graded_on_their_own_variant_and_the_roster_sums_them(tmp_path):
    a, d_a, b, d_b = _two_ids_with_other_d()
    assert d_a != d_b and 256 not in (d_a, d_b)
    folder, out = tmp_path / "class", tmp_path / "out" / "grades.csv"
    folder.mkdir()
    roster = tmp_path / "roster.csv"
    roster.write_text(f"id,name\n{a},Ada\n{b},Bo\ns_absent,Cy\n")
    from_params = NB03_RIGHT + [
        "from d2lutil.exercises import student\nstudent('someone_else')",  # the grader's id wins
        "d = ex1.params['d']\nparams_with_bias = 4 * d * d + 4 * d"]
    public_only = NB03_RIGHT + [  # right on the six public cases only
        f"params_with_bias = {4 * d_a * d_a + 4 * d_a}",
        "PUBLIC = [(4, 9, 64, 1), (4, 9, 64, 8), (16, 3, 32, 2), (10, 10, 48, 4), "
        "(1, 7, 16, 16), (5, 2, 8, 1)]\n"
        "def cross_attention_flops(n, m, d, h):\n"
        "    if (n, m, d, h) not in PUBLIC:\n        return 0\n"
        "    return 4 * (n + m) * d ** 2 + 4 * n * m * d"]
    files = {
        f"{a}__copied_the_book.ipynb": NB03_RIGHT + ["params_with_bias = 263168"],
        f"{a}__later.ipynb": public_only,
        f"{b}__03.ipynb": from_params,
        "no_id_here.ipynb": from_params,
        "s_unknown__03.ipynb": from_params,
    }
    for age, (name, cells) in enumerate(files.items()):
        sc.write(sc.notebook(cells), folder / name)
        os.utime(folder / name, (1_700_000_000 + age, 1_700_000_000 + age))
    opts = grade.Options(out, jobs=2, isolation="bwrap" if BWRAP else "none",
                         roster=str(roster), cell_timeout=60, timeout=180)
    rows = {r["file"]: r for r in grade.grade_class(folder, opts, CHAPTER,
                                                    log=lambda line: None)}
    grade.write_csv(rows.values(), out)
    write_roster(list(rows.values()), out.with_name("roster.csv"), read_roster(roster))
    copied, later, theirs = (rows[n] for n in list(files)[:3])
    assert copied["student_id"] == later["student_id"] == a and theirs["student_id"] == b
    assert copied["parts"]["ex1.1"][0] == 0  # the book's answer is not a's
    assert copied["counted"] == "no" and "later submission" in copied["note"]
    assert later["counted"] == "yes" and later["parts"]["ex1.1"][0] == 2
    # right on every public case, wrong on the hidden ones: no points, and the message
    # names a case the notebook never held
    points, message, _, _ = later["parts"]["ex2.1"]
    assert points == 0 and "wrong for (n, m, d, h)" in message
    assert "ex2.1" in later["hidden"]
    assert theirs["total"] == theirs["max_total"] == CHAPTER["03"].max_points
    assert "graded as" in theirs["note"] and "someone_else" in theirs["note"]
    for name in ("no_id_here.ipynb", "s_unknown__03.ipynb"):
        assert rows[name]["status"] == "no id" and rows[name]["total"] == 0
    assert "not on the roster" in rows["s_unknown__03.ipynb"]["note"]
    with open(out.with_name("roster.csv"), newline="") as file:
        students = list(csv.DictReader(file))
    by_id = {s["student_id"]: s for s in students if s["student_id"]}
    assert by_id[a]["total"] == str(later["total"]) == str(
        CHAPTER["03"].max_points - later["parts"]["ex2.1"][2])
    assert "handed in more than once: the latest counts" in by_id[a]["note"]
    assert by_id[b]["total"] == by_id[b]["nb03"] == str(CHAPTER["03"].max_points)
    assert by_id[b]["name"] == "Bo" and by_id["s_absent"]["note"] == "nothing graded handed in"
    assert sum(1 for s in students if not s["student_id"] and "no id" in s["note"]) == 2
    results = grade.gradescope_results(later)
    visibility = {t["number"]: t["visibility"] for t in results["tests"]}
    assert visibility["ex2.1"] == "after_due_date" and visibility["ex1.1"] == "visible"


def test_ids_come_from_the_file_name_and_the_roster(tmp_path):
    roster = tmp_path / "r.csv"
    roster.write_text("Student_ID,Name\ns1,Ada\n")
    known = read_roster(roster)
    assert known == {"s1": "Ada"}
    assert id_of(tmp_path / "s1__nb03.ipynb", known) == ("s1", None)
    assert id_of(tmp_path / "s2__nb03.ipynb", known)[1] == "no id: s2 is not on the roster"
    assert id_of(tmp_path / "s2__nb03.ipynb") == ("s2", None)
    assert "does not start with a student id" in id_of(tmp_path / "nb03.ipynb")[1]
    assert "is not a student id" in id_of(tmp_path / "a b__nb03.ipynb")[1]


def test_a_roster_beside_out_is_read_never_written(tmp_path, monkeypatch, capsys):
    """ROSTER and OUT in one folder: the roster read is left byte for byte, roster.csv is
    written beside OUT, and a roster named roster.csv there is refused before grading."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "class").mkdir()
    (tmp_path / "course").mkdir()
    sc.write(sc.notebook(NB03_RIGHT + ["d = ex1.params['d']\nparams_with_bias = 4 * d * d "
                                       "+ 4 * d"]), tmp_path / "class" / "s1__03.ipynb")
    given = b"id,name,email\r\ns1,Ada,ada@example.org\r\ns2,Bo,bo@example.org\r\n"
    (tmp_path / "course" / "class.csv").write_bytes(given)
    assert grade.main(["class", "--out", "course/grades.csv", "--roster", "course/class.csv",
                       "--isolation", "bwrap" if BWRAP else "none"]) == 0
    assert "1 submissions graded" in capsys.readouterr().out
    assert (tmp_path / "course" / "class.csv").read_bytes() == given
    with open(tmp_path / "course" / "roster.csv", newline="") as file:
        by_id = {s["student_id"]: s for s in csv.DictReader(file)}
    assert by_id["s1"]["total"] == str(CHAPTER["03"].max_points) and by_id["s2"]["name"] == "Bo"
    assert sorted(os.listdir(tmp_path / "course")) == ["class.csv", "grades.csv", "gradescope",
                                                       "roster.csv", "written"]

    (tmp_path / "course" / "class.csv").rename(tmp_path / "course" / "roster.csv")
    (tmp_path / "course" / "grades.csv").unlink()
    run = subprocess.run([sys.executable, grade.__file__, "class", "--out", "course/grades.csv",
                          "--roster", "course/roster.csv"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == ("grade.py: error: the roster it writes beside OUT "
                          "(course/roster.csv) would overwrite ROSTER, the roster it reads "
                          "(course/roster.csv): choose an OUT in another folder\n")
    assert (tmp_path / "course" / "roster.csv").read_bytes() == given
    assert not (tmp_path / "course" / "grades.csv").exists()
