"""Student ids, the latest submission and the roster, as the grader (course/grade.py), the
Gradescope autograder and the student edition share them (course/README.md)."""

import csv
import os
import pathlib
import re

import book
from d2lutil.exercises import variants


class UsageError(ValueError):
    """A bad command-line argument; the message names it."""


ID_SEPARATOR = "__"  # a submission's file is ID__anything.ipynb
ROSTER_ID_COLUMNS = ("id", "student_id", "sid")
# Canvas's "Download Submissions": name_userid_submissionid_original.ipynb, name_LATE_... when
# late, original-1.ipynb when resubmitted; Moodle's "Download all submissions": a folder per
# student, Full Name_participantid_assignsubmission_file_.
CANVAS_NAME = re.compile(r"[^_/]+?(?P<late>_LATE)?_(?P<user>[0-9]+)_[0-9]+_.+\.ipynb")
MOODLE_FOLDER = re.compile(r".*_(?P<participant>[0-9]+)_assignsubmission_file_?")
NAMES_UNDERSTOOD = ("ID__anything.ipynb (the student id, two underscores), Canvas's "
                    "name_userid_submissionid_file.ipynb or a file in Moodle's folder "
                    "Full Name_participantid_assignsubmission_file_")


class Roster(dict):
    """{id: name}; ``lms``: {("canvas" or "moodle", LMS user id): student id or ""}."""
    lms = {}


def _csv(path, option):
    """(a DictReader of the CSV ``path``, its column names stripped and lowercased); a
    UsageError naming ``option`` if it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{option} {path}: cannot be read ({error})") from None
    reader = csv.DictReader(text.splitlines())
    return reader, [f.strip().lower() for f in (reader.fieldnames or [])]


def read_roster(path):
    """The Roster of a CSV with a header: an ``id`` (or ``student_id``, ``sid``) column and
    optionally ``name``; or Canvas's gradebook export (``Student``, ``ID``, ``SIS User ID``;
    the rows without a Canvas ``ID``, such as "Points Possible", skipped); or a Moodle
    grading worksheet (``Identifier`` "Participant N" or ``participant``, with an id column
    or ``ID number``). A bad file is a UsageError naming the line."""
    path = pathlib.Path(path)
    reader, fields = _csv(path, "--roster")
    lms = next((k for k, c in (("canvas", "sis user id"), ("moodle", "identifier"),
                               ("moodle", "participant")) if c in fields), None)
    lms_column = {"canvas": "id", "moodle": "identifier" if "identifier" in fields
                  else "participant"}.get(lms)
    ids = ("sis user id",) if lms == "canvas" else (*ROSTER_ID_COLUMNS, "id number")
    column = next((c for c in ids if c in fields), None)
    if column is None:
        raise UsageError(f"--roster {path}: the first line must name the columns, one of "
                         f"them {' or '.join(ROSTER_ID_COLUMNS)} (or Canvas's SIS User ID, "
                         f"Moodle's ID number); got {fields}")
    roster = Roster()
    roster.lms = {}
    for line, record in enumerate(reader, 2):
        record = {(k or "").strip().lower(): (v or "").strip() for k, v in record.items()
                  if isinstance(v, str)}
        user = None
        if lms:
            user = re.fullmatch(r"(?:participant\s*)?([0-9]+)", record.get(lms_column, ""),
                                re.IGNORECASE)
            if user is None and lms == "canvas":
                continue  # "Points Possible", "Manual Posting" and such rows
            if user is None:
                raise UsageError(f"--roster {path}: line {line}: {lms_column} must be a "
                                 f"participant number (Participant 123456), got "
                                 f"{record.get(lms_column, '')[:64]!r}")
            if not record.get(column):  # Canvas's Test Student, say: no id of the school
                roster.lms[(lms, user[1])] = ""
                continue
        try:
            student_id = variants.check_id(record.get(column, ""), f"the {column} of line "
                                           f"{line}")
        except ValueError as error:
            raise UsageError(f"--roster {path}: {error}") from None
        if student_id in roster:
            raise UsageError(f"--roster {path}: line {line} repeats the id {student_id}")
        roster[student_id] = record.get("name") or record.get("student") or record.get(
            "full name", "")
        if user:
            roster.lms[(lms, user[1])] = student_id
    return roster


def find_id(path, roster=None, folder=None):
    """(student id, how it was found) of a submission's ``path`` (in SUBMISSIONS ``folder``),
    or (None, "no id: why"): from ``ID__anything.ipynb``, or from Canvas's or Moodle's name
    through the roster's LMS ids."""
    path = pathlib.Path(path)
    where = path.parent.name if folder and path.parent != pathlib.Path(folder) else ""
    canvas, moodle = CANVAS_NAME.fullmatch(path.name), MOODLE_FOLDER.fullmatch(where)
    if canvas or moodle:
        lms, user = ("canvas", canvas["user"]) if canvas else ("moodle", moodle["participant"])
        what = (f"Canvas user {user}" + (" (LATE)" if canvas["late"] else "") if canvas
                else f"Moodle participant {user}")
        column = "ID and SIS User ID" if canvas else "Identifier and an id"
        student_id = (roster.lms if isinstance(roster, Roster) else {}).get((lms, user))
        if roster is None or not any(k[0] == lms for k in getattr(roster, "lms", {})):
            return None, (f"no id: {what} in the name; give ROSTER with the columns "
                          f"{column} (the {lms.title()} export) to find the student id")
        if not student_id:
            return None, (f"no id: {what} is not on the roster" if student_id is None else
                          f"no id: {what} has no student id on the roster")
        return student_id, f"{what} -> roster"
    stem = path.stem
    if ID_SEPARATOR not in stem or where:
        return None, (f"no id: the file name does not start with a student id and "
                      f"{ID_SEPARATOR}; the names understood: {NAMES_UNDERSTOOD}")
    candidate = stem.split(ID_SEPARATOR, 1)[0]
    try:
        student_id = variants.check_id(candidate, "the file name's id")
    except ValueError:
        return None, f"no id: {candidate[:64]!r} in the file name is not a student id"
    if roster is not None and student_id not in roster:
        return None, f"no id: {student_id} is not on the roster"
    return student_id, "file name ID__"


def id_of(path, roster=None):
    """(student id, None) of a submission's file ``ID__anything.ipynb``, or (None, why)."""
    student_id, how = find_id(path, roster)
    return (student_id, None) if student_id else (None, how)


def mark_latest(rows, paths, name=lambda path: path.name):
    """Set ``counted`` on every row: of the files of one student for one notebook, only
    the latest counts (modification time, which zip and unzip keep; then the name). A row's
    ``file`` is ``name(path)`` of its path."""
    when = {name(p): (p.lstat().st_mtime_ns, name(p)) for p in paths}
    groups = {}
    for row in rows:
        row["counted"] = "yes" if row["status"] not in ("no id", "not graded") else "no"
        if row["counted"] == "yes" and row["student_id"]:
            groups.setdefault((row["student_id"], row["notebook"]), []).append(row)
    for group in groups.values():
        group.sort(key=lambda r: when[r["file"]])
        for older in group[:-1]:
            older["counted"] = "no"
            older["note"] = "; ".join(filter(None, [
                f"not counted: {group[-1]['file']} is a later submission of this notebook",
                older["note"]]))


def number(points):
    """Points as the CSV shows them: 2, not 2.0."""
    return int(points) if float(points).is_integer() else round(points, 3)


def read_weights(text, chapter):
    """``WEIGHTS`` ("10=2,09=0.5": a notebook's points count that many times) as
    {notebook: weight}, each notebook one of ``chapter``; a UsageError names the entry."""
    weights = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        notebook, _, weight = entry.partition("=")
        notebook = notebook.strip().removeprefix("nb").zfill(2)
        try:
            value = float(weight)
        except ValueError:
            value = float("nan")
        if notebook not in chapter or not 0 <= value < float("inf") or notebook in weights:
            raise UsageError(f"--weights: {entry[:64]!r} must be NN=weight, once per notebook, "
                             f"NN one with exercises ({', '.join(sorted(chapter))}) and the "
                             "weight a number of 0 or more")
        weights[notebook] = value
    return weights


def roster_rows(rows, roster=None, marks=(), written_max=None, weights=None):
    """One row per student: the checked total over the notebooks handed in (the latest of
    each), the hand ``marks`` (``read_marks``) and both together (``total``; ``max_total``
    counts ``written_max``, {notebook: rubric points}, of each notebook handed in), each
    notebook's points times its ``weights`` entry (1 if none; the nbNN columns stay
    unweighted); then a row for each file without an id."""
    roster, weights = roster or {}, weights or {}

    def entry_of(student_id, note=()):
        return {"student_id": student_id, "name": roster.get(student_id, ""), "checked": 0,
                "by hand": 0, "max_total": 0, "notebooks": {}, "hand": {}, "note": list(note)}

    students = {student_id: entry_of(student_id) for student_id in roster}
    for row in rows:
        student_id = row["student_id"]
        if not student_id or row["status"] == "not graded":
            continue
        entry = students.setdefault(student_id, entry_of(student_id))
        number_ = book.number(row["notebook"])
        if row["counted"] == "yes":
            weight = weights.get(number_, 1)
            entry["notebooks"][number_] = row["total"]
            entry["checked"] += weight * row["total"]
            entry["max_total"] += weight * ((row["max_total"] or 0)
                                            + (written_max or {}).get(number_, 0))
        else:
            entry["note"].append(f"notebook {number_} handed in more than once: the latest "
                                 "counts")
    for mark in marks:
        entry = students.setdefault(mark["id"], entry_of(mark["id"]))
        entry["hand"][f"nb{mark['notebook']} ex{mark['exercise']} by hand"] = mark["points"]
        entry["by hand"] += weights.get(mark["notebook"], 1) * mark["points"]
        if mark["note"]:
            entry["note"].append(f"nb{mark['notebook']} ex{mark['exercise']}: {mark['note']}")
    out = []
    for entry in sorted(students.values(), key=lambda e: e["student_id"]):
        if not entry["notebooks"]:
            entry["note"].append("nothing graded handed in")
        entry["total"] = number(entry["checked"] + entry["by hand"])
        entry["by hand"] = number(entry["by hand"])
        entry["note"] = "; ".join(dict.fromkeys(entry["note"]))
        out.append(entry)
    for row in rows:
        if row["status"] == "no id":
            entry = entry_of("")
            entry["note"] = f"{row['note']} ({row['file']}): graded on nothing"
            out.append(entry)
    return out


def write_roster(rows, out, roster=None, marks=(), written_max=None, weights=None):
    """Write the per-student rows (``roster_rows``) to ``out``, a CSV."""
    entries = roster_rows(rows, roster, marks, written_max, weights)
    numbers = sorted({n for e in entries for n in e["notebooks"]})
    hand = sorted({k for e in entries for k in e["hand"]})
    names = ["student_id", "name", "total", "max_total", "checked", "by hand",
             *[f"nb{n}" for n in numbers], *hand, "note"]
    records = []
    for entry in entries:
        records.append({k: entry.get(k, "") for k in names})
        records[-1].update({f"nb{n}": p for n, p in entry["notebooks"].items()})
        records[-1].update({k: number(p) for k, p in entry["hand"].items()})
    write_rows(out, names, records)


def read_marks(path, chapter, known):
    """The hand marks of a CSV (columns id, notebook, exercise, points; optionally note) as
    dicts, each checked against ``chapter`` ({"03": ChapterNotebook}) and the ids ``known``:
    a UsageError names the file, the line and the value."""
    path = pathlib.Path(path)
    reader, fields = _csv(path, "--marks")
    if not {"id", "notebook", "exercise", "points"} <= set(fields):
        raise UsageError(f"--marks {path}: the first line must name the columns id, "
                         f"notebook, exercise, points (and optionally note); got {fields}")
    marks, seen = [], {}
    for line, record in enumerate(reader, 2):
        record = {**dict.fromkeys(fields, ""), **{(k or "").strip().lower(): v.strip()
                                                  for k, v in record.items() if isinstance(v, str)}}
        where = f"--marks {path}: line {line}:"
        if record["id"] not in known:
            raise UsageError(f"{where} the id {record['id'][:64]!r} is on no roster and "
                             "names no submission")
        notebook = record["notebook"].removeprefix("nb").zfill(2)
        if notebook not in chapter:
            raise UsageError(f"{where} the notebook {record['notebook'][:64]!r} is not one "
                             f"with exercises ({', '.join(sorted(chapter))})")
        written = {str(e.number): e for e in chapter[notebook].exercises if e.rubric}
        exercise = written.get(record["exercise"].removeprefix("ex"))
        if exercise is None:
            raise UsageError(f"{where} notebook {notebook} has no exercise "
                             f"{record['exercise'][:64]!r} marked by hand (those with a "
                             f"rubric: {', '.join(written) or 'none'})")
        try:
            points = float(record["points"])
        except ValueError:
            points = float("nan")
        if not 0 <= points <= exercise.rubric_points:
            raise UsageError(f"{where} points {record['points'][:64]!r} for exercise "
                             f"{exercise.number} of notebook {notebook}: expected a number "
                             f"from 0 to its rubric's {number(exercise.rubric_points)}")
        key = (record["id"], notebook, exercise.number)
        if key in seen:
            raise UsageError(f"{where} repeats the mark of line {seen[key]} ({key[0]}, "
                             f"notebook {notebook}, exercise {exercise.number})")
        seen[key] = line
        marks.append({"id": key[0], "notebook": notebook, "exercise": exercise.number,
                      "points": points, "note": record.get("note", "")[:300]})
    return marks


def partial_of(path):
    """The temporary file a CSV is written to before it takes the name ``path``."""
    return path.with_name(path.name + ".partial")


def write_rows(out, names, records):
    """Write ``records`` (dicts) to the CSV ``out`` with columns ``names``, through a
    temporary file: never half a file."""
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = partial_of(out)
    with open(partial, "w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=names)
        writer.writeheader()
        writer.writerows(records)
    os.replace(partial, out)
