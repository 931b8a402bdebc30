"""The student edition: what an instructor hands out, ``make student-edition``.

    python course/student_edition.py --wheel-url URL [--out build/student] [--roster CSV]

writes ``notebooks/``, ``dist/`` (the wheel, its exercise modules sealed by course/sealed.py)
and ``README.md`` (course/README.md, "Building the student edition"). :func:`build_package`
is also the package every grading kernel imports (course/grade.py).
"""

import argparse
import ast
import copy
import hashlib
import importlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import urllib.parse

import nbformat
import tomllib

sys.path.append(str(pathlib.Path(__file__).resolve().parents[1] / "tools"))  # as a script
import book  # noqa: E402  (the book's tools/book.py: the course reads the book)
from roster import UsageError, read_roster  # noqa: E402

ROOT = book.ROOT
COURSE = pathlib.Path(__file__).resolve().parent
SHIPPED = ("sealed.py", "codec.py")  # course/ modules the wheel's d2lutil/exercises/ holds
DEFAULT_OUT = ROOT / "build" / "student"
ID_TAG = "student-id"  # the cell where the student enters their id
VALUES_TAG = "student-values"  # a cell that shows an exercise's values for the student
WHEEL_URL_RE = re.compile(r"^(https?://|file:/)[^\s\"'\\]+\.whl$")
LOCAL_VERSION = "student"  # the wheel's version: the package's, then "+student"
EXERCISE_RE = re.compile(r"^# Exercise (\d+)\b", re.MULTILINE)

# The first line of the starter cell of an exercise with variants (the book's values below)
OWN_VALUES = "# Answer for your values (the cell above prints them), not the book's below."

ID_CELL = """\
# Your student id, exactly as on the class roster (in quotes): it picks your
# own version of the graded exercises at the end of this notebook.
from d2lutil.exercises import student

student(...)"""

EXERCISES_INTRO = """\
## Exercises

Each exercise has a starter cell: replace every `...` with your answer and run the cell. Some
exercises are your own version: the cell above the starter shows your values (they replace the
values the question's text gives). Enter your student id in the cell near the top of this
notebook first. `check` tells you whether your answer is right, or what is off, without giving the
answer away, and `ex1.hint()` shows a hint (run it again for the next one). Your instructor holds
the worked answers."""


class EditionError(ValueError):
    """A bad argument or a chapter the student edition cannot be built from."""


# --- the sealed package -------------------------------------------------------------------------

def exercise_modules(package=ROOT / "d2lutil"):
    """The names ("nb01", ...) of the exercise modules of the package."""
    return sorted(p.stem for p in (package / "exercises").glob("nb[0-9][0-9].py"))


def sealed_module_source(name, key, book=False):
    """The source of the sealed module ``d2lutil.exercises.NAME``; ``book``: the book's
    values (variant 0) sealed too, for grading them (``grade.py --book``)."""
    import sealed

    module_name = f"d2lutil.exercises.{name}"
    module = importlib.import_module(module_name)
    data = {"key": key.hex(), "exercises": []}
    for exercise_name in module.__all__:
        exercise = getattr(module, exercise_name)
        data["exercises"].append(sealed.seal_exercise(exercise, key, module_name,
                                                      book=book))
    names = ", ".join(module.__all__)
    text = json.dumps(data, separators=(",", ":"), sort_keys=True)
    return (f'"""The exercises of notebook {name[2:]}, student edition: checked against '
            'sealed answers (made by\n``make student-edition``; see '
            'd2lutil.exercises.sealed)."""\n\n'
            "import json\n\nfrom d2lutil.exercises.sealed import load\n\n"
            f"__all__ = {list(module.__all__)!r}\n\n"
            f"_DATA = json.loads({text!r})\n\n"
            f"{names}, = load(__name__, _DATA)\n")


def build_package(folder, book=False, key=None, roster=None):
    """Write the sealed ``d2lutil`` into ``folder``/d2lutil; return that path: the package
    with its exercise modules sealed, ``SHIPPED`` beside them, ``variants.EDITION`` "student"
    unless ``book``, and with ``roster`` (ids) their short hashes in ``variants.ROSTER``."""
    folder = pathlib.Path(folder)
    key = os.urandom(16) if key is None else key
    source = ROOT / "d2lutil"
    target = folder / "d2lutil"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(
        "__pycache__", "*.pyc", "nb[0-9][0-9].py"))
    for name in exercise_modules(source):
        (target / "exercises" / f"{name}.py").write_text(
            sealed_module_source(name, key, book=book), encoding="utf-8")
    for name in SHIPPED:
        shutil.copyfile(COURSE / name, target / "exercises" / name)
    variants_py = target / "exercises" / "variants.py"
    text = variants_py.read_text(encoding="utf-8")
    if not book:
        if '\nEDITION = "book"\n' not in text:
            raise EditionError("d2lutil/exercises/variants.py no longer sets EDITION = \"book\"")
        text = text.replace('\nEDITION = "book"\n', '\nEDITION = "student"\n')
    if roster:
        from d2lutil.exercises import variants

        salt = hashlib.sha256(b"roster\n" + key).hexdigest()[:16]  # per build, as the key
        checks = sorted({variants.roster_check(i, salt) for i in roster})
        if "\nROSTER = None\n" not in text:
            raise EditionError("d2lutil/exercises/variants.py no longer sets ROSTER = None")
        text = text.replace("\nROSTER = None\n",
                            f"\nROSTER = {{'salt': {salt!r}, 'checks': {checks!r}}}\n")
    variants_py.write_text(text, encoding="utf-8")
    for path in [target, *target.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return target


def wheel_name(pyproject=ROOT / "pyproject.toml"):
    """The file name of the wheel ``build_wheel`` writes, as pip requires it: [project] name
    and version of ``pyproject``, the local version ``+student``, pure Python
    (``d2lutil-0.1.0+student-py3-none-any.whl``)."""
    with open(pyproject, "rb") as f:
        project = tomllib.load(f)["project"]
    name = re.sub(r"[-_.]+", "_", project["name"]).lower()  # as wheel file names spell it
    return f"{name}-{project['version']}+{LOCAL_VERSION}-py3-none-any.whl"


def check_wheel_url(wheel_url):
    """Refuse (EditionError) a WHEEL_URL pip cannot install the wheel from: not the http(s)://
    or file:/ address of a .whl, or one whose file name (URL-decoded) is not ``wheel_name()``,
    saying which address in the same folder would do."""
    if not WHEEL_URL_RE.match(wheel_url or ""):
        raise EditionError("WHEEL_URL must be the http(s):// or file:/ address of the "
                           f"student wheel, ending in .whl, got {wheel_url!r}")
    parts = urllib.parse.urlsplit(wheel_url)
    folder, _, file_name = parts.path.rpartition("/")
    name = wheel_name()
    if urllib.parse.unquote(file_name) != name:
        fixed = urllib.parse.urlunsplit(parts._replace(path=f"{folder}/{name}", query="",
                                                       fragment=""))
        raise EditionError(
            f"WHEEL_URL must end in the file name of the wheel the build writes, {name} "
            f"(pip refuses a wheel under another name), got {wheel_url!r}; for instance "
            f"WHEEL_URL={fixed}")


def build_wheel(dist, key=None, roster=None):
    """Build the student wheel into ``dist``; return its path (``dist``/``wheel_name()``)."""
    dist = pathlib.Path(dist)
    dist.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="student-wheel-") as scratch:
        project = pathlib.Path(scratch)
        build_package(project, key=key, roster=roster)
        pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
        version = re.search(r'^version = "([^"]+)"$', pyproject, re.MULTILINE).group(1)
        pyproject = pyproject.replace(f'version = "{version}"',
                                      f'version = "{version}+{LOCAL_VERSION}"', 1)
        (project / "pyproject.toml").write_text(pyproject, encoding="utf-8")
        (project / "README.md").write_text(
            "d2lutil, the student edition of the chapter's helper package: exercises "
            "checked against sealed answers.\n", encoding="utf-8")
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                        "--no-build-isolation", "--wheel-dir", str(dist), str(project)],
                       check=True, stdout=subprocess.DEVNULL)
    wheel = dist / wheel_name()
    if not wheel.is_file():  # the name that WHEEL_URL was checked against
        found = sorted(p.name for p in dist.glob("*.whl"))
        raise EditionError(f"expected the student wheel {wheel.name} in {dist}, found {found}")
    return wheel


# --- the notebooks -----------------------------------------------------------------------------

def _varied(module_name):
    """{exercise number: (exercise, its variant keys)} of the exercises that vary."""
    module = importlib.import_module(module_name)
    found = {}
    for name in module.__all__:
        exercise = getattr(module, name)
        if exercise.variants:
            found[exercise.number] = (exercise, list(exercise.variants[0]))
    return found


def _literal_line(line, names):
    """(variable, its comment) of a starter line ``name = <a Python literal>  # ...``
    whose name is one of ``names``, else None."""
    match = re.match(r"^([A-Za-z_]\w*)\s*=\s*([^#]+?)\s*(#.*)?$", line)
    if not match or match.group(1) not in names:
        return None
    try:
        ast.literal_eval(match.group(2))
    except (ValueError, SyntaxError):
        return None
    return match.group(1), match.group(3)


def student_notebook(nb, wheel_url):
    """A copy of chapter notebook ``nb`` as the student edition has it."""
    import colab  # here, not at the top: the autograder's zip has this file, not colab.py

    nb = copy.deepcopy(nb)
    numbers = book.exercise_numbers(c.source for c in nb.cells if c.cell_type == "code")
    varied = _varied(f"d2lutil.exercises.nb{numbers[0]}") if numbers else {}
    cells = []
    for cell in nb.cells:
        tags = book.tags(cell)
        if book.SETUP_TAG in tags:
            cell.source = colab.setup_source(wheel_url=wheel_url)
            cell.outputs = []
            cells.append(cell)
            id_cell = nbformat.v4.new_code_cell(ID_CELL)
            id_cell.metadata["tags"] = [ID_TAG]
            id_cell.id = "student-id"
            cells.append(id_cell)
            continue
        if cell.cell_type == "markdown":
            if cell.source.startswith("## Exercises"):
                cell.source = EXERCISES_INTRO
            cell.source = _without_colab(cell.source)
        if cell.cell_type == "code":
            match = EXERCISE_RE.search(cell.source)
            number = int(match.group(1)) if match else None
            if number in varied and re.search(rf"\bex{number}\.check\(", cell.source):
                exercise, keys = varied[number]
                values = nbformat.v4.new_code_cell(f"ex{number}.values()")
                values.metadata["tags"] = [VALUES_TAG]
                values.id = f"student-values-{number}"
                cells.append(values)
                lines = cell.source.split("\n")
                for i, line in enumerate(lines):
                    found = _literal_line(line, keys)
                    if found:
                        name, comment = found
                        lines[i] = f'{name} = ex{number}.params["{name}"]' + (
                            f"  {comment}" if comment else "")
                cell.source = "\n".join([OWN_VALUES] + lines)
                cell.outputs = []
                cell.execution_count = None
        cells.append(cell)
    nb.cells = cells
    return nb


def _without_colab(source):
    """Markdown without the book's Colab badges and "(in Colab)" links, and without
    pointers to the worked solutions."""
    lines = [line for line in source.split("\n") if not book.BADGE_RE.match(line.strip())]
    text = "\n".join(lines)
    text = re.sub(r" \(\[in Colab\]\([^)]*\)\)", "", text)
    text = re.sub(r"compare (it|them|yours) with `ex\d+\.solution\(\)`",
                  "your instructor marks it", text)
    return re.sub(r"\n{3,}", "\n\n", text)


README = """\
# {title}: the student edition

Notebooks of the chapter, with graded exercises of your own.

1. Install the course's `d2lutil` and the chapter's packages (a Python 3.10 to 3.13
   environment with torch, numpy and matplotlib):

       pip install {wheel_url}
       pip install --no-deps {pins}

   In Google Colab the first code cell of every notebook does this for you.
2. Open a notebook, enter your student id in the cell near the top (exactly as on the class
   roster, in quotes), and run it. Your exercises at the end are your own version: the cell
   above each starter shows your values.
3. `exK.check(...)` tells you whether an answer is right. Hand in the notebook as your
   instructor asks; grading runs more checks than the notebook shows.
"""


def build(out, wheel_url, key=None, roster=None):
    """Write the student edition into ``out``; return (notebooks, wheel). ``roster``: a
    roster CSV (as ``make grade`` reads it), whose ids the id cell checks."""
    import colab  # as in student_notebook

    check_wheel_url(wheel_url)
    ids = None
    if roster is not None:
        try:
            ids = list(read_roster(roster))
        except UsageError as error:
            raise EditionError(str(error).replace("--roster", "ROSTER")) from None
    out = pathlib.Path(out)
    if out.resolve() == ROOT.resolve() or ROOT.resolve().is_relative_to(out.resolve()):
        raise EditionError(f"--out must be a folder of its own, got {out}")
    if out.exists():
        shutil.rmtree(out)
    (out / "notebooks").mkdir(parents=True)
    wheel = build_wheel(out / "dist", key=key, roster=ids)
    written = []
    for path in book.chapter_notebooks():
        nb = student_notebook(book.read(path), wheel_url)
        target = out / "notebooks" / path.name
        nbformat.write(nb, str(target))
        written.append(target)
    (out / "README.md").write_text(README.format(
        title="Multi-head and cross-attention", wheel_url=wheel_url,
        pins=" ".join(colab.pins())), encoding="utf-8")
    return written, wheel


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="student_edition.py", description=textwrap.dedent(__doc__).split("\n\n")[0])
    parser.add_argument("--wheel-url", required=True, metavar="URL",
                        help="where students get the wheel (https://... or file:/...), "
                        f"ending in its file name, {wheel_name()}")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="default build/student")
    parser.add_argument("--roster", metavar="CSV", default=None,
                        help="the class roster (an id column): the id cell then catches a "
                        "mistyped id")
    args = parser.parse_args(argv)
    try:
        notebooks, wheel = build(args.out, args.wheel_url, roster=args.roster)
    except EditionError as error:
        print(f"student_edition.py: error: {error}", file=sys.stderr)
        return 2
    print(f"{len(notebooks)} notebooks in {pathlib.Path(args.out) / 'notebooks'} and the "
          f"wheel {wheel}: put the wheel at {args.wheel_url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
