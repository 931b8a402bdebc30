"""Student ids, the latest submission and the roster, as the grader (course/grade.py), the
Gradescope autograder and the student edition share them (course/README.md)."""

import csv
import os
import pathlib

import book
from d2lutil.exercises import variants


class UsageError(ValueError):
    """A bad command-line argument; the message names it."""


ID_SEPARATOR = "__"  # a submission's file is ID__anything.ipynb
ROSTER_ID_COLUMNS = ("id", "student_id", "sid")


def read_roster(path):
    """{id: name} from a roster CSV with a header: an ``id`` (or ``student_id``, ``sid``)
    column and optionally ``name``. A bad file is a UsageError naming the line."""
    path = pathlib.Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--roster {path}: cannot be read ({error})") from None
    reader = csv.DictReader(text.splitlines())
    fields = [f.strip().lower() for f in (reader.fieldnames or [])]
    column = next((c for c in ROSTER_ID_COLUMNS if c in fields), None)
    if column is None:
        raise UsageError(f"--roster {path}: the first line must name the columns, one of "
                         f"them {' or '.join(ROSTER_ID_COLUMNS)}; got {fields}")
    roster = {}
    for line, record in enumerate(reader, 2):
        record = {(k or "").strip().lower(): (v or "").strip() for k, v in record.items()}
        try:
            student_id = variants.check_id(record.get(column, ""), f"the {column} of line "
                                           f"{line}")
        except ValueError as error:
            raise UsageError(f"--roster {path}: {error}") from None
        if student_id in roster:
            raise UsageError(f"--roster {path}: line {line} repeats the id {student_id}")
        roster[student_id] = record.get("name", "")
    return roster


def id_of(path, roster=None):
    """(student id, None) of a submission's file ``ID__anything.ipynb``, or (None, why)."""
    stem = pathlib.Path(path).stem
    if ID_SEPARATOR not in stem:
        return None, (f"no id: the file name does not start with a student id and "
                      f"{ID_SEPARATOR} (ID{ID_SEPARATOR}notebook.ipynb)")
    candidate = stem.split(ID_SEPARATOR, 1)[0]
    try:
        student_id = variants.check_id(candidate, "the file name's id")
    except ValueError:
        return None, f"no id: {candidate[:64]!r} in the file name is not a student id"
    if roster is not None and student_id not in roster:
        return None, f"no id: {student_id} is not on the roster"
    return student_id, None


def mark_latest(rows, paths):
    """Set ``counted`` on every row: of the files of one student for one notebook, only
    the latest counts (modification time, which zip and unzip keep; then the name)."""
    when = {p.name: (p.lstat().st_mtime_ns, p.name) for p in paths}
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


def roster_rows(rows, roster=None):
    """One row per student: the total over the notebooks handed in (the latest of each),
    then a row for each file without an id."""
    roster = roster or {}

    def entry_of(student_id, note=()):
        return {"student_id": student_id, "name": roster.get(student_id, ""), "total": 0,
                "max_total": 0, "notebooks": {}, "note": list(note)}

    students = {student_id: entry_of(student_id) for student_id in roster}
    for row in rows:
        student_id = row["student_id"]
        if not student_id or row["status"] == "not graded":
            continue
        entry = students.setdefault(student_id, entry_of(student_id))
        number = book.number(row["notebook"])
        if row["counted"] == "yes":
            entry["notebooks"][number] = row["total"]
            entry["total"] += row["total"]
            entry["max_total"] += row["max_total"] or 0
        else:
            entry["note"].append(f"notebook {number} handed in more than once: the latest "
                                 "counts")
    out = []
    for entry in sorted(students.values(), key=lambda e: e["student_id"]):
        if not entry["notebooks"]:
            entry["note"].append("nothing graded handed in")
        entry["note"] = "; ".join(dict.fromkeys(entry["note"]))
        out.append(entry)
    for row in rows:
        if row["status"] == "no id":
            entry = entry_of("")
            entry["note"] = f"{row['note']} ({row['file']}): graded on nothing"
            out.append(entry)
    return out


def write_roster(rows, out, roster=None):
    """Write the per-student rows (``roster_rows``) to ``out``, a CSV."""
    entries = roster_rows(rows, roster)
    numbers = sorted({n for e in entries for n in e["notebooks"]})
    names = ["student_id", "name", "total", "max_total", *[f"nb{n}" for n in numbers], "note"]
    records = []
    for entry in entries:
        records.append({k: entry.get(k, "") for k in names})
        records[-1].update({f"nb{n}": p for n, p in entry["notebooks"].items()})
    write_rows(out, names, records)


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
