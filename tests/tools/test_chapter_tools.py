"""The tools behind `make execute`, `make chapter` and the hygiene test, on the demo chapter.

Every hygiene check of tests/notebooks/hygiene.py passes on the executed demo chapter
(tests/demo_chapter.py, executed once per session by tests/conftest.py) and fails, with a
message naming the notebook and cell, on a deliberately broken copy. `make execute` stores
reproducible outputs. The copies the site and slides are built from (tools/chapter.py) link
each other instead of Colab, show the local badge, hide the Colab setup cell and replace
widgets with a note; tests/browser/test_browser.py checks the built site itself.
"""

import copy
import math

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_output

import book
import chapter
import colab
import hygiene
import plan

NAME = "notebooks/01_scaling.ipynb"
HEADS = "notebooks/02_heads.ipynb"
SOLUTIONS = "notebooks/solutions/01_solutions.ipynb"
PUB = colab.Publication("https://github.com/example-owner/example-chapter", "teaching")


# Fresh copies of the executed demo notebooks (the second has a Going deeper section).
nb, heads, solutions = (pytest.fixture(lambda executed_demo_template, rel=rel: book.read(
    executed_demo_template / rel), name=name) for name, rel in (
        ("nb", NAME), ("heads", HEADS), ("solutions", SOLUTIONS)))


@pytest.fixture
def notebooks(executed_demo_template):
    """{name: notebook} of the whole executed demo chapter, fresh copies."""
    return {book.relpath_of(p, executed_demo_template): book.read(p)
            for p in book.all_notebooks(executed_demo_template)}


@pytest.mark.parametrize("path", ["notebooks/01_scaling.ipynb", "notebooks/02_heads.ipynb",
                                  "notebooks/solutions/01_solutions.ipynb"])
def test_demo_chapter_is_clean(executed_demo_template, path):
    size = (executed_demo_template / path).stat().st_size
    problems = hygiene.check_all(book.read(executed_demo_template / path), path, size,
                                 chapter="solutions" not in path)
    assert problems == []


def only(problems, *fragments):
    """The single problem reported contains every fragment (so the message is useful)."""
    assert len(problems) == 1, problems
    for fragment in fragments:
        assert fragment in problems[0], problems[0]
    return problems[0]


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def section(nb, heading):
    """The index of the cell that starts with ``heading``."""
    return next(i for i, c in enumerate(nb.cells) if c.source.startswith(heading))


# --- validity and execution --------------------------------------------------------------

def test_duplicate_or_missing_cell_ids_invalid_or_old_nbformat_fail(nb):
    good = copy.deepcopy(nb)
    nb.cells[3].id = nb.cells[2].id
    only(hygiene.check_valid(nb, NAME), NAME, "cell 3", "duplicate cell id")
    del nb.cells[3]["id"]
    assert any("cell 3" in p for p in hygiene.check_valid(nb, NAME))
    nb = copy.deepcopy(good)
    nb.cells[2]["cell_type"] = "prose"
    only(hygiene.check_valid(nb, NAME), NAME, "not valid nbformat")
    nb = good
    nb.nbformat_minor = 4
    for cell in nb.cells:
        del cell["id"]
    only(hygiene.check_valid(nb, NAME), "has no cell ids")


def test_out_of_order_execution_fails(nb):
    cells = code_cells(nb)
    cells[1].execution_count, cells[2].execution_count = 3, 2
    only(hygiene.check_execution_counts(nb, NAME), "execution count 3, expected 2", "cell ")
    cells[1].execution_count = None
    only(hygiene.check_execution_counts(nb, NAME), "execution count None, expected 2")


def test_stored_error_fails_unless_meant(nb):
    cell = code_cells(nb)[2]
    cell.outputs.append(new_output("error", ename="ValueError", evalue="bad", traceback=[]))
    only(hygiene.check_errors(nb, NAME), "stored error ValueError: bad")
    cell.metadata["tags"] = ["raises-exception"]
    assert hygiene.check_errors(nb, NAME) == []
    cell.outputs = []
    only(hygiene.check_errors(nb, NAME), "tagged 'raises-exception' but stores no error")


# --- outputs -----------------------------------------------------------------------------

def test_stderr_fails_unless_ignored(nb):
    cell = code_cells(nb)[2]
    cell.outputs.append(new_output("stream", name="stderr", text="UserWarning: careful\n"))
    only(hygiene.check_streams_and_paths(nb, NAME), "writes to stderr", "UserWarning")
    cell.metadata["tags"] = ["nbval-ignore-output"]
    assert hygiene.check_streams_and_paths(nb, NAME) == []


@pytest.mark.parametrize("marker",
                         ["# NBVAL_IGNORE_OUTPUT", "#NBVAL_SKIP", "# NBVAL_CHECK_OUTPUT"])
def test_nbval_comment_markers_fail(nb, marker):
    cell = code_cells(nb)[2]
    cell.source = marker + "\n" + cell.source
    only(hygiene.check_streams_and_paths(nb, NAME), "nbval comment marker", "nbval-ignore-output")
    cell.metadata["tags"] = ["nbval-ignore-output"]  # a tag does not excuse the comment
    only(hygiene.check_streams_and_paths(nb, NAME), "nbval comment marker")


@pytest.mark.parametrize("text, bad", [
    ("saved to /tmp/tmpab12/fig.png\n", True),
    ("cwd: /work/main/notebooks\n", True),
    ("loaded /root/.cache/torch\n", True),
    ("file:///home/me/x.csv\n", True),
    ("homework / 2 = 0.5, ratio 3/4\n", False),
    ("see docs/tmp_results and ~/tmp\n", False),
])
def test_machine_paths_fail(nb, text, bad):
    code_cells(nb)[2].outputs.append(new_output("stream", name="stdout", text=text))
    problems = hygiene.check_streams_and_paths(nb, NAME)
    assert bool(problems) == bad, problems
    if bad:
        only(problems, "machine path in an output")
    code_cells(nb)[2].outputs[-1:] = [new_output(  # in HTML too
        "display_data", data={"text/plain": "table", "text/html": f"<p>{text}</p>"})]
    assert bool(hygiene.check_streams_and_paths(nb, NAME)) == bad


def test_long_code_and_printed_lines_fail(nb):
    """79 characters a line of code or output; a figure's or widget's text/plain, which
    never shows, does not count; colour codes take no room."""
    assert hygiene.check_line_length(nb, NAME) == []
    cell = code_cells(nb)[2]
    cell.outputs.append(new_output("stream", name="stdout", text="ok\n" + "x" * 79 + "\n"))
    cell.outputs.append(new_output("stream", name="stdout", text="\x1b[31m" + "y" * 79 + "\x1b[0m"))
    cell.outputs.append(new_output("display_data", data={
        "image/png": "iVBORw0KGgo=", "text/plain": "<Figure " + "z" * 90 + ">"}))
    assert hygiene.check_line_length(nb, NAME) == []
    cell.outputs.append(new_output("execute_result", execution_count=cell.execution_count,
                                   data={"text/plain": "tensor(" + "1" * 80 + ")"}))
    only(hygiene.check_line_length(nb, NAME), NAME, "cell ", "1 printed line(s) longer than "
         "79 characters, the longest 88")
    cell.outputs.pop()
    cell.source += "\nlong_name = " + "'" + "a" * 70 + "'"
    only(hygiene.check_line_length(nb, NAME), "1 code line(s) longer than 79", "long_name")


def test_svg_output_fails(nb):
    code_cells(nb)[-1].outputs.append(new_output(
        "display_data", data={"image/svg+xml": "<svg/>", "text/plain": "<Figure>"}))
    only(hygiene.check_no_svg(nb, NAME), "SVG output")


def test_size_limit(tmp_path, nb):
    assert hygiene.check_size(999_999, NAME) == []
    only(hygiene.check_size(1_000_000, NAME), "1000000 bytes, must be under 1000000")
    code_cells(nb)[2].outputs.append(new_output("stream", name="stdout", text="x" * 1_100_000))
    path = tmp_path / "big.ipynb"
    nbformat.write(nb, path)
    only(hygiene.check_size(path.stat().st_size, "big.ipynb"), "big.ipynb")


def test_kernelspec_fails(nb):
    nb.metadata.kernelspec.name = "python3.11-venv"
    only(hygiene.check_kernelspec(nb, NAME), "'python3.11-venv', must be 'python3'")


# --- structure ---------------------------------------------------------------------------

def test_missing_badge_or_title_fails(nb):
    title = nb.cells[0].source
    nb.cells[0].source = title.splitlines()[0]
    only(hygiene.check_title(nb, NAME), "no Open-in-Colab badge")
    nb.cells[0].source = title.replace("# Scaled", "Scaled")
    only(hygiene.check_title(nb, NAME), "must start with '# Title'")
    nb.cells.insert(0, new_code_cell("x = 1"))
    only(hygiene.check_title(nb, NAME), "first cell must be the Markdown title cell")


def test_recap_and_exercises_may_share_a_cell(nb):
    recap = next(i for i, c in enumerate(nb.cells) if c.source.startswith("## Recap"))
    nb.cells[recap].source += "\n\n" + nb.cells[recap + 1].source
    del nb.cells[recap + 1]
    assert hygiene.check_structure(nb, NAME) == []
    nb.cells[recap].source += "\n3. One more.\n4. And one.\n5. Too many."
    only(hygiene.check_structure(nb, NAME), "has 5 numbered exercises")


def test_structure_fails(nb):
    good = copy.deepcopy(nb)
    nb.cells[1].source = "## Goals\n\n- scaling"
    only(hygiene.check_structure(nb, NAME), "cell 1 must be Markdown starting with "
                                            "'## What you will learn'")
    nb = copy.deepcopy(good)
    recap = next(i for i, c in enumerate(nb.cells) if c.source.startswith("## Recap"))
    nb.cells.insert(recap + 3, new_markdown_cell("## Further reading\n\nThe paper."))
    only(hygiene.check_structure(nb, NAME), "last three sections must be '## Recap', "
                                            "'## Exercises', '## References'", "Further reading")
    nb = copy.deepcopy(good)
    del nb.cells[recap + 2]  # no References
    only(hygiene.check_structure(nb, NAME), "last three sections",
         "found ['## Why scale', '## Recap', '## Exercises']")
    for count in (1, 5):
        nb = copy.deepcopy(good)
        exercises = next(c for c in nb.cells if c.source.startswith("## Exercises"))
        exercises.source = "## Exercises\n\n" + "\n".join(f"{k + 1}. Do {k}." for k in range(count))
        only(hygiene.check_structure(nb, NAME), f"has {count} numbered exercises")


def test_going_deeper_comes_just_before_recap(nb, heads):
    """Optional (the first demo notebook has none); where present, the last four sections
    are Going deeper, Recap, Exercises, References."""
    assert hygiene.check_structure(heads, HEADS) == []
    deeper = next(i for i, c in enumerate(heads.cells) if c.source.startswith("## Going deeper"))
    assert [c.source.split("\n")[0] for c in heads.cells[deeper + 2:deeper + 5]] == [
        "## Recap", "## Exercises", "## References"]
    early = copy.deepcopy(heads)
    early.cells.insert(2, early.cells.pop(deeper))
    only(hygiene.check_structure(early, HEADS), "'## Going deeper' must be one section, just "
         "before '## Recap'", "found ['## Splitting', '## Recap'")
    twice = copy.deepcopy(heads)
    twice.cells.insert(3, new_markdown_cell("## Going deeper: more\n\nAnd more."))
    only(hygiene.check_structure(twice, HEADS), "'## Going deeper' must be one section",
         "and 2 of it")
    nb.cells.insert(2, new_markdown_cell("## Going deeper\n\nToo soon."))
    only(hygiene.check_structure(nb, NAME), "just before '## Recap'")


def test_lesson_words_leave_out_going_deeper_exercises_and_references(heads):
    words = book.lesson_words(heads)
    deeper = next(c for c in heads.cells if c.source.startswith("## Going deeper"))
    deeper.source += " " + "word " * 50
    assert book.lesson_words(heads) == words
    heads.cells[section(heads, "## Splitting")].source += " " + "word " * 50  # the lesson
    assert book.lesson_words(heads) == words + 50


def test_numbered_references_are_not_exercises(nb):
    """The demo's References is a numbered list; exercises end where it starts, in or
    across cells."""
    refs = next(i for i, c in enumerate(nb.cells) if c.source.startswith("## References"))
    nb.cells[refs].source += "\n2. Another paper.\n3. And another."
    assert hygiene.check_structure(nb, NAME) == []
    nb.cells[refs - 1].source += "\n\n" + nb.cells[refs].source  # one cell for both
    del nb.cells[refs]
    assert hygiene.check_structure(nb, NAME) == []


# --- slides: headings start cells, notes are tagged ----------------------------------------

def test_heading_in_the_middle_of_a_cell_fails(nb, solutions):
    assert hygiene.check_headings_start_cells(nb, NAME) == []
    why = section(nb, "## Why scale")
    nb.cells[why].source += "\n\n### A detail\n\nMore.\n\n## Another section"
    only(hygiene.check_headings_start_cells(nb, NAME), NAME, f"cell {why} ", "'### A detail'",
         "'## Another section'", "split the cell")
    nb.cells[why].source = "\n\n" + nb.cells[why].source  # blank lines before the heading
    only(hygiene.check_headings_start_cells(nb, NAME), "starts: '### A detail', '## Another")
    # Recap and Exercises in one cell: the Exercises start no slide.
    recap = next(i for i, c in enumerate(nb.cells) if c.source.startswith("## Recap"))
    nb.cells[recap].source += "\n\n" + nb.cells[recap + 1].source
    assert any(f"cell {recap} " in p and "'## Exercises'" in p
               for p in hygiene.check_headings_start_cells(nb, NAME))
    # A '## ' line in fenced code is no heading; '#### ' and '# ' start no slide anyway.
    ok = "Run:\n\n```bash\n## a shell comment\n```\n\n#### A minor point"
    solutions.cells.append(new_markdown_cell(ok))
    assert hygiene.check_headings_start_cells(solutions, SOLUTIONS) == []
    solutions.cells[-1].source += "\n\n## Exercise 2"
    only(hygiene.check_headings_start_cells(solutions, SOLUTIONS), SOLUTIONS, "'## Exercise 2'")


def test_notes_must_be_tagged_and_markdown(heads, solutions):
    assert hygiene.check_notes_tagged(heads, HEADS) == []
    notes = next(i for i, c in enumerate(heads.cells) if book.NOTES_TAG in book.tags(c))
    assert colab.slide_type(heads.cells[notes]) == "notes"  # stamped so from the tag
    heads.cells[notes].metadata.tags = []  # untagged notes: prose hidden from the audience
    only(hygiene.check_notes_tagged(heads, HEADS), HEADS, f"cell {notes}",
         "slide type 'notes' without the tag 'notes'")
    code = next(c for c in solutions.cells if c.cell_type == "code")
    code.metadata["tags"] = [book.NOTES_TAG]
    only(hygiene.check_notes_tagged(solutions, SOLUTIONS), SOLUTIONS,
         "tagged 'notes' but a code cell")


# --- what a student reads is the lesson ------------------------------------------------------

@pytest.mark.parametrize("text, what", [
    ("The asserts held at every seed shift we ran.", "seed shifts"),
    ("They held for K = 0 to 5.", "the seed shift K"),
    ('Run it with K="1 2".', "the seed shift K"),
    ("Within the stated tolerances.", "tolerances"),
    ("The round-off pass accepts it.", "the round-off pass"),
    ("nbval compares the outputs.", "nbval"),
    ("CI runs it after every push.", "CI"),
    ("Check it with `make robust`.", "a make target"),
    ("`make test` re-runs it.", "a make target"),
    ("See test-roundoff.", "test-roundoff"),
    ("Under ATEN_CPU_CAPABILITY=default the digits move.", "ATEN_CPU_CAPABILITY"),
    ("As its author says (issue 36), ...", "an issue thread"),
    ("See issue #4.", "an issue thread"),
    ("A pull request fixed it.", "a pull request"),
    ("[a thread](https://github.com/o/r/issues/12)", "a link to an issue or pull request"),
    ("as o/r/pull/7 shows", "a link to an issue or pull request"),
])
def test_ci_words_in_prose_fail(nb, solutions, text, what):
    why = section(nb, "## Why scale")
    nb.cells[why].source += "\n\n" + text
    only(hygiene.check_student_prose(nb, NAME), NAME, f"cell {why} ", f"{what} (",
         "test machinery in what a student reads")
    solutions.cells.append(new_markdown_cell(text))
    only(hygiene.check_student_prose(solutions, SOLUTIONS), SOLUTIONS, what)


def test_prose_without_ci_words_passes(nb):
    nb.cells[section(nb, "## Why scale")].source += (
        "\n\n$\\mathbf{K} = \\mathbf{X}\\mathbf{W}_k$ with $k = 2$ positions; the "
        "robustness count over 20 seeds; heads make the maps differ; a CIFAR image; "
        "the issue is the scale.")
    assert hygiene.check_student_prose(nb, NAME) == []


def test_threads_may_be_cited_in_references_only(nb):
    refs = next(i for i, c in enumerate(nb.cells) if c.source.startswith("## References"))
    cited = "\n2. The author, [issue 36](https://github.com/o/r/issues/36), 2019."
    nb.cells[refs].source += cited
    assert hygiene.check_student_prose(nb, NAME) == []
    nb.cells[refs].source += "\n3. Checked by nbval."  # machinery, even there
    only(hygiene.check_student_prose(nb, NAME), f"cell {refs}", "nbval (")
    nb.cells[refs].source = nb.cells[refs].source.replace("\n3. Checked by nbval.", "")
    nb.cells[refs - 1].source += cited  # the Exercises: outside References
    only(hygiene.check_student_prose(nb, NAME), f"cell {refs - 1}", "an issue thread ('issue 36')")


def test_a_loop_rebinding_a_name_a_hint_names_fails(nb):
    """A lesson cell's loop may not rebind a global that an exercise's hint names."""
    recap = section(nb, "## Recap")
    nb.cells.insert(recap, new_code_cell("for scale in (1, 2):\n    pass"))
    assert hygiene.check_hint_names_kept(nb, NAME, names={"math"}) == []
    only(hygiene.check_hint_names_kept(nb, NAME, names={"scale"}), NAME, f"cell {recap} ",
         "loop rebinds `scale`", f"set in cell {section(nb, 'scale =')}")


def test_a_name_a_later_notebook_builds_fails(nb, heads, solutions):
    """A notebook uses no name its facts' later_names hold, in code or prose."""
    heads.metadata[book.FACTS_KEY]["later_names"] = {
        "MultiHeadAttention": "notebook 3 builds it"}
    assert hygiene.check_no_forward_reference(heads, HEADS) == []
    code = next(i for i, c in enumerate(heads.cells) if "width // num_heads" in c.source)
    heads.cells[code].source += "\nfrom d2lutil import MultiHeadAttention"
    prose = section(heads, "## Splitting")
    heads.cells[prose].source += " Or `d2lutil.MultiHeadAttention`."
    problems = hygiene.check_no_forward_reference(heads, HEADS)
    assert len(problems) == 2 and all(
        "uses MultiHeadAttention before it is built (notebook 3 builds it)" in p
        for p in problems), problems
    assert {f"cell {prose} ", f"cell {code} "} == {p.split("(")[0].split(": ")[1] for p in problems}
    heads.cells[code].source = heads.cells[code].source.replace("MultiHeadAttention",
                                                                "GroupedMultiHeadAttention")
    assert len(hygiene.check_no_forward_reference(heads, HEADS)) == 1  # a word of its own
    nb.cells[section(nb, "## Why scale")].source += " Or `d2lutil.MultiHeadAttention`."
    assert hygiene.check_no_forward_reference(nb, NAME) == []


# --- one notation table, one cell per live tag --------------------------------------------

def notation_cell(notebooks):
    (name, i, cell), = hygiene.tagged_cells(notebooks, book.NOTATION_TAG)
    return cell


def test_notation_table_has_one_home(notebooks):
    assert hygiene.check_chapter_notation(notebooks) == []
    assert hygiene.tagged_cells(notebooks, book.NOTATION_TAG)[0][0] == NAME
    table = notation_cell(notebooks)
    table.metadata.tags = []
    only(hygiene.check_chapter_notation(notebooks), "0 cells tagged 'notation'", "none")
    table.metadata.tags = [book.NOTATION_TAG]
    second = new_markdown_cell("| a | b |\n|---|---|\n| 1 | 2 |")
    second.metadata["tags"] = [book.NOTATION_TAG]
    notebooks[HEADS].cells.insert(3, second)
    only(hygiene.check_chapter_notation(notebooks), "2 cells tagged 'notation'", NAME, HEADS)
    table.metadata.tags = []  # the one table, in notebook 2
    only(hygiene.check_chapter_notation(notebooks), HEADS, "lives in chapter notebook 01")
    notebooks[HEADS].cells.pop(3)
    notebooks[SOLUTIONS].cells.insert(1, second)  # in notebook 1's solutions
    only(hygiene.check_chapter_notation(notebooks), SOLUTIONS, "lives in chapter notebook 01")


def test_notation_cell_holds_a_markdown_table(notebooks):
    table = notation_cell(notebooks)
    table.source = "The letters: $d$ is the width, $h$ the heads."
    only(hygiene.check_chapter_notation(notebooks), NAME, "not a Markdown cell holding a table")
    table.source = "| letter | meaning |\n|:---|---:|\n| $d$ | width |"
    assert hygiene.check_chapter_notation(notebooks) == []
    table.cell_type = "code"
    only(hygiene.check_chapter_notation(notebooks), "not a Markdown cell holding a table")


def test_live_tags_are_on_one_code_cell_each(notebooks):
    assert hygiene.check_chapter_live_tags(notebooks) == []
    for name, nb in notebooks.items():
        assert hygiene.check_live_tags(nb, name) == []
    nb = notebooks[NAME]
    live = next(i for i, c in enumerate(nb.cells) if "live-scale" in book.tags(c))
    nb.cells[live + 1].metadata["tags"] = ["live-softmax"]  # the Markdown after it
    only(hygiene.check_live_tags(nb, NAME), f"cell {live + 1}",
         "live tag 'live-softmax' on a markdown cell")
    nb.cells[live + 1].metadata["tags"] = []
    code = next(c for c in notebooks[SOLUTIONS].cells if c.cell_type == "code")
    code.metadata["tags"] = ["live-scale"]  # the same purpose again, in another notebook
    problem = only(hygiene.check_chapter_live_tags(notebooks), "live tag 'live-scale' is on 2 "
                   "cells, must be on one", NAME, SOLUTIONS)
    assert f"cell {live} " in problem
    code = next(i for i, c in enumerate(nb.cells) if c.source == "import math")
    nb.cells[code].metadata["tags"] = ["live-scale"]  # and twice in one notebook
    only(hygiene.check_live_tags(nb, NAME), f"cell {live}", "on a second cell")


# --- the prose is true to the outputs ------------------------------------------------------

@pytest.mark.parametrize("text, numbers", [
    ("scale $1/\\sqrt{64} = 0.125$ and 1024 terms, 32 heads", ["0.125", "1024"]),
    ("a $1{,}024 \\times 2\\,048$ matrix", ["1,024", "2,048"]),
    ("12.5% of 3.0e-5 and 1,000,000 rows", ["12.5", "3.0e-5", "1,000,000"]),
    ("d2l 1.0.3 on Python 3 with [link](https://x.org/v2.5/1234) <img src='a/9999.png'>", []),
    ("float32, 512 dims, sizes (512,1024), step 3.", ["1024"]),
    # citation years are not figures; a capitalised word before a number is still prose
    ("Vaswani et al. (2017), Vaswani et al., 2017 and Shazeer (2019)", []),
    ("(Michel, Levy and Neubig, 2019; Ainslie et al. 2023) at 4096 tokens", ["4096"]),
    ("At 2048 tokens, Shazeer 2019, (see Table 2019 rows), length (2019)",
     ["2048", "2019", "2019", "2019"]),
    ("Shazeer (2048) is no year", ["2048"]),
    # the References section is not prose to check: years, volumes, arXiv numbers
    ("## Recap\n\n1.5 apart\n\n## References\n\n1. A. (2017). arXiv:1706.03762, 4096", ["1.5"]),
])
def test_prose_numbers_found(text, numbers):
    assert hygiene.prose_numbers(text) == numbers


@pytest.mark.parametrize("number, texts, found", [
    ("0.5", ["weight 0.5\n"], True),
    ("0.5", ["weight 10.53\n"], False),
    ("0.5", ["weight 0.55\n"], False),
    ("1,024", ["1024 keys"], True),
    ("1024", ["1,024 keys"], False),
    ("12.5", ["share: 12.5%"], True),
    ("0.125", ["tensor([0.1250])"], False),
])
def test_number_in_outputs(number, texts, found):
    assert hygiene.number_in(number, texts) == found


def test_prose_number_not_printed_fails(nb):
    assert hygiene.check_prose_numbers(nb, NAME) == []
    nb.cells[1].source += " Roughly 0.333 of the keys, in $2{,}048$ rows."
    problem = only(hygiene.check_prose_numbers(nb, NAME), NAME, "cell 1", "0.333, 2,048")
    assert "not printed by any cell" in problem
    assert hygiene.check_prose_numbers(nb, NAME, allowed={"0.333", "2,048"}) == []
    nb.cells[1].source = nb.cells[1].source.replace("2{,}048", "1{,}024")
    only(hygiene.check_prose_numbers(nb, NAME, allowed={"2,048"}), "0.333")
    nb.cells[1].source = nb.cells[1].source.replace(" Roughly 0.333 of the keys, in $1{,}024$ "
                                                    "rows.", "")
    code_cells(nb)[1].source += "\nlimit = 0.777"  # in code, not printed: does not count
    nb.cells[1].source += " The limit is 0.777."
    only(hygiene.check_prose_numbers(nb, NAME), "0.777")


# --- reproducible outputs (make execute) ----------------------------------------------------

def test_execute_merges_streams_and_drops_widget_ids(executed_demo_template):
    nb = book.read(executed_demo_template / "notebooks/02_heads.ipynb")
    loop = next(c for c in nb.cells if "flush=True" in c.source)
    assert [o.output_type for o in loop.outputs] == ["stream"]
    assert loop.outputs[0].text == "0 1 2 \n"
    widget = next(c for c in nb.cells if "IntSlider" in c.source)
    view = widget.outputs[0].data[book.WIDGET_MIME]
    assert "model_id" not in view and "widgets" not in nb.metadata
    assert hygiene.check_reproducible(nb, NAME) == []


def test_check_reproducible_names_the_cells_a_run_changes(executed_demo, capsys):
    """One run: the widget and the chunked prints come out as stored, the edited cell not."""
    path = executed_demo / "notebooks/02_heads.ipynb"
    nb = book.read(path)
    edited = next(i for i, c in enumerate(nb.cells) if "width // num_heads" in c.source)
    nb.cells[edited].outputs[0].text = "65\n"
    nbformat.write(nb, path)
    assert chapter.cmd_check_reproducible([path]) == 1
    assert f"a run changes cells [{edited}]" in capsys.readouterr().out


def test_unreproducible_outputs_fail(nb):
    cell = code_cells(nb)[2]
    cell.outputs = [new_output("stream", name="stdout", text="0 "),
                    new_output("stream", name="stdout", text="1\n")]
    only(hygiene.check_reproducible(nb, NAME), "cell ", "stdout split into several outputs")
    cell.outputs = [new_output("display_data", data={
        book.WIDGET_MIME: {"version_major": 2, "version_minor": 0, "model_id": "4f2a"},
        "text/plain": "IntSlider(value=8)"})]
    only(hygiene.check_reproducible(nb, NAME), "a widget output with a model id")
    book.normalize_outputs(nb)
    assert hygiene.check_reproducible(nb, NAME) == []
    assert cell.outputs[0].data["text/plain"] == "IntSlider(value=8)"


def test_figure_without_alt_text_fails(nb):
    figure = next(c for c in nb.cells if book.has_figure(c))
    del figure.metadata["mystnb"]
    only(hygiene.check_figures_have_alt_text(nb, NAME), "a figure without alt text", "mystnb")


# --- the copies the site and the slides are built from -----------------------------------------

def demo_site_copies(root):
    rels = [book.relpath_of(p, root) for p in book.all_notebooks(root)]
    return {rel: chapter.for_site(book.read(root / rel), PUB, rel, "../slides/x.html")
            for rel in rels}


def test_site_copies_link_the_site_not_colab(executed_demo_template):
    copies = demo_site_copies(executed_demo_template)
    first = copies["notebooks/01_scaling.ipynb"]
    assert first.cells[-1].source == "---\n\n**Next:** [Many heads](02_heads.ipynb)"
    assert "**Previous:** [Scaled dot products](01_scaling.ipynb)" in \
        copies["notebooks/02_heads.ipynb"].cells[-1].source
    solution = copies["notebooks/solutions/01_solutions.ipynb"]
    assert solution.cells[-1].source == (
        "---\n\n**Back to the chapter:** [Scaled dot products](../01_scaling.ipynb)")
    assert not any("in Colab" in nb.cells[-1].source for nb in copies.values())
    # The badge still opens Colab, with the local image; the title cell links the slides.
    title = first.cells[0].source
    assert "[![Open In Colab](../assets/colab-badge.svg)](https://colab.research.google.com/" \
           "github/example-owner/example-chapter/blob/teaching/notebooks/01_scaling.ipynb)" in title
    assert '<a class="slides-link" href="../slides/x.html">Slides</a>' in title
    assert "(../../assets/colab-badge.svg)" in solution.cells[0].source


def test_site_copies_hide_the_setup_cell_and_replace_widgets(executed_demo_template):
    copies = demo_site_copies(executed_demo_template)
    heads = copies["notebooks/02_heads.ipynb"]
    setup = next(c for c in heads.cells if book.SETUP_TAG in book.tags(c))
    assert "remove-cell" in book.tags(setup)
    widget = next(c for c in heads.cells if "IntSlider" in c.source)
    assert widget.outputs[0].data["text/plain"] == chapter.WIDGET_NOTE
    assert 'class="widget-note"' in widget.outputs[0].data["text/html"]
    original = book.read(executed_demo_template / "notebooks/02_heads.ipynb")
    assert book.WIDGET_MIME in next(c for c in original.cells
                                    if "IntSlider" in c.source).outputs[0].data


def test_slide_copies_link_decks_and_pages():
    nb = nbformat.v4.new_notebook(cells=[new_markdown_cell(
        f"[a]({PUB.colab_url('notebooks/02_b.ipynb')}) "
        f"[b]({PUB.colab_url('notebooks/solutions/01_solutions.ipynb')}) "
        "[c](https://example.org/x.ipynb)")])
    decks = {"notebooks/02_b.ipynb": "02_b.html"}
    deck = chapter.for_slides(nb, PUB, "notebooks/01_a.ipynb", decks)
    assert deck.cells[0].source.startswith(
        "[a](02_b.html) [b](../notebooks/solutions/01_solutions.html) "
        "[c](https://example.org/x.ipynb)")
    assert deck.cells[-1].source.endswith("[The chapter's site](../index.html)")


def test_slide_copies_turn_the_navigation_cell_into_deck_links(heads):
    decks = {NAME: "01_scaling.html", HEADS: "02_heads.html"}
    deck = chapter.for_slides(heads, PUB, HEADS, decks)
    assert deck.cells[-1].source == ("---\n\n**Previous:** [Scaled dot products](01_scaling.html)"
                                     " · [The chapter's site](../index.html)")


def test_build_refuses_a_repository_without_notebooks(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text(
        "[project.urls]\nRepository = 'https://github.com/o/r'\n[tool.chapter]\nbranch = 'main'\n")
    assert chapter.cmd_build(tmp_path / "out", root=tmp_path) == 1
    assert "no notebooks under" in capsys.readouterr().err


# --- the teaching plan page (course/plan.py) ------------------------------------------------

def demo_exercises(module):
    """Stand-ins for an exercise module: a checked exercise of 2 + 0.5 points, an open one."""
    from d2lutil.exercises import Exercise, integer

    assert module == "d2lutil.exercises.nb01", module
    return [Exercise(2, [], hints=["Think."], solution="Because."),
            Exercise(1, lambda d: [("factor", integer(d // 4)), ("its square", integer(16))],
                     hints=["Divide."], solution="4 and 16.", points=[2, 0.5],
                     variants=[{"d": 16}, {"d": 20}], open_book={1: "the same for all"})]


def with_exercise_import(root, rel=NAME, module="nb01"):
    """The demo notebook ``rel`` with an exercise-import cell before its Exercises."""
    path = root / rel
    nb = book.read(path)
    at = next(i for i, c in enumerate(nb.cells) if "## Exercises" in c.source) + 1
    nb.cells.insert(at, new_code_cell(f"from d2lutil.exercises.{module} import ex1, ex2"))
    nbformat.write(nb, path)


def test_teaching_plan_lists_every_notebook_with_its_facts(executed_demo):
    with_exercise_import(executed_demo)
    facts = plan.chapter_facts(executed_demo, exercises_of=demo_exercises)
    assert [f.rel for f in facts] == [book.relpath_of(p, executed_demo)
                                      for p in book.chapter_notebooks(executed_demo)]
    one, two = facts
    # Seconds to run: the notebooks' budgets in their metadata (tests/demo_chapter.py).
    assert (one.run_s, two.run_s) == (3, 4.5)
    # Points: the sum of the exercises' max_points; an open-ended exercise carries none.
    assert [(e.number, e.checked, e.points) for e in one.exercises] == [(1, 2, 2.5), (2, 0, 0)]
    assert one.points == sum(e.max_points for e in demo_exercises("d2lutil.exercises.nb01"))
    assert one.exercises[0].statement == "Compute the factor for $d = 16$."
    # Without an exercise import the notebook's numbered exercises are open-ended.
    assert [(e.number, e.checked, e.points) for e in two.exercises] == [(1, 0, 0), (2, 0, 0)]
    # Live: the cells tagged live-PURPOSE, with their sections.
    assert [(c.tag, c.section) for c in one.live] == [("live-scale", "Why scale")]
    assert [(c.tag, c.section) for c in two.live] == [("live-slider", "Splitting")]
    # Read: the prose words at WORDS_PER_MINUTE, rounded up.
    assert one.read_min == math.ceil(one.words / plan.WORDS_PER_MINUTE) >= 1
    assert one.solutions == "notebooks/solutions/01_solutions.ipynb" and two.solutions is None

    page = plan.render(facts, PUB)
    rows = [line for line in page.splitlines() if line.startswith("| [")]
    assert len(rows) == 2
    for fact, row in zip(facts, rows, strict=True):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells == [f"[{fact.title}]({fact.rel})", str(fact.read_min), f"{fact.run_s:g}",
                         str(len(fact.live)), str(len(fact.exercises)), f"{fact.points:g}"]
        assert f"\n## {fact.title}\n" in page
    assert "| All 2 notebooks | " in page and page.count("[course/README.md](") == 1
    assert f"{PUB.repository}/blob/{PUB.branch}/course/README.md" in page
    assert ("- Exercise 1, homework, 2.5 points (2 checked answers; 2 points each student's "
            "own, 0.5 points open-book): Compute the factor") in page
    assert "- Exercise 2, open-ended, no points: Why must $h$ divide $d$?" in page
    assert f"{plan.WORDS_PER_MINUTE} words a minute" in page
    assert "teaching_plan" in chapter.index_md("A chapter", {}, [], {})


def test_teaching_plan_points_are_the_exercise_modules(executed_demo):
    """The module named by the import cell, as the grader finds it, gives the points."""
    from d2lutil.exercises import nb03

    with_exercise_import(executed_demo, module="nb03")
    one = plan.chapter_facts(executed_demo)[0]
    assert one.points == sum(getattr(nb03, name).max_points for name in nb03.__all__)
    assert [e.number for e in one.exercises] == [1, 2, 3]  # ex3: in the module, not the prose


@pytest.mark.parametrize("facts, says", [
    ({}, 'notebooks/02_heads.ipynb has no time budget: set "chapter": {"budget_s": SECONDS} in '
         "its metadata"),
    ({"budget_s": 4.5, "budget": 5}, "notebooks/02_heads.ipynb: its metadata \"chapter\" holds "
                                     "['budget'], not among ['budget_s', ")])
def test_teaching_plan_reports_a_missing_budget(demo, capsys, facts, says):
    path = demo / HEADS
    nb = book.read(path)
    nb.metadata[book.FACTS_KEY] = facts
    nbformat.write(nb, path)
    # Before any notebook runs: the plan (course/plan.py, run as a step) comes first.
    assert chapter.cmd_build(demo / "out", root=demo) == 1
    err = capsys.readouterr().err
    assert says in err and err.startswith("the teaching plan: "), err
    assert not (demo / "out").exists()


@pytest.mark.parametrize("text, words", [
    ("Two words", 2), ("A $x_1 + y$ and $$\\sum_i w_i$$ here", 5),
    ("[a link](https://example.com/x-y) <b>bold</b> it's 0.125", 5), ("## Recap\n\n- one", 2)])
def test_teaching_plan_counts_words(text, words):
    assert plan.count_words(text) == words


def test_teaching_plan_leads_end_outside_code_and_maths():
    assert plan.lead("Call `x.y()`. Then more.", 3) == "Call `x.y()`."
    assert plan.lead("Take $1.5 d$ heads. Then.", 3) == "Take $1.5 d$ heads."
    assert plan.lead("Short. Long enough now. Rest.", 20) == "Short. Long enough now."
    assert plan.lead("No end", 3) == "No end"
