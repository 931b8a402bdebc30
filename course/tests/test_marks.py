"""Hand marks (``--marks``, roster.read_marks) merged into roster.csv, and the TAs' pages of
written answers (grade.write_written); a class graded end to end from Canvas's names, and
one from Moodle's."""

import csv
import shutil

import nbformat
import pytest

import book
import grade
import synthetic_class as sc
from roster import UsageError, read_marks, read_weights, write_roster

CHAPTER = grade.load_chapter()
# a written part (an exercise with a rubric) and an exercise without one
WRITTEN = next((n, e) for n, nb in sorted(CHAPTER.items()) for e in nb.exercises if e.rubric)
CHECKED = next((n, e) for n, nb in sorted(CHAPTER.items()) for e in nb.exercises
               if not e.rubric)
TOP = WRITTEN[1].rubric_points


def marks_file(tmp_path, *lines, header="id,notebook,exercise,points,note"):
    path = tmp_path / "marks.csv"
    path.write_text("\n".join([header, *lines]) + "\n")
    return path


def test_marks_are_read_and_checked(tmp_path):
    (number, exercise), half = WRITTEN, TOP / 2
    path = marks_file(tmp_path, f"s1,{number},{exercise.number},{half},clear proof",
                      f"s2,nb{number},ex{exercise.number},0,")
    assert read_marks(path, CHAPTER, {"s1", "s2"}) == [
        {"id": "s1", "notebook": number, "exercise": exercise.number, "points": half,
         "note": "clear proof"},
        {"id": "s2", "notebook": number, "exercise": exercise.number, "points": 0,
         "note": ""}]


@pytest.mark.parametrize("line, message", [
    ("s9,{nb},{ex},1", "line 2: the id 's9' is on no roster and names no submission"),
    ("s1,99,{ex},1", "line 2: the notebook '99' is not one with exercises"),
    ("s1,{cnb},{cex},1", "line 2: notebook {cnb} has no exercise '{cex}' marked by hand"),
    ("s1,{nb},{ex},{above}", "line 2: points '{above}' for exercise {ex} of notebook {nb}: "
     "expected a number from 0 to its rubric's {top}"),
    ("s1,{nb},{ex},-1", "points '-1' for exercise {ex}"),
    ("s1,{nb},{ex},two", "points 'two' for exercise {ex}"),
    ("s1,{nb},{ex},nan", "points 'nan' for exercise {ex}"),
], ids=["unknown-id", "unknown-notebook", "no-written-part", "above-rubric", "negative",
        "not-a-number", "nan"])
def test_a_bad_mark_names_the_file_line_and_value(tmp_path, line, message):
    values = {"nb": WRITTEN[0], "ex": WRITTEN[1].number, "cnb": CHECKED[0],
              "cex": CHECKED[1].number, "above": TOP + 0.5, "top": f"{TOP:g}"}
    path = marks_file(tmp_path, line.format(**values))
    with pytest.raises(UsageError) as error:
        read_marks(path, CHAPTER, {"s1"})
    assert str(error.value).startswith(f"--marks {path}: ")
    assert message.format(**values) in str(error.value)


def test_a_repeated_mark_or_missing_column_is_refused(tmp_path):
    line = f"s1,{WRITTEN[0]},{WRITTEN[1].number},0"
    with pytest.raises(UsageError, match="line 3: repeats the mark of line 2"):
        read_marks(marks_file(tmp_path, line, line), CHAPTER, {"s1"})
    with pytest.raises(UsageError, match="must name the columns id, notebook, exercise, "
                       "points"):
        read_marks(marks_file(tmp_path, line, header="id,notebook,points"), CHAPTER, {"s1"})


def test_hand_marks_are_counted_apart_and_in_the_total(tmp_path):
    number, exercise = WRITTEN
    rows = [{"file": f"s{k}__x.ipynb", "student_id": f"s{k}", "notebook": f"{number}_x.ipynb",
             "status": "graded", "total": 4, "max_total": 9, "counted": "yes", "note": ""}
            for k in (1, 2)]
    marks = [{"id": "s1", "notebook": number, "exercise": exercise.number, "points": 1.5,
              "note": "half the proof"}]
    out = tmp_path / "roster.csv"
    write_roster(rows, out, {"s1": "Ada", "s2": "Bo"}, marks, {number: 3})
    with open(out, newline="") as file:
        s1, s2 = csv.DictReader(file)
    column = f"nb{number} ex{exercise.number} by hand"
    assert [s1[k] for k in ("checked", "by hand", "total", "max_total", column)] == [
        "4", "1.5", "5.5", "12", "1.5"]
    assert [s2[k] for k in ("checked", "by hand", "total", column)] == ["4", "0", "4", ""]
    assert s1["note"] == f"nb{number} ex{exercise.number}: half the proof"


def answered(number, tags=None, source="It halves the error."):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_markdown_cell(source)
    cell.metadata["tags"] = [f"answer-ex{number}"] if tags is None else tags
    nb.cells = [nbformat.v4.new_markdown_cell("# mine"), cell]
    return nb


def test_written_pages_show_each_answer_beside_the_rubric(tmp_path):
    number, exercise = WRITTEN
    hostile = "~~~~\n<script>alert(1)</script>\n~~~~~~"
    notebooks = {"s1": answered(exercise.number), "s2": answered(exercise.number, "answer"),
                 "s3": answered(exercise.number, source=hostile),
                 "s4": answered(exercise.number + 1)}
    rows = [{"file": f"{k}__x.ipynb", "student_id": k, "notebook": CHAPTER[number].path.name,
             "counted": "yes", "written": {e.number: grade.written_answer(nb, e.number)
                                           for e in CHAPTER[number].exercises if e.rubric}}
            for k, nb in notebooks.items()]
    rows.append({**rows[0], "student_id": "", "counted": "no"})  # a "no id" row: left out
    grade.write_written(rows, CHAPTER, tmp_path / "written", {"s1": "Ada"})
    page = (tmp_path / "written" / f"{number}_ex{exercise.number}.md").read_text()
    assert page.count("\n## ") == 4 and "## s1 (Ada): s1__x.ipynb\n\n~~~text\n" in page
    assert "It halves the error." in page.split("## s2")[0]
    for _, criterion in exercise.rubric:
        assert criterion in page
    # tags not a list of tags, or another exercise's tag: no answer for this one
    for k in ("s2", "s4"):
        assert page.split(f"## {k}: {k}__x.ipynb\n\n")[1].startswith("no written answer")
    # a student's fence cannot close the page's: the page's is longer
    assert f"~~~~~~~text\n{hostile}\n~~~~~~~\n" in page


def test_bad_marks_stop_make_grade_before_grading(tmp_path, monkeypatch, capsys):
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "s1__03.ipynb").write_text("{}")
    marks = marks_file(tmp_path, f"s1,{WRITTEN[0]},{WRITTEN[1].number},{TOP + 1}")
    monkeypatch.setattr(grade, "grade_class", lambda *a, **k: pytest.fail("grading started"))
    assert grade.main([str(tmp_path / "class"), "--out", str(tmp_path / "out" / "g.csv"),
                       "--marks", str(marks)]) == 2
    assert f"--marks {marks}: line 2: points '{TOP + 1:g}" in capsys.readouterr().err
    assert grade.main([str(tmp_path / "class"), "--book", "--marks", str(marks)]) == 2
    assert "--book grades without ids, so it takes no --marks" in capsys.readouterr().err


# (file as the LMS names it, its roster export, how the grader says it found the id)
EXPORTS = {
    "canvas": ("lovelaceada_LATE_340934_208490284_03_multihead-1.ipynb",
               "Student,ID,SIS User ID,SIS Login ID,Section\n    Points Possible,,,,\n"
               '"Lovelace, Ada",340934,s1,ada,A\n"Hopper, Grace",341000,s2,grace,A\n',
               "Canvas user 340934 (LATE) -> roster", "Lovelace, Ada"),
    "moodle": ("Ada Lovelace_123456_assignsubmission_file_/03_multihead.ipynb",
               "Identifier,Full name,ID number,Email address,Status\n"
               "Participant 123456,Ada Lovelace,s1,ada@example.org,Submitted\n"
               "Participant 123457,Grace Hopper,s2,grace@example.org,No submission\n",
               "Moodle participant 123456 -> roster", "Ada Lovelace")}


@pytest.mark.parametrize("lms", EXPORTS)
def test_an_lms_export_with_marks_graded_end_to_end(tmp_path, lms):
    """One kernel per LMS: notebook 03 named as Canvas (a LATE resubmission) or Moodle (a
    folder per student) names it, with a tagged written answer, the LMS's roster export as
    ROSTER, and hand marks; the book's package (not the sealed one) is imported, so only
    the names, marks and pages are judged here."""
    name, roster_csv, id_from, ada = EXPORTS[lms]
    exercise = next(e for e in CHAPTER["03"].exercises if e.rubric)
    folder = tmp_path / "class"
    folder.mkdir()
    nb = sc.notebook(["from d2lutil.exercises.nb03 import ex1, ex2, ex3"])
    nb.cells += answered(exercise.number).cells[1:]
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    sc.write(nb, folder / name)
    (tmp_path / "gradebook.csv").write_text(roster_csv)
    marks = marks_file(tmp_path, f"s1,03,{exercise.number},{exercise.rubric_points},good")
    out = tmp_path / "out" / "grades.csv"
    folder_, options = grade.parse_args([str(folder), "--out", str(out), "--roster", str(
        tmp_path / "gradebook.csv"), "--marks", str(marks), "--isolation",
        "bwrap" if shutil.which("bwrap") else "none"])
    options._package = book.ROOT  # the kernel imports the book's d2lutil
    (row,) = grade.run(folder_, options)
    assert (row["student_id"], row["id_from"]) == ("s1", id_from)
    with open(out.with_name("roster.csv"), newline="") as file:
        s1, s2 = csv.DictReader(file)
    assert (s1["name"], s1["checked"], s1["by hand"]) == (
        ada, str(row["total"]), f"{exercise.rubric_points:g}")
    assert float(s1["total"]) == row["total"] + exercise.rubric_points
    assert "Grace" in s2["name"] and s2["note"] == "nothing graded handed in"
    page = (out.parent / "written" / f"03_ex{exercise.number}.md").read_text()
    assert f"## s1 ({ada})" in page and "It halves the error." in page
    with open(out, newline="") as file:
        assert next(csv.DictReader(file))["id_from"] == row["id_from"]


def test_weights_count_a_notebooks_points_that_many_times(tmp_path):
    (number, exercise) = WRITTEN
    rows = [{"student_id": "s1", "notebook": f"{number}_x.ipynb", "status": "graded",
             "counted": "yes", "total": 3, "max_total": 4, "file": "a", "note": ""}]
    marks = [{"id": "s1", "notebook": number, "exercise": exercise.number, "points": 1,
              "note": ""}]
    weights = read_weights(f"{number}=2.5", CHAPTER)
    out = tmp_path / "roster.csv"
    write_roster(rows, out, None, marks, {number: TOP}, weights)
    with open(out, newline="") as file:
        (s1,) = csv.DictReader(file)
    assert (s1["checked"], s1["by hand"], s1["total"], s1[f"nb{number}"]) == (
        "7.5", "2.5", "10", "3")
    assert float(s1["max_total"]) == 2.5 * (4 + TOP)
    for bad in ("99=2", f"{number}=-1", f"{number}=x", f"{number}=1,{number}=2", "nb"):
        with pytest.raises(UsageError, match="--weights: .* must be NN=weight"):
            read_weights(bad, CHAPTER)
