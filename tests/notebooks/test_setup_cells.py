"""Every install command the chapter hands out is one pip accepts: the setup cell of every
chapter and solutions notebook (the student edition's are
course/tests/test_student_setup_cells.py's).

Each argument is read as pip reads it: an option (``--quiet``, ``--no-deps``) is skipped; a
wheel's address must end in a valid wheel file name (packaging.utils.parse_wheel_filename),
since pip takes the wheel's name and version from it; a ``git+`` address must make a PEP
508 URL requirement; anything else must be a requirement (packaging.requirements) written
exactly as the requirements files pin it (book.pin). A setup cell's command is what it runs
in Colab (google.colab faked, subprocess.run recorded: tests/notebooks/colab_check.py).
"""

import urllib.parse

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

import book
import colab_check


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


def test_the_checks_refuse_what_pip_refuses():
    wheel = "file:///x/d2lutil-0.1.0%2Bstudent-py3-none-any.whl"
    assert problems(["--quiet", "--no-deps", book.pin("d2l"), wheel,
                     "git+https://github.com/o/r@main"], "ok") == []
    assert len(problems([f"d2l=={book.pin('d2l')}", "https://x/d2lutil-student.whl", "d2l",
                         "d2l==0.1", "git+https://github.com/o/r @main"], "bad")) == 5
    assert wheel_file_name(wheel) == "d2lutil-0.1.0+student-py3-none-any.whl"


def test_every_notebooks_setup_cell_is_a_valid_pip_command(monkeypatch):
    paths = book.all_notebooks()
    assert book.solution_notebooks() and set(book.solution_notebooks()) <= set(paths)
    found = [p for path in paths for p in problems(setup_cell_arguments(path, monkeypatch),
                                                   book.relpath_of(path))]
    assert not found, "\n".join(found)
