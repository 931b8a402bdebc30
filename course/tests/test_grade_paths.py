"""course/grade.py never writes over what it reads: a run whose OUT, roster.csv beside it or
Gradescope results would land on the roster, a submission or inside SUBMISSIONS stops
before anything is graded (no kernel runs here)."""

import concurrent.futures
import os
import pathlib
import time

import pytest

import book
import grade

ROSTER = b"id,name,email\r\ns1,Ada,ada@example.org\r\n"


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A course folder, run from: course/roster.csv (with an email column), class/ with a
    submission and one linked from store/, and symlinks to them (see the cases)."""
    monkeypatch.chdir(tmp_path)
    for folder in ("course", "class", "store"):
        (tmp_path / folder).mkdir()
    (tmp_path / "course" / "roster.csv").write_bytes(ROSTER)
    (tmp_path / "class" / "s1__03.ipynb").write_text("{}")
    (tmp_path / "store" / "s2.ipynb").write_text("{}")
    (tmp_path / "class" / "s2__03.ipynb").symlink_to(tmp_path / "store" / "s2.ipynb")
    (tmp_path / "course" / "link.csv").symlink_to("roster.csv")
    (tmp_path / "to_course").symlink_to("course")
    (tmp_path / "to_submission.csv").symlink_to("class/s1__03.ipynb")
    (tmp_path / "to_store.csv").symlink_to("store/s2.ipynb")
    return tmp_path


def refused(argv, monkeypatch, capsys):
    """grade.py's error message for ``argv``, which it must refuse before grading."""
    def grade_class(*args, **kwargs):
        raise AssertionError("grading started")

    monkeypatch.setattr(grade, "grade_class", grade_class)
    assert grade.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("grade.py: error: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("out, roster, message", [
    # the roster written beside OUT is the roster read: as given, through `..` and absolute
    # paths, and through a symlinked folder
    ("course/grades.csv", "course/roster.csv", "the roster it writes beside OUT "
     "(course/roster.csv) would overwrite ROSTER, the roster it reads (course/roster.csv): "
     "choose an OUT in another folder"),
    ("ABS/course/grades.csv", "class/../course/roster.csv",
     "(ABS/course/roster.csv) would overwrite ROSTER, the roster it reads "
     "(class/../course/roster.csv)"),
    ("to_course/grades.csv", "course/roster.csv", "the roster it writes beside OUT "
     "(to_course/roster.csv) would overwrite ROSTER"),
    # OUT is the roster, by its name or a symlink to it
    ("course/roster.csv", "course/roster.csv", "OUT (course/roster.csv) would overwrite "
     "ROSTER, the roster it reads (course/roster.csv): choose another OUT"),
    ("course/link.csv", "ABS/course/roster.csv", "OUT (course/link.csv) would overwrite "
     "ROSTER, the roster it reads (ABS/course/roster.csv)"),
], ids=["roster-beside-out", "absolute-and-dotdot", "symlinked-folder", "out-is-roster",
        "out-links-to-roster"])
def test_a_run_that_would_overwrite_the_roster_is_refused(course, monkeypatch, capsys, out,
                                                          roster, message):
    out, roster = (p.replace("ABS", str(course)) for p in (out, roster))
    err = refused(["class", "--out", out, "--roster", roster], monkeypatch, capsys)
    assert message.replace("ABS", str(course)) in err
    assert (course / "course" / "roster.csv").read_bytes() == ROSTER
    assert sorted(os.listdir(course / "course")) == ["link.csv", "roster.csv"]


@pytest.mark.parametrize("out, message", [
    ("class/s1__03.ipynb", "OUT (class/s1__03.ipynb) would overwrite a submission "
     "(class/s1__03.ipynb)"),
    ("to_submission.csv", "OUT (to_submission.csv) would overwrite a submission "
     "(class/s1__03.ipynb)"),
    # a submission that is a symlink to a file outside SUBMISSIONS, and OUT one to the same
    ("to_store.csv", "OUT (to_store.csv) would overwrite a submission (class/s2__03.ipynb)"),
    ("class/grades.csv", "OUT (class/grades.csv) would be written into SUBMISSIONS (class)"),
], ids=["out-is-submission", "out-links-to-submission", "both-link-outside", "out-inside"])
def test_a_run_that_would_overwrite_a_submission_is_refused(course, monkeypatch, capsys, out,
                                                            message):
    assert message in refused(["class", "--out", out], monkeypatch, capsys)
    assert (course / "class" / "s1__03.ipynb").read_text() == "{}"


def test_gradescope_results_are_never_written_into_submissions_or_over_the_roster(
        course, monkeypatch, capsys):
    (course / "course" / "gradescope").mkdir()
    err = refused(["course/gradescope", "--out", "course/grades.csv"], monkeypatch, capsys)
    assert ("the folder of Gradescope results it writes beside OUT (course/gradescope) would "
            "be written into SUBMISSIONS (course/gradescope)") in err
    # a result file that is a symlink to the roster would be written through it
    (course / "out" / "gradescope").mkdir(parents=True)
    (course / "out" / "gradescope" / "s1__03.json").symlink_to(course / "course" / "roster.csv")
    err = refused(["class", "--out", "out/grades.csv", "--roster", "course/roster.csv"],
                  monkeypatch, capsys)
    assert ("a Gradescope result it writes (out/gradescope/s1__03.json) would overwrite "
            "ROSTER, the roster it reads (course/roster.csv)") in err


def test_out_is_not_named_like_the_roster_written_beside_it(course, monkeypatch, capsys):
    err = refused(["class", "--out", "out/roster.csv"], monkeypatch, capsys)
    assert "OUT (out/roster.csv) cannot be named roster.csv" in err


def test_a_roster_beside_out_under_another_name_is_accepted(course):
    (course / "course" / "class.csv").write_bytes(ROSTER)
    _, options = grade.parse_args(["class", "--out", "course/grades.csv", "--roster",
                                   "course/class.csv"])
    assert grade.output_paths(options.out)[1] == pathlib.Path("course/roster.csv")



def test_the_grader_threads_judge_one_submission_at_a_time(tmp_path, monkeypatch):
    """Judging draws from torch's global random state and may swap library functions, both
    process-wide: two workers finishing together take turns (grade.JUDGE_LOCK)."""
    inside, most = [], []

    def fill(*args, **kwargs):
        inside.append(1)
        most.append(len(inside))
        time.sleep(0.2)
        inside.pop()

    monkeypatch.setattr(grade, "run_submission", lambda *args, **kwargs: {})
    monkeypatch.setattr(grade, "_fill", fill)
    options = grade.Options(tmp_path / "grades.csv", jobs=2, isolation="none", book=True)
    path = next(p for p in book.solution_notebooks() if book.number(p) == "01")
    chapter = grade.load_chapter()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        rows = list(pool.map(lambda _: grade.grade(path, chapter, options), range(2)))
    assert [row["status"] for row in rows] == ["", ""] and max(most) == 1
