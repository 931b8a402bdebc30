"""Every install command the chapter hands out is one pip accepts.

The commands: the setup cell of every chapter and solutions notebook, and of every notebook
of a student edition built into a tmp folder (a few seconds), and that edition's README.
Each argument is read as pip reads it: an option (``--quiet``, ``--no-deps``) is skipped; a
wheel's address must end in a valid wheel file name (packaging.utils.parse_wheel_filename),
since pip takes the wheel's name and version from it; a ``git+`` address must make a PEP
508 URL requirement; anything else must be a requirement (packaging.requirements) written
exactly as the requirements files pin it (book.pin). A setup cell's command is what it runs
in Colab (google.colab faked, subprocess.run recorded: tests/colab_check.py).

Then WHEEL_URL: one whose file name is not the wheel's is refused before anything is built.
The same cell run by pip itself (dry run, on the built wheel) is tests/test_student_edition.py's.
"""

import shlex
import subprocess
import sys
import urllib.parse

import pytest
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

import book
import colab_check
import student_edition

WHEEL_URL = f"file:///x/{student_edition.wheel_name()}"


def wheel_file_name(address):
    """The file name a wheel's address (a URL or a path) ends in, URL-decoded, as pip reads it."""
    return urllib.parse.unquote(urllib.parse.urlsplit(address).path.rsplit("/", 1)[-1])


def problems(arguments, where):
    """What pip would refuse among ``arguments`` (those after ``pip install``), or a pin
    that is not the requirements files'."""
    found = []
    for argument in arguments:
        if argument.startswith("-"):
            continue
        try:
            if argument.startswith("git+"):
                Requirement(f"d2lutil @ {argument}")
            elif wheel_file_name(argument).endswith(".whl"):
                parse_wheel_filename(wheel_file_name(argument))
            elif argument != (pin := book.pin(Requirement(argument).name)):
                found.append(f"{where}: {argument!r} is not the requirements files' pin "
                             f"{pin!r}")
        except (InvalidRequirement, InvalidWheelFilename, book.NotebookError) as error:
            found.append(f"{where}: {argument!r}: {error}")
    return found


def setup_cell_arguments(path, monkeypatch):
    """The arguments after ``pip install`` of what the setup cell of the notebook at
    ``path`` runs in Colab."""
    source = next(c.source for c in book.read(path).cells if book.SETUP_TAG in book.tags(c))
    printed, calls = colab_check.recorded_setup_cell(source, True, monkeypatch)
    assert printed == "" and len(calls) == 1, (path.name, printed, calls)
    command = calls[0][0]
    assert command[1:4] == ["-m", "pip", "install"], (path.name, command)
    return command[4:]


def readme_commands(text):
    """The arguments after ``pip install`` of each install command of a README."""
    return [shlex.split(line)[2:] for line in text.splitlines()
            if line.strip().startswith("pip install ")]


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    """A student edition built as `make student-edition` builds it, with a fixed key."""
    out = tmp_path_factory.mktemp("edition") / "student"
    notebooks, wheel = student_edition.build(out, WHEEL_URL, key=bytes(16))
    assert wheel.name == wheel_file_name(WHEEL_URL)  # the name WHEEL_URL was checked against
    return {"out": out, "notebooks": notebooks, "wheel": wheel}


def test_the_checks_refuse_what_pip_refuses():
    assert problems(["--quiet", "--no-deps", book.pin("d2l"), WHEEL_URL,
                     "git+https://github.com/o/r@main"], "ok") == []
    assert len(problems([f"d2l=={book.pin('d2l')}", "https://x/d2lutil-student.whl", "d2l",
                         "d2l==0.1", "git+https://github.com/o/r @main"], "bad")) == 5
    assert wheel_file_name("file:///x/d2lutil-0.1.0%2Bstudent-py3-none-any.whl") == (
        "d2lutil-0.1.0+student-py3-none-any.whl")


def test_every_notebooks_setup_cell_is_a_valid_pip_command(monkeypatch):
    paths = book.all_notebooks()
    assert book.solution_notebooks() and set(book.solution_notebooks()) <= set(paths)
    found = [p for path in paths for p in problems(setup_cell_arguments(path, monkeypatch),
                                                   book.relpath_of(path))]
    assert not found, "\n".join(found)


def test_the_student_editions_setup_cells_and_readme_are_valid_pip_commands(edition,
                                                                            monkeypatch):
    assert len(edition["notebooks"]) == len(book.chapter_notebooks())
    found, cells = [], set()
    for path in edition["notebooks"]:
        arguments = setup_cell_arguments(path, monkeypatch)
        assert WHEEL_URL in arguments, (path.name, arguments)
        found += problems(arguments, f"student {path.name}")
        cells.add(frozenset(a for a in arguments if not a.startswith("-")))
    readme = (edition["out"] / "README.md").read_text(encoding="utf-8")
    commands = readme_commands(readme)
    assert commands, "the student README shows no `pip install` command"
    for arguments in commands:
        found += problems(arguments, "student README.md")
    assert not found, "\n".join(found)
    # the README installs what every setup cell installs, no more, no less
    assert cells == {frozenset(a for arguments in commands for a in arguments
                               if not a.startswith("-"))}


# --- WHEEL_URL ----------------------------------------------------------------------------

def test_the_wheel_name_is_the_packages_name_and_version_plus_student():
    name, version, _, tags = parse_wheel_filename(student_edition.wheel_name())
    assert name == "d2lutil" and str(version).endswith("+student")
    assert {str(tag) for tag in tags} == {"py3-none-any"}


@pytest.mark.parametrize("folder", ["file:///x/", "file:/srv/course/",
                                    "https://course.example.org/a%20b/"])
def test_a_wheel_url_ending_in_the_wheels_name_is_taken(folder):
    name = student_edition.wheel_name()
    student_edition.check_wheel_url(folder + name)
    student_edition.check_wheel_url(folder + urllib.parse.quote(name))  # + as %2B


@pytest.mark.parametrize("url, fixed", [
    ("https://course.example.org/ta/d2lutil-0.1.0-py3-none-any.whl",
     "https://course.example.org/ta/"),
    ("file:/srv/course/d2lutil.whl", "file:///srv/course/"),
    ("https://course.example.org/ta/d2lutil.whl?x=y.whl", "https://course.example.org/ta/"),
])
def test_a_wheel_url_under_another_name_is_refused(url, fixed):
    with pytest.raises(student_edition.EditionError, match="WHEEL_URL must end in") as error:
        student_edition.check_wheel_url(url)
    name = student_edition.wheel_name()
    assert f"{name} (pip" in str(error.value) and repr(url) in str(error.value)
    assert str(error.value).endswith(f"WHEEL_URL={fixed}{name}")


def test_the_command_stops_before_building_on_a_misnamed_wheel_url(tmp_path):
    out = tmp_path / "student"
    run = subprocess.run([sys.executable, str(book.ROOT / "tools" / "student_edition.py"),
                          "--wheel-url", "file:///srv/course/d2lutil-student.whl",
                          "--out", str(out)], capture_output=True, text=True, check=False)
    assert run.returncode == 2 and run.stdout == "", (run.returncode, run.stdout)
    assert run.stderr == (
        "student_edition.py: error: WHEEL_URL must end in the file name of the wheel the "
        f"build writes, {student_edition.wheel_name()} (pip refuses a wheel under another "
        "name), got 'file:///srv/course/d2lutil-student.whl'; for instance "
        f"WHEEL_URL=file:///srv/course/{student_edition.wheel_name()}\n")
    assert not out.exists()
