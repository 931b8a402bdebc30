"""Every install command of a student edition (its setup cells, its README) is one pip
accepts, each argument read as pip reads it (as tests/notebooks/test_setup_cells.py checks
the book's; pip's own dry run is course/tests/test_student_edition.py's); and a WHEEL_URL
whose file name is not the wheel's is refused before anything is built.
"""

import shlex
import subprocess
import sys
import urllib.parse

import pytest
from packaging.utils import parse_wheel_filename

import book
import student_edition
from test_setup_cells import problems, setup_cell_arguments, wheel_file_name

WHEEL_URL = f"file:///x/{student_edition.wheel_name()}"


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
    run = subprocess.run([sys.executable, student_edition.__file__,
                          "--wheel-url", "file:///srv/course/d2lutil-student.whl",
                          "--out", str(out)], capture_output=True, text=True, check=False)
    assert run.returncode == 2 and run.stdout == "", (run.returncode, run.stdout)
    assert run.stderr == (
        "student_edition.py: error: WHEEL_URL must end in the file name of the wheel the "
        f"build writes, {student_edition.wheel_name()} (pip refuses a wheel under another "
        "name), got 'file:///srv/course/d2lutil-student.whl'; for instance "
        f"WHEEL_URL=file:///srv/course/{student_edition.wheel_name()}\n")
    assert not out.exists()
