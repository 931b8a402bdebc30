"""course/roster.py's find_id on LMS exports as they come (Canvas's and Moodle's names, their
rosters) and roster.csv from them; no kernel runs here (test_marks.py grades one class)."""

import csv

import pytest

import grade
from roster import NAMES_UNDERSTOOD, UsageError, find_id, read_roster, write_roster

# Canvas's gradebook export: a "Points Possible" row and a posting-policy row after the
# header, the Test Student without a SIS User ID
CANVAS_BOOK = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Homework 3 (88123),Current Score\n"
    "    Points Possible,,,,,10.00,(read only)\n"
    ",,,,,Manual Posting,\n"
    '"Lovelace, Ada",340934,s1,ada,Section A,,80.00\n'
    '"Hopper, Grace",341000,s2,grace,Section A,,\n'
    '"Student, Test",99999,,,Section A,,\n')
MOODLE_SHEET = (
    'Identifier,"Full name","ID number","Email address",Status,Grade\n'
    '"Participant 123456","Ada Lovelace",s1,ada@example.org,"Submitted for grading",\n'
    '"Participant 123457","Grace Hopper",s2,grace@example.org,"No submission",\n')
MOODLE_FOLDER = "Ada Lovelace_123456_assignsubmission_file_"


def write(folder, name, text):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_canvas_names_map_through_the_gradebook_export(tmp_path):
    roster = read_roster(write(tmp_path, "gradebook.csv", CANVAS_BOOK))
    assert roster == {"s1": "Lovelace, Ada", "s2": "Hopper, Grace"}
    cases = {  # names exactly as Canvas's "Download Submissions" zip has them
        "lovelaceada_340934_208490284_03_multihead.ipynb": ("s1", "Canvas user 340934 -> roster"),
        "hoppergrace_LATE_341000_208490300_nb03-1.ipynb":
            ("s2", "Canvas user 341000 (LATE) -> roster"),
        "lovelaceada_340934_208490299_s9__03.ipynb": ("s1", "Canvas user 340934 -> roster"),
        "studenttest_99999_208490301_03.ipynb":
            (None, "no id: Canvas user 99999 has no student id on the roster"),
        "someone_12345_208490302_03.ipynb":
            (None, "no id: Canvas user 12345 is not on the roster"),
    }
    for name, expected in cases.items():
        assert find_id(tmp_path / name, roster, tmp_path) == expected, name
    # without a roster, or with one that has no Canvas ids, a Canvas name says what to give
    for other in (None, read_roster(write(tmp_path, "plain.csv", "id,name\ns1,Ada\n"))):
        student_id, why = find_id(tmp_path / next(iter(cases)), other, tmp_path)
        assert student_id is None and "give ROSTER with the columns ID and SIS User ID" in why


def test_moodle_folders_map_through_the_grading_worksheet(tmp_path):
    folder = tmp_path / "class"
    ada = write(folder, f"{MOODLE_FOLDER}/03_multihead.ipynb", "{}")
    write(folder, "Grace Hopper_123457_assignsubmission_onlinetext_/onlinetext.html", "x")
    write(folder, "other/s3__03.ipynb", "{}")  # not a Moodle folder: not read
    (folder / "Eve Linked_999_assignsubmission_file_").symlink_to(folder / "other")
    top = write(folder, "s2__03.ipynb", "{}")
    assert grade.submission_files(folder) == [top, ada]
    assert grade.file_name(ada, folder) == f"{MOODLE_FOLDER}/03_multihead.ipynb"
    roster = read_roster(write(tmp_path, "worksheet.csv", MOODLE_SHEET))
    assert roster == {"s1": "Ada Lovelace", "s2": "Grace Hopper"}
    assert find_id(ada, roster, folder) == ("s1", "Moodle participant 123456 -> roster")
    assert find_id(top, roster, folder) == ("s2", "file name ID__")
    stranger = folder / "Eve_777_assignsubmission_file_" / "03.ipynb"
    assert find_id(stranger, roster, folder) == (
        None, "no id: Moodle participant 777 is not on the roster")
    # the short form: a participant column beside an id column
    short = read_roster(write(tmp_path, "short.csv", "participant,id\n123456,s1\n"))
    assert find_id(ada, short, folder) == ("s1", "Moodle participant 123456 -> roster")
    assert "give ROSTER with the columns Identifier and an id" in find_id(ada, None, folder)[1]


def test_id_names_still_work_and_other_names_say_which_are_understood(tmp_path):
    assert find_id(tmp_path / "s1__03.ipynb") == ("s1", "file name ID__")
    student_id, why = find_id(tmp_path / "Homework 3 (Ada).ipynb")
    assert student_id is None and why.endswith(NAMES_UNDERSTOOD)
    assert "Canvas" in why and "Moodle" in why and "ID__anything.ipynb" in why


@pytest.mark.parametrize("text, message", [
    ('Identifier,ID number\n"Participant 1",s1\nParticipant x,s2\n',
     "line 3: identifier must be a participant number (Participant 123456), got "
     "'Participant x'"),
    ("Student,ID,SIS User ID\nAda,1,s1\nBo,2,s1\n", "line 3 repeats the id s1"),
    ("Student,ID,SIS User ID\nAda,1,not an id\n", "the sis user id of line 2 must be"),
    ("Identifier,Full name\nParticipant 1,Ada\n", "Moodle's ID number); got"),
], ids=["moodle-identifier", "canvas-repeat", "canvas-bad-id", "no-id-column"])
def test_a_bad_lms_roster_names_the_line(tmp_path, text, message):
    with pytest.raises(UsageError, match="--roster .*") as error:
        read_roster(write(tmp_path, "r.csv", text))
    assert message in str(error.value)


def test_roster_csv_from_a_canvas_export(tmp_path):
    """Rows as grade_class makes them, from Canvas names: roster.csv has every student of
    the gradebook, named as Canvas names them, and a row for the unmapped file."""
    roster = read_roster(write(tmp_path, "gradebook.csv", CANVAS_BOOK))
    rows = []
    for name, total in (("lovelaceada_340934_208490284_03.ipynb", 5),
                        ("someone_12345_208490302_03.ipynb", 0)):
        student_id, how = find_id(tmp_path / name, roster, tmp_path)
        rows.append({"file": name, "student_id": student_id or "", "notebook": "03_x.ipynb",
                     "status": "graded" if student_id else "no id", "total": total,
                     "max_total": 9, "counted": "yes" if student_id else "no",
                     "note": "" if student_id else how})
    out = tmp_path / "out" / "roster.csv"
    write_roster(rows, out, roster)
    with open(out, newline="") as file:
        students = list(csv.DictReader(file))
    assert [(s["student_id"], s["name"], s["checked"], s["total"], s["nb03"])
            for s in students[:2]] == [("s1", "Lovelace, Ada", "5", "5", "5"),
                                        ("s2", "Hopper, Grace", "0", "0", "")]
    assert students[1]["note"] == "nothing graded handed in"
    assert students[2]["student_id"] == "" and "Canvas user 12345 is not on the roster" in (
        students[2]["note"])
