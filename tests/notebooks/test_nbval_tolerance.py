"""The tolerance a notebook cell states for nbval (tests/notebooks/nbval_tolerance.py), and
the count of cells nbval compares over the chapter (issue 22: at least 170, exactly or
within a stated tolerance)."""

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest

import book
import nbval_tolerance as tol

TESTS = Path(__file__).parent
WHY = {"why": "a trained model"}


@pytest.mark.parametrize("spec, message", [
    ({"atol": 0.1}, "'why'"),
    ({"atol": 0.1, "why": " "}, "'why' is empty"),
    ({"atol": -0.1, "why": "x"}, "'atol' must be a number >= 0"),
    ({"rtol": True, "why": "x"}, "'rtol' must be a number >= 0"),
    ({"atol": float("nan"), "why": "x"}, "'atol' must be a number >= 0"),
    ({"atol": 0.1, "btol": 1, "why": "x"}, "must be a mapping"),
    ({"why": "x"}, "neither 'atol' nor 'rtol'"),
    (0.1, "must be a mapping"),
])
def test_a_bad_tolerance_is_refused_by_name(spec, message):
    with pytest.raises(ValueError, match=message) as info:
        tol.tolerance({tol.KEY: spec}, "nb.ipynb cell 3")
    assert "nb.ipynb cell 3" in str(info.value)


def test_tolerance_reads_atol_and_rtol():
    assert tol.tolerance({}) is None
    assert tol.tolerance({tol.KEY: {"atol": 0.01, **WHY}}) == (0.01, 0.0)
    assert tol.tolerance({tol.KEY: {"rtol": 1, **WHY}}) == (0.0, 1.0)


@pytest.mark.parametrize("reference, output, atol, rtol, expected", [
    ("error 0.754 over 28 subsets", "error 0.755 over 28 subsets", 0.002, 0, True),
    ("error 0.754 over 28 subsets", "error 0.757 over 28 subsets", 0.002, 0, False),
    ("on the c: 67%", "on the c: 71%", 0.05, 0, True),  # a percentage as a fraction
    ("on the c: 67%", "on the c: 73%", 0.05, 0, False),
    ("58 rows", "57 rows", 0.0, 0.05, True),  # a count within 5%
    ("58 rows", "54 rows", 0.0, 0.05, False),
    ("offset +0.85", "offset +0.90", 0.06, 0, True),
    ("offset +0.85", "offset -0.85", 0.06, 0, False),  # a sign is part of the number
    ("89,600 words", "89,601 words", 0.5, 0, False),  # thousands separators read
    ("89,600 words", "89,600 words", 0.0, 0.001, True),
    ("head 2 (anchor)", "head 3 (anchor)", 0.05, 0, False),  # another head: fails
    ("ranking [1, 0, 3, 2]", "ranking [1, 0, 2, 3]", 0.05, 0, False),
    ("loss 0.35 of ex1", "loss 0.36 of ex2", 0.05, 0, False),  # digits in names are words
    ("a: 0.5\nb: 0.5\n", "a: 0.5\nb: 0.5\nc: 0.5\n", 1, 0, False),  # a line more
    ("mean 0.60", "median 0.60", 1, 0, False),  # words differ
])
def test_close(reference, output, atol, rtol, expected):
    assert tol.close(reference, output, atol, rtol) is expected


def test_snap_replaces_only_the_texts_within_tolerance():
    ref = [nbformat.v4.new_output("stream", name="stdout", text="error 0.754\n"),
           nbformat.v4.new_output("execute_result", data={"text/plain": "0.50"},
                                  execution_count=1)]
    out = [nbformat.v4.new_output("stream", name="stdout", text="error 0.755\n"),
           nbformat.v4.new_output("execute_result", data={"text/plain": "0.60"},
                                  execution_count=1)]
    snapped = tol.snap(ref, out, 0.002, 0)
    assert snapped[0]["text"] == "error 0.754\n"  # within: the stored text
    assert snapped[1]["data"]["text/plain"] == "0.60"  # beyond: as computed


# One notebook, run by nbval in a subprocess: each cell prints a fixed text and stores
# another, so that its test passes exactly when the tolerance mechanism says it should.
CELLS = [  # (name, printed, stored, tolerance metadata, passes)
    ("within", "error 0.755 on 57 rows, 71%", "error 0.754 on 58 rows, 67%",
     {"atol": 0.05, "rtol": 0.05, **WHY}, True),
    ("beyond", "error 0.854 on 58 rows, 67%", "error 0.754 on 58 rows, 67%",
     {"atol": 0.05, **WHY}, False),
    ("exact", "error 0.755", "error 0.754", None, False),
    ("words", "mean 0.754", "median 0.754", {"atol": 1, **WHY}, False),
    ("same", "error 0.754", "error 0.754", None, True),
]


def write_notebook(path):
    nb = nbformat.v4.new_notebook()
    for count, (_, printed, stored, spec, _) in enumerate(CELLS, start=1):
        cell = nbformat.v4.new_code_cell(f"print({printed!r})", execution_count=count)
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=stored + "\n")]
        if spec is not None:
            cell.metadata[tol.KEY] = spec
        nb.cells.append(cell)
    nbformat.write(nb, path)


def test_nbval_passes_within_the_tolerance_and_fails_beyond_it(tmp_path):
    write_notebook(tmp_path / "demo.ipynb")
    report = tmp_path / "report.xml"
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # not the repository's settings
    env = {"PYTHONPATH": str(TESTS), "PATH": str(Path(sys.executable).parent),
           "JUPYTER_PLATFORM_DIRS": "1", "HOME": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", "pytest.ini", "--nbval",
         "--nbval-current-env", "-p", "nbval_tolerance", "-p", "no:cacheprovider",
         "-p", "no:xdist", f"--junitxml={report}", "demo.ipynb"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    cases = ET.parse(report).getroot().iter("testcase")
    passed = [not any(child.tag in ("failure", "error") for child in case)
              for case in cases]
    assert passed == [ok for *_, ok in CELLS], run.stdout[-3000:]


def compared_cells():
    """(compared exactly, compared within a tolerance, not compared) over every notebook:
    code cells with outputs."""
    counts = [0, 0, 0]
    for path in book.chapter_notebooks() + book.solution_notebooks():
        for cell in book.read(path).cells:
            if cell.cell_type != "code" or not cell.get("outputs"):
                continue
            if book.is_ignored(cell):
                counts[2] += 1
            else:
                counts[1 if tol.KEY in cell.metadata else 0] += 1
    return counts


def test_at_least_170_cells_are_compared_and_every_tolerance_is_well_formed():
    exact, within, ignored = compared_cells()
    assert exact + within >= 170, (exact, within, ignored)
    for path in book.chapter_notebooks() + book.solution_notebooks():
        for i, cell in enumerate(book.read(path).cells):
            if tol.KEY in cell.get("metadata", {}):
                assert cell.cell_type == "code" and not book.is_ignored(cell), (path, i)
                assert tol.tolerance(cell.metadata, f"{path.name} cell {i}")
