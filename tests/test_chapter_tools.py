"""The tools behind `make chapter` and the hygiene test, on the demo chapter in a tmp folder.

Every hygiene check of tools/hygiene.py passes on the executed demo chapter and fails, with
a message naming the notebook and cell, on a deliberately broken copy. The renderer writes
pages, decks, solutions pages and an index whose links point at the rendered files and which
load nothing from the network; its offline check catches a page that would.
"""

import contextlib
import copy
import io
import pathlib
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_output

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import chapter  # noqa: E402
import colab  # noqa: E402
import demo_chapter  # noqa: E402
import hygiene  # noqa: E402

NAME = "notebooks/01_scaling.ipynb"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo chapter, stamped and executed once (a few seconds)."""
    root = tmp_path_factory.mktemp("demo")
    paths = demo_chapter.write_demo(root)
    with contextlib.redirect_stdout(io.StringIO()):
        colab.cmd_stamp([], root=root)
        chapter.cmd_execute(paths)
    return root


@pytest.fixture
def nb(demo):
    """A fresh copy of the executed first demo notebook."""
    return nbformat.read(demo / NAME, as_version=4)


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("path", ["notebooks/01_scaling.ipynb", "notebooks/02_heads.ipynb",
                                  "notebooks/solutions/01_solutions.ipynb"])
def test_demo_chapter_is_clean(demo, path):
    size = (demo / path).stat().st_size
    problems = hygiene.check_all(nbformat.read(demo / path, as_version=4), path, size,
                                 chapter="solutions" not in path)
    assert problems == []


def only(problems, *fragments):
    """The single problem reported contains every fragment (so the message is useful)."""
    assert len(problems) == 1, problems
    for fragment in fragments:
        assert fragment in problems[0], problems[0]
    return problems[0]


# --- validity and execution --------------------------------------------------------------

def test_missing_and_duplicate_cell_ids_fail(nb):
    nb.cells[3].id = nb.cells[2].id
    only(hygiene.check_valid(nb, NAME), NAME, "cell 3", "duplicate cell id")
    del nb.cells[3]["id"]
    assert any("cell 3" in p for p in hygiene.check_valid(nb, NAME))


def test_invalid_nbformat_fails(nb):
    nb.cells[2]["cell_type"] = "prose"
    only(hygiene.check_valid(nb, NAME), NAME, "not valid nbformat")


def test_old_nbformat_without_ids_fails(nb):
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


def test_machine_path_in_html_output_fails(nb):
    code_cells(nb)[2].outputs.append(new_output(
        "display_data", data={"text/plain": "table", "text/html": "<p>/work/main/x</p>"}))
    only(hygiene.check_streams_and_paths(nb, NAME), "machine path")


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


def test_numbered_references_are_not_exercises(nb):
    """The demo's References is a numbered list; exercises end where it starts, in or
    across cells."""
    refs = next(i for i, c in enumerate(nb.cells) if c.source.startswith("## References"))
    nb.cells[refs].source += "\n2. Another paper.\n3. And another."
    assert hygiene.check_structure(nb, NAME) == []
    nb.cells[refs - 1].source += "\n\n" + nb.cells[refs].source  # one cell for both
    del nb.cells[refs]
    assert hygiene.check_structure(nb, NAME) == []


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


def test_prose_number_printed_by_a_stale_output_only_counts_outputs(nb):
    """A number in code (not in an output) does not count as printed."""
    code_cells(nb)[1].source += "\nlimit = 0.777"
    nb.cells[1].source += " The limit is 0.777."
    only(hygiene.check_prose_numbers(nb, NAME), "0.777")


# --- rendering -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def site(demo, tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    chapters = colab.chapter_notebooks(demo)
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        status = chapter.main(["render", "--no-execute", "--root", str(demo), "--out", str(out),
                               *map(str, chapters)])
    assert status == 0, printed.getvalue()
    return out


def test_render_writes_pages_decks_solutions_and_index(site):
    for name in ["index.html", "01_scaling.html", "01_scaling.slides.html", "02_heads.html",
                 "02_heads.slides.html", "solutions/01_solutions.html",
                 "assets/mathjax/MathJax.js", "assets/reveal.js/dist/reveal.js",
                 "assets/colab-badge.svg"]:
        assert (site / name).is_file(), name
    assert not (site / "solutions" / "01_solutions.slides.html").exists()
    index = (site / "index.html").read_text()
    order = [index.index(f'href="{name}"') for name in
             ["01_scaling.html", "01_scaling.slides.html", "solutions/01_solutions.html",
              "02_heads.html", "02_heads.slides.html"]]
    assert order == sorted(order)


def test_solutions_are_linked_not_inline(site):
    solution = "<span class=\"n\">factor</span>"  # the solution's code, highlighted
    assert solution in (site / "solutions" / "01_solutions.html").read_text()
    for page in ["01_scaling.html", "01_scaling.slides.html", "index.html"]:
        assert solution not in (site / page).read_text()
    assert 'href="solutions/01_solutions.html"' in (site / "index.html").read_text()


def test_navigation_links_point_at_rendered_files(site):
    page = (site / "01_scaling.html").read_text()
    deck = (site / "01_scaling.slides.html").read_text()
    solutions = (site / "solutions" / "01_solutions.html").read_text()
    assert '<a href="02_heads.html">Many heads</a>' in page
    assert '<a href="02_heads.slides.html">Many heads</a>' in deck
    assert '<a href="../01_scaling.html">Scaled dot products</a>' in solutions
    assert 'href="../index.html"' in solutions
    prev = (site / "02_heads.html").read_text()
    assert '<a href="01_scaling.html">Scaled dot products</a>' in prev
    # The badge still opens Colab, with a local image.
    assert 'href="https://colab.research.google.com/github/example-owner/example-chapter/' \
           'blob/teaching/notebooks/01_scaling.ipynb"' in page
    assert 'src="./assets/colab-badge.svg"' in page
    assert 'src="../assets/colab-badge.svg"' in solutions


def test_rendered_chapter_loads_nothing_remote(site):
    assert chapter.check_offline(site) == {}
    page = (site / "01_scaling.html").read_text()
    assert 'src="assets/mathjax/MathJax.js?config=' in page


@pytest.mark.parametrize("snippet", [
    '<script src="https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/latest.js"></script>',
    "<link rel='stylesheet' href='//unpkg.com/reveal.js@4.0.2/dist/reveal.css'>",
    '<img src="https://colab.research.google.com/assets/colab-badge.svg">',
    '<style>@import url(https://fonts.googleapis.com/css?family=Lato);</style>',
    '<script type="module">import mermaid from "https://example.org/mermaid.mjs";</script>',
    "<script>var src = 'https://unpkg.com/@jupyter-widgets/html-manager/dist/embed.js';</script>",
])
def test_offline_check_catches_remote_loads(tmp_path, snippet):
    (tmp_path / "page.html").write_text(f"<html><body>{snippet}</body></html>")
    assert list(chapter.check_offline(tmp_path)) == [str(tmp_path / "page.html")]
    assert chapter.main(["check-offline", str(tmp_path)]) == 1


def test_offline_check_allows_plain_links(tmp_path):
    (tmp_path / "page.html").write_text(
        '<a href="https://colab.research.google.com/github/o/r/blob/main/x.ipynb">Colab</a>'
        '<script src="assets/x.js"></script>')
    assert chapter.check_offline(tmp_path) == {}


def test_without_npm_falls_back_to_cdns_with_a_note(tmp_path):
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        local = chapter.prepare_assets(tmp_path / "out", root=tmp_path, npm="")
    assert local is False
    assert "npm not found" in printed.getvalue() and "CDN" in printed.getvalue()
    assert chapter.exporter_urls(tmp_path / "out" / "a.html", tmp_path / "out", False) == ({}, {})


def test_rewrite_links_relative_and_external():
    pub = colab.Publication("https://github.com/o/r", "main")
    nb = nbformat.v4.new_notebook(cells=[new_markdown_cell(
        "[a](02_b.ipynb#part) [b](other.ipynb) [c](https://example.org/x.ipynb) "
        "[d](solutions/01_solutions.ipynb) [e](https://colab.research.google.com/github/o/r/"
        "blob/main/notebooks/02_b.ipynb)")])
    targets = {"notebooks/01_a.ipynb": "01_a.html", "notebooks/02_b.ipynb": "02_b.html",
               "notebooks/solutions/01_solutions.ipynb": "solutions/01_solutions.html"}
    out = chapter.rewrite_links(nb, pub, "notebooks/01_a.ipynb", targets, "b.svg", "index.html")
    assert out.cells[0].source == (
        "[a](02_b.html#part) [b](other.html) [c](https://example.org/x.ipynb) "
        "[d](solutions/01_solutions.html) [e](02_b.html)")
    deck = chapter.rewrite_links(nb, pub, "notebooks/01_a.ipynb", targets, "b.svg", "index.html",
                                 deck=True)
    assert "[a](02_b.slides.html#part)" in deck.cells[0].source
    assert "[d](solutions/01_solutions.html)" in deck.cells[0].source


def test_widget_outputs_become_a_note():
    data = {chapter.WIDGET_MIME: {"model_id": "x"}, "text/plain": "IntSlider"}
    nb = nbformat.v4.new_notebook(cells=[new_code_cell("w", outputs=[
        new_output("display_data", data=data)])])
    nb.metadata["widgets"] = {"state": {}}
    out = chapter.without_widgets(nb)
    assert "widgets" not in out.metadata
    assert out.cells[0].outputs[0].data == {"text/plain": chapter.WIDGET_NOTE}
    assert "widgets" in nb.metadata  # the original is untouched
