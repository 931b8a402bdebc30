"""The Gradescope autograder (course/autograder.py), run as Gradescope runs it: the zip, built
once, unzipped into a root laid out as ``/autograder`` (``AUTOGRADER_ROOT``), kernels without
bubblewrap as in Gradescope's containers: as root, each as a user of its own per job slot."""

import concurrent.futures
import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile

import nbformat
import pytest

import autograder
import book
import synthetic_class
from d2lutil.exercises import nb03

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_root = pytest.mark.skipif(not IS_ROOT, reason="the kernel gets a user of its own only "
                                "when the autograder runs as root, as on Gradescope")
BOOK_COUNT = "263,168"  # notebook 3's exercise 1 at the book's d = 256, in its solution
IMPORT = "from d2lutil.exercises.nb03 import ex1, ex2, ex3"
EX2 = """\
def cross_attention_flops(n, m, d, h):
    return 4 * (n + m) * d * d + 4 * n * m * d


ex2.check(cross_attention_flops)"""
EX3 = """\
def expansions_agree(batch_size, num_heads, num_lengths):
    return batch_size == 1 or num_heads == 1 or num_lengths == 1


ex3.check(expansions_agree)"""
OWN = """\
d = ex1.params["d"]
params_with_bias = 4 * d * d + 4 * d
depends_on_heads = False
ex1.check(params_with_bias, depends_on_heads)"""


def d_of(student_id):
    return nb03.ex1.variants[nb03.ex1.variant(student_id)]["d"]


def two_students():
    """Two ids (a roster id, an e-mail) with different variants of nb03's exercise 1."""
    first = "s1000001"
    for n in range(100):
        other = f"student{n}@example.edu"
        if d_of(other) != d_of(first):
            return first, other
    raise AssertionError("no two ids with different variants of nb03.ex1")


def notebook(*sources):
    return synthetic_class.notebook(sources)


RIGHT = [("nb03.ipynb", notebook(IMPORT, OWN, EX2, EX3))]  # right for any student's d


@pytest.fixture(scope="module")
def zip_path(tmp_path_factory):
    return autograder.build(tmp_path_factory.mktemp("autograder") / "autograder.zip")


def runs_as_kernel_user(python):
    """Whether the kernel's user (61000) can start ``python``."""
    try:
        return subprocess.run([python, "-c", "pass"], user=61000, group=61000,
                              extra_groups=[], capture_output=True, cwd="/",
                              timeout=60).returncode == 0
    except OSError:
        return False


@pytest.fixture(scope="module")
def python():
    """The Python that runs the autograder and the kernels (``PYTHON``): this one if the
    kernel's user can start it (not under /root/.pyenv, say); else a virtual environment on
    the system's Python of its version that reads this one's packages (a path in a .pth
    file: this one's own .pth files, the editable d2lutil among them, are not run)."""
    if not IS_ROOT or runs_as_kernel_user(sys.executable):
        yield sys.executable
        return
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = shutil.which(version, path="/usr/local/bin:/usr/bin:/bin")
    if not system or not runs_as_kernel_user(system):
        pytest.skip(f"no {version} that the kernel's user can start")
    shim = pathlib.Path(tempfile.mkdtemp(prefix="autograder-python-"))
    try:
        os.chmod(shim, 0o755)
        subprocess.run([system, "-m", "venv", "--without-pip", str(shim / "venv")],
                       check=True)
        site = next((shim / "venv" / "lib").glob("python*/site-packages"))
        import sysconfig

        (site / "project-packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        kernels = pathlib.Path(sys.prefix) / "share" / "jupyter" / "kernels"
        if kernels.is_dir():
            shutil.copytree(kernels, shim / "venv" / "share" / "jupyter" / "kernels")
        yield str(shim / "venv" / "bin" / "python")
    finally:
        shutil.rmtree(shim, ignore_errors=True)


def unzip(zip_path, folder):
    """Extract as unzip does: the files' modes kept."""
    with zipfile.ZipFile(zip_path) as archive:
        for info in archive.infolist():
            target = archive.extract(info, folder)
            mode = (info.external_attr >> 16) & 0o777
            if mode and not info.is_dir():
                os.chmod(target, mode)


def gradescope_root(zip_path, folder, notebooks=(), user=None, metadata=None):
    """A root laid out as Gradescope lays /autograder out."""
    root = pathlib.Path(folder)
    (root / "source").mkdir(parents=True)
    unzip(zip_path, root / "source")
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    (root / "results").mkdir()
    for name, nb in notebooks:
        nbformat.write(nb, str(root / "submission" / name))
    if metadata is None:
        metadata = {"id": 123456, "created_at": "2026-12-01T10:00:00.000000-08:00",
                    "assignment": {"id": 1, "title": "Notebook 3"},
                    "submission_method": "upload", "previous_submissions": [],
                    "users": [user or {}]}
    (root / "submission_metadata.json").write_text(json.dumps(metadata))
    return root


def run_autograder(root, python=sys.executable, slot=0):
    """Run root/run_autograder as Gradescope does; return results.json as a dict."""
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), PYTHON=python,
               AUTOGRADER_ISOLATION="none", AUTOGRADER_SLOT=str(slot))
    env.pop("AUTOGRADER_ID_FIELDS", None)
    done = subprocess.run([str(root / "run_autograder")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    results = root / "results" / "results.json"
    assert results.is_file(), done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads(results.read_text())


def run_all(roots, python):
    """run_autograder on every root, side by side, each kernel in a slot of its own."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        return list(pool.map(run_autograder, roots, [python] * len(roots),
                             range(len(roots))))


# --- the zip ---------------------------------------------------------------------------------

def test_the_zip_holds_what_gradescope_runs_and_no_answers_for_the_kernel(zip_path):
    with zipfile.ZipFile(zip_path) as archive:
        infos = {i.filename: i for i in archive.infolist()}
        sealed = {n: archive.read(n).decode("utf-8", "replace") for n in infos
                  if n.startswith("sealed/")}
        full_nb03 = archive.read("d2lutil/exercises/nb03.py").decode()
        setup = archive.read("setup.sh").decode()
        runner = archive.read("run_autograder").decode()
    for name in ("setup.sh", "run_autograder"):  # at the top: Gradescope's source/ root
        assert name in infos, name
        assert (infos[name].external_attr >> 16) & 0o111 == 0o111, f"{name} not executable"
    assert not any(n.startswith("source/") for n in infos)
    for name in (*autograder.TOOL_FILES, "requirements.txt", "requirements-d2l.txt",
                 "pyproject.toml", "autograder.json", "sealed/d2lutil/exercises/nb03.py",
                 "sealed/d2lutil/exercises/variants.py", "sealed/d2lutil/exercises/codec.py"):
        assert name in infos, name
    chapter = sorted(f"notebooks/{p.name}" for p in book.chapter_notebooks())
    assert sorted(n for n in infos if n.startswith("notebooks/")) == chapter
    assert not [n for n in infos if "solution" in n.lower()]
    assert BOOK_COUNT in full_nb03  # the grader's own package judges with the answers
    assert 'EDITION = "student"' in sealed["sealed/d2lutil/exercises/variants.py"]
    # 263,168 or 263168 as a number (not inside a hexadecimal digest, where it may fall)
    leaks = [name for name, text in sealed.items()
             if re.search(r"(?<![0-9a-fA-F])263,?168(?![0-9a-fA-F])", text)]
    assert not leaks, leaks
    # setup.sh installs the requirements without the repository, and d2l without its deps
    assert setup.startswith("#!/usr/bin/env bash") and runner.startswith("#!/usr/bin/env bash")
    assert "grep -v '^[[:space:]]*-e[[:space:]]'" in setup  # not `-e .`: the answers
    assert "--no-deps -r /autograder/source/requirements-d2l.txt" in setup
    assert "course/autograder.py\" run" in runner


# --- variants: two students, each graded on their own ----------------------------------------

@pytest.fixture(scope="module")
def variant_runs(zip_path, python, tmp_path_factory):
    """{(student, kind): results} of two students (a roster id, an e-mail), each handing in
    notebook 3 answered for their own variant ("own"), then for the other's ("other")."""
    if not IS_ROOT:
        pytest.skip("the kernel gets a user of its own only as root, as on Gradescope")
    first, second = two_students()
    users = {first: {"email": "first@example.edu", "id": 1, "name": "First", "sid": first},
             second: {"email": second, "id": 2, "name": "Second", "sid": ""}}
    other = {first: second, second: first}
    tmp = tmp_path_factory.mktemp("variants")
    runs, roots = [], []
    for k, the_id in enumerate(users):
        own = notebook(IMPORT, OWN, EX2, EX3)
        typed = notebook(IMPORT, OWN.replace('ex1.params["d"]', str(d_of(other[the_id]))),
                         EX2, EX3)
        for kind, nb, name in (("own", own, "nb03.ipynb"), ("other", typed, "answers.ipynb")):
            runs.append((the_id, kind))
            roots.append(gradescope_root(zip_path, tmp / f"{kind}{k}", [(name, nb)],
                                         users[the_id]))
    return dict(zip(runs, run_all(roots, python), strict=True)), first, second


def test_each_student_right_for_their_own_variant_gets_full_marks(variant_runs):
    runs, first, second = variant_runs
    for the_id, where in ((first, "users[0].sid"), (second, "users[0].email")):
        results = runs[the_id, "own"]
        worth = sum(t["max_score"] for t in results["tests"])
        assert worth > 0 and results["score"] == worth, results
        assert all(t["status"] == "passed" for t in results["tests"]), results
        assert f"Graded as student id {the_id} ({where}" in results["output"]
        assert "Isolation: no bubblewrap sandbox" in results["output"]
        assert [t["number"] for t in results["tests"]] == ["ex1.1", "ex1.2", "ex2.1",
                                                            "ex3.1"]
        assert all(t["output"] for t in results["tests"])  # the chapter's messages


def test_the_other_students_count_is_refused(variant_runs):
    runs, first, second = variant_runs
    for the_id in (first, second):
        results, own = runs[the_id, "other"], runs[the_id, "own"]
        tests = {t["number"]: t for t in results["tests"]}
        assert tests["ex1.1"]["score"] == 0 and tests["ex1.1"]["status"] == "failed"
        assert tests["ex1.1"]["output"] != "correct"
        assert tests["ex1.2"]["status"] == "passed"
        assert results["score"] == own["score"] - tests["ex1.1"]["max_score"]


# --- a hostile submission -------------------------------------------------------------------

HOSTILE = """\
import json, os, sys
root = {root!r}
report = {{"uid": os.getuid()}}

def attempt(name, action):
    try:
        report[name] = action()
    except Exception as error:
        report[name] = "failed: " + type(error).__name__

attempt("read_answers", lambda: open(os.path.join(
    root, "source/d2lutil/exercises/nb03.py")).read()[:200])
attempt("list_source", lambda: os.listdir(os.path.join(root, "source")))
attempt("read_metadata", lambda: open(os.path.join(root, "submission_metadata.json")).read())

def overwrite():
    with open(os.path.join(root, "results/results.json"), "w") as file:
        file.write('{{"score": 1000, "tests": []}}')
    return "wrote"

attempt("write_results", overwrite)
for name in [m for m in sys.modules if m == "d2lutil" or m.startswith("d2lutil.")]:
    del sys.modules[name]
sys.path.insert(0, os.path.join(root, "source"))

def import_full():
    import d2lutil.exercises.nb03 as module
    return [module.__file__, hasattr(module, "_DATA")]

attempt("import_full", import_full)
sys.path.remove(os.path.join(root, "source"))
report["solution"] = str(getattr(ex1, "_solution", ""))  # what ex1.solution() shows
with open({report!r}, "w") as file:
    json.dump(report, file)"""


@needs_root
def test_a_hostile_submission_reads_writes_and_imports_nothing_of_the_grader(zip_path, python,
                                                                             tmp_path):
    drop = pathlib.Path(tempfile.mkdtemp(prefix="autograder-test-"))  # where its kernel can
    os.chmod(drop, 0o777)  # write, for this test to read what it got
    try:
        report = drop / "report.json"
        root = tmp_path / "hostile"
        cell = HOSTILE.format(root=str(root), report=str(report))
        nb = notebook(IMPORT, cell, OWN, EX2, EX3)
        gradescope_root(zip_path, root, [("nb03.ipynb", nb)],
                        {"email": "h@example.edu", "id": 3, "name": "H", "sid": "s1000003"})
        results = run_autograder(root, python)
        got = json.loads(report.read_text())
    finally:
        shutil.rmtree(drop, ignore_errors=True)
    assert got["uid"] != 0
    for attempt in ("read_answers", "list_source", "read_metadata", "write_results"):
        assert got[attempt] == "failed: PermissionError", (attempt, got[attempt])
    module_file, sealed = got["import_full"]
    assert sealed and not module_file.startswith(str(root)), got["import_full"]
    assert BOOK_COUNT not in got["solution"] and "instructor" in got["solution"]
    worth = sum(t["max_score"] for t in results["tests"])
    assert results["score"] == worth > 0  # the grader's results, not the notebook's
    stat_results = (root / "results").stat()
    assert stat.S_IMODE(stat_results.st_mode) == 0o700
    assert stat.S_IMODE((root / "source").stat().st_mode) == 0o700


# --- no id, a malformed id, no notebook ----------------------------------------------------------

def test_no_id_a_malformed_id_and_no_notebook_score_zero_with_a_clear_message(zip_path, python,
                                                                             tmp_path):
    no_id = gradescope_root(zip_path, tmp_path / "no_id", RIGHT,
                            {"email": "", "id": 4, "name": "No Id"})
    malformed = gradescope_root(zip_path, tmp_path / "malformed", RIGHT,
                                {"email": "m@example.edu", "id": 5, "name": "M",
                                 "sid": "not an id!"})
    no_metadata = gradescope_root(zip_path, tmp_path / "no_users", RIGHT,
                                  metadata={"id": 1, "users": []})
    nothing = gradescope_root(zip_path, tmp_path / "no_notebook", [],
                              {"email": "n@example.edu", "id": 6, "name": "N",
                               "sid": "s1000006"})
    (nothing / "submission" / "answers.py").write_text("params_with_bias = 1\n")
    (nothing / "submission" / "sub").mkdir()
    nbformat.write(RIGHT[0][1], str(nothing / "submission" / "sub" / "nb03.ipynb"))
    results = run_all([no_id, malformed, no_metadata, nothing], python)
    for each in results:
        assert each["score"] == 0 and each["tests"] == [], each
    assert results[0]["output"].startswith("No student id")
    assert "sid or email" in results[0]["output"]
    assert results[1]["output"].startswith("No student id")
    assert "users[0].sid" in results[1]["output"] and "not an id!" in results[1]["output"]
    assert results[2]["output"].startswith("No student id")
    assert results[3]["output"].startswith("No notebook handed in")


def test_results_json_is_written_even_when_the_grader_cannot_run(zip_path, python,
                                                                  tmp_path):
    user = {"email": "c@example.edu", "id": 7, "name": "C", "sid": "s1000007"}
    broken = gradescope_root(zip_path, tmp_path / "broken", RIGHT, user)
    (broken / "source" / "course" / "grade.py").write_text("raise RuntimeError('broken')\n")
    no_python = gradescope_root(zip_path, tmp_path / "no_python", RIGHT, user)
    results = run_autograder(broken, python)
    assert results["score"] == 0 and results["tests"] == []
    assert results["output"].startswith("The autograder failed")
    assert "RuntimeError: broken" in results["output"]
    results = run_autograder(no_python, str(tmp_path / "no" / "python"))
    assert results["score"] == 0 and results["tests"] == []
    assert results["output"].startswith("The autograder could not run (exit status 127)")


def test_several_notebooks_are_named_by_file_and_only_the_counted_score():
    def row(file, notebook, status="graded", counted="yes", parts=None, hidden=()):
        parts = parts or {"ex1.1": (2, "correct", 2, "Exercise 1, a count")}
        return {"file": file, "notebook": notebook, "status": status, "counted": counted,
                "total": sum(p[0] for p in parts.values()), "max_total": 2, "note": "",
                "seconds": 1.0, "parts": parts, "hidden": list(hidden)}

    rows = [row("a.ipynb", "03_multihead_attention.ipynb", hidden=["ex1.1"]),
            row("b.ipynb", "04_self_and_cross_attention.ipynb"),
            row("c.ipynb", "03_multihead_attention.ipynb", counted="no"),
            {**row("d.ipynb", "", status="not graded"), "parts": {}, "total": 0,
             "max_total": "", "note": "not a readable notebook"}]
    results = autograder.results_for(rows, "Graded as student id s1.", "Isolation: x.", 3.0)
    assert results["score"] == 4
    assert [(t["name"], t["number"], t["visibility"]) for t in results["tests"]] == [
        ("a.ipynb: Exercise 1, a count", "03.ex1.1", "after_due_date"),
        ("b.ipynb: Exercise 1, a count", "04.ex1.1", "visible")]
    lines = results["output"].splitlines()
    assert lines[0] == "Graded as student id s1." and lines[-1] == "Isolation: x."
    assert "d.ipynb: not graded, 0/0 points (not a readable notebook)" in lines
    one = autograder.results_for(rows[:1], "id", "iso", 1.0)
    assert [t["name"] for t in one["tests"]] == ["Exercise 1, a count"]


def test_files_past_the_time_budget_are_not_run(zip_path, python, tmp_path):
    root = gradescope_root(zip_path, tmp_path / "late", RIGHT,
                           {"email": "l@example.edu", "id": 8, "name": "L", "sid": "s1000008"})
    config = root / "source" / "autograder.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "budget_s": 1}))
    results = run_autograder(root, python)
    assert results["score"] == 0 and results["tests"] == []
    assert "nb03.ipynb: not graded" in results["output"]
    assert "time ran out" in results["output"]
