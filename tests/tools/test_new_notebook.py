"""A notebook's facts live in the notebook (issue 42): adding notebook 11 (copies of notebook
1's files) to a copy of the repository changes no other file but what `tools/colab.py
stamp` writes (notebook 10's navigation cell, the README's contents and count), and the
build and hygiene checks take it. CONTRIBUTING.md's list of d2lutil's modules is held to
the package."""

import contextlib
import hashlib
import io
import pkgutil
import re
import shutil

import nbformat

import book
import chapter
import colab
import hygiene

ROOT = book.ROOT
# What the stamper, the build and the hygiene checks read of a repository.
COPIED = ("notebooks", "d2lutil", "course/course.toml", "pyproject.toml", "README.md")
NEW = ("notebooks/11_a_demo_lab.ipynb", "notebooks/solutions/11_solutions.ipynb",
       "d2lutil/exercises/nb11.py")


def snapshot(root):
    """{path from root: sha256 of its bytes} of every file under ``root``."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def stamp(root):
    with contextlib.redirect_stdout(io.StringIO()):
        assert colab.cmd_stamp([], root=root) == 0


def copy_as_11(root, source, target, change_cell=lambda cell: None, facts=None):
    """Notebook ``source`` of ``root`` written as ``target``, its exercise import naming
    nb11, each cell changed by ``change_cell`` and its facts replaced by ``facts``."""
    nb = book.read(root / source)
    for cell in nb.cells:
        cell.source = cell.source.replace("d2lutil.exercises.nb01", "d2lutil.exercises.nb11")
        change_cell(cell)
    if facts is not None:
        nb.metadata[book.FACTS_KEY] = facts
    nbformat.write(nb, root / target)


def readme_of(root):
    return (root / "README.md").read_text(encoding="utf-8")


def test_a_new_notebook_needs_no_other_file(tmp_path):
    root = tmp_path / "repo"
    for rel in COPIED:
        if (ROOT / rel).is_dir():
            shutil.copytree(ROOT / rel, root / rel,
                            ignore=shutil.ignore_patterns("__pycache__", "weights"))
        else:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, root / rel)
    stamp(root)  # as committed: what is left to stamp is notebook 11's doing
    before = snapshot(root)
    ten = "notebooks/10_debugging_multi_head_attention.ipynb"
    ten_cells = book.read(root / ten).cells[:-1]  # all but its navigation cell

    first = "notebooks/01_one_head_one_mixture.ipynb"
    lesson = re.compile(r"^(lecture.*|live-.*|notation)$")  # the course's tags and notebook 1's

    def as_lab(cell):
        cell.source = cell.source.replace("# One Head, One Mixture", "# A Demo Lab", 1)
        if "tags" in cell.metadata:
            cell.metadata["tags"] = [t for t in cell.metadata["tags"] if not lesson.match(t)]

    copy_as_11(root, first, NEW[0], as_lab, facts={
        **book.facts(book.read(root / first)), "budget_s": 5, "builds_on": ["10"],
        "lab": "A demo lab."})
    copy_as_11(root, "notebooks/solutions/01_solutions.ipynb", NEW[1])
    module = (root / "d2lutil/exercises/nb01.py").read_text(encoding="utf-8")
    (root / NEW[2]).write_text(module.replace("notebook 01", "notebook 11"), encoding="utf-8")
    stamp(root)
    out = tmp_path / "site"
    with contextlib.redirect_stdout(io.StringIO()):
        assert chapter.cmd_build(out, execute_notebooks=False, root=root) == 0

    after = snapshot(root)
    assert sorted(p for p in after if before.get(p) != after[p]) == sorted(
        [*NEW, ten, "README.md"])
    assert book.read(root / ten).cells[:-1] == ten_cells, "notebook 10 changed beyond its nav"
    page = (out / "teaching_plan.html").read_text(encoding="utf-8")
    assert "A Demo Lab" in page and "A demo lab." in page and (out / "slides").is_dir()
    notebooks = {rel: book.read(root / rel) for rel in after if rel.endswith(".ipynb")}
    for rel in NEW[:2]:
        assert hygiene.check_all(notebooks[rel], rel, (root / rel).stat().st_size,
                                 chapter="solutions" not in rel) == []
    assert hygiene.check_chapter_notation(notebooks) == []
    assert hygiene.check_chapter_live_tags(notebooks) == []
    # The README, stamped: notebook 11 listed last, and eleven notebooks counted
    readme = readme_of(root)
    assert "11. [A Demo Lab](notebooks/11_a_demo_lab.ipynb)" in readme
    assert re.search(r"as eleven\s+Jupyter notebooks", readme)


def test_readme_lists_every_notebook_with_its_colab_link():
    """The README's contents are `tools/colab.py toc`, in order, and it counts the
    notebooks: `tools/colab.py stamp` leaves it as it is."""
    readme = readme_of(ROOT)
    assert colab.readme_text(readme) == readme, "run `python tools/colab.py stamp`"
    assert colab.toc_lines(ROOT)[-1] in readme and "as ten\nJupyter notebooks" in readme


def test_contributing_lists_every_d2lutil_module():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    listed = text.split("- `d2lutil/`:", 1)[1].split("\n- ", 1)[0]
    modules = [m.name for m in pkgutil.iter_modules([str(ROOT / "d2lutil")])]
    assert [m for m in modules if f"`{m}`" not in listed] == [], (
        "CONTRIBUTING.md's Layout does not name these modules of d2lutil/")
