"""Fixtures shared by the tests of the tools: the demo chapter of tests/demo_chapter.py.

The tools' modules (tools/book.py, colab.py, chapter.py) and the tests' helpers
(demo_chapter.py here, tests/notebooks/hygiene.py) import as top-level modules through
``pythonpath`` in pyproject.toml. The fixtures serve the tests of every folder below
(tests/tools/, tests/notebooks/test_robust.py).
"""

import contextlib
import io
import shutil

import pytest

import chapter
import colab
import demo_chapter


def stamped_demo(root):
    """Write the demo chapter into ``root`` and stamp it; return its notebooks' paths."""
    paths = demo_chapter.write_demo(root)
    with contextlib.redirect_stdout(io.StringIO()):
        assert colab.cmd_stamp([], root=root) == 0
    return paths


@pytest.fixture(scope="session")
def executed_demo_template(tmp_path_factory):
    """The demo chapter, stamped and executed once per session (each notebook in a kernel,
    two at a time, as `make execute` runs them)."""
    root = tmp_path_factory.mktemp("executed-demo")
    paths = stamped_demo(root)
    with contextlib.redirect_stdout(io.StringIO()):
        chapter.cmd_execute(paths, jobs=2)
    return root


@pytest.fixture
def executed_demo(executed_demo_template, tmp_path):
    """A fresh copy of the executed demo chapter, free to change."""
    root = tmp_path / "demo"
    shutil.copytree(executed_demo_template, root)
    return root


@pytest.fixture
def demo(tmp_path):
    """The demo chapter, stamped, not executed, in a tmp folder free to change."""
    stamped_demo(tmp_path)
    return tmp_path
