"""Each student's own version of the graded exercises, picked by their student id.

A graded exercise may declare *variants* (``Exercise(..., variants=[...])``): the book's
values first (sigma = 2, d = 256, ...), then a few others. In the book (this repository)
nothing changes: without an id every exercise is the book's, and ``check`` judges the book's
answers. In the student edition (``make student-edition``) a student enters their id once,
near the top of a notebook::

    from d2lutil.exercises import student
    student("s1234567")

and every exercise of the notebook becomes that student's variant: ``exK.values()`` shows
its values and ``exK.check`` judges answers for them. The variant of exercise K of
notebook NN is a hash of the id and the exercise, never the book's own values, so two
students usually differ and a copied book answer is wrong.

When the grader runs a submission it sets ``D2LUTIL_STUDENT_ID`` in the kernel's
environment: the grader's id wins over the one the notebook enters.
"""

import hashlib
import os
import re

ENV = "D2LUTIL_STUDENT_ID"  # set by the grader in a submission's kernel: it wins
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}")
ID_RULE = ("1 to 64 letters, digits and the signs . _ @ + -, starting with a letter or a "
           "digit, in quotes")

# "book": the repository; the exercises are the book's until an id is given. "student":
# the student edition's wheel sets this (course/student_edition.py); no check runs
# before an id is given.
EDITION = "book"

# The student edition's build may set this from the class roster: a salt and, for each id
# on the roster, the first ROSTER_DIGITS hex digits of a hash of it, enough to catch a
# mistyped id (most typos miss every one of them) and too few to read the roster back.
ROSTER = None
ROSTER_DIGITS = 3

_state = {"id": None}


def roster_check(student_id, salt):
    """The short hash of ``student_id`` that ROSTER holds for each id on the roster."""
    return hashlib.sha256(f"{salt}\n{student_id}".encode()).hexdigest()[:ROSTER_DIGITS]


def check_id(student_id, what="student_id"):
    """``student_id`` stripped, if it is a valid id; else a ValueError naming ``what``."""
    if not isinstance(student_id, str):
        raise ValueError(f"{what} must be a string ({ID_RULE}), got "
                         f"{type(student_id).__name__} {student_id!r}")
    text = student_id.strip()
    if not ID_PATTERN.fullmatch(text):
        raise ValueError(f"{what} must be {ID_RULE}, got {student_id!r}")
    return text


def student(student_id):
    """Set the student id that picks this notebook's variants; print what it did.

    Never raises: a placeholder, a malformed id or (in an edition built with the roster)
    an id not on the roster gets a message saying what to type, and the id stays unset.
    """
    if student_id is Ellipsis or student_id is None:
        print("Type your student id in place of the ... (in quotes, as on the class "
              "roster), then run this cell again.")
        return
    try:
        text = check_id(student_id)
    except ValueError as error:
        print(f"Not a student id: {error}. Fix it and run this cell again.")
        return
    if ROSTER and roster_check(text, ROSTER["salt"]) not in ROSTER["checks"]:
        print(f"{text} is not on your class's roster: check it against the id your "
              "instructor has for you, then run this cell again.")
        return
    _state["id"] = text
    grader = os.environ.get(ENV)
    if grader and grader != text:  # the grader's run: its id is the one graded
        return
    print(f"Student id {text}: the graded exercises below are your own version. "
          "exK.values() shows the values of exercise K.")


def current_id():
    """The id in force: the grader's (``D2LUTIL_STUDENT_ID``), else the notebook's, else
    None."""
    grader = os.environ.get(ENV)
    if grader:
        return check_id(grader, ENV)
    return _state["id"]


def forget():
    """Unset the notebook's id (tests)."""
    _state["id"] = None


def variant_index(key, count, student_id):
    """The variant (1 to ``count - 1``) of exercise ``key`` for ``student_id``.

    Variant 0 is the book's and is never drawn. A SHA-256 of the id and the exercise's key
    ("d2lutil.exercises.nb01.ex1"), so the same id gives the same variant everywhere: in
    the student's kernel, in the grader and in the autograder.
    """
    if count < 2:
        raise ValueError(f"count must be at least 2 (the book's and one more), got {count}")
    digest = hashlib.sha256(f"{check_id(student_id)}\n{key}".encode()).digest()
    return 1 + int.from_bytes(digest[:8], "big") % (count - 1)
