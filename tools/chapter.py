"""Execute the chapter's notebooks; build the chapter's site and slides.

    python tools/chapter.py execute [NOTEBOOK...]   # refresh stored outputs in place
    python tools/chapter.py check-reproducible [NOTEBOOK...]   # would execute change them?
    python tools/chapter.py build [--out build/site] [--no-execute] [--solutions 0|1]
                                    # = make chapter [SOLUTIONS=0]

``execute`` is the only way outputs get into a tracked notebook: each one is cleared and
run top to bottom in a fresh kernel (the venv's ``python3``) with its own folder as working
directory, and its outputs are made reproducible (tools/book.py ``normalize_outputs``).
``check-reproducible`` runs the notebooks the same way without writing them and lists the
cells whose stored outputs (figures included, which nbval does not compare) a run would
change, apart from cells tagged ``nbval-ignore-output``: `make execute` run twice must
leave no diff.

``build`` never touches the tracked notebooks. It executes each chapter and solutions
notebook once into a fresh Sphinx source folder (``--no-execute`` copies the stored outputs
instead), adapts the copies to the web (below), writes the teaching plan page (course/plan.py,
run as a script before anything else: from the stored notebooks, their exercises and their
metadata, and the course's course/course.toml), and builds them with
myst-nb and sphinx-book-theme using site/conf.py, which never executes anything. Then
nbconvert makes a reveal.js deck of each chapter notebook into ``OUT/slides/``, and the
lecture decks ``OUT/slides/lecture.html`` and ``lecture-2.html`` from the cells the authors
tag for them (tools/lecture.py; a deck with no tagged cell yet is skipped, with a note). No
deck shows the code's assert statements (lecture.StripAsserts). The front page links the
lecture decks above the notebooks' and shows notebook 1's notation table (its cell tagged
``notation``, read at build time: the one source). The site and
the slides work offline from ``file://``: MathJax (3 for the site, 2 for nbconvert's
slides), reveal.js, require.js and jQuery come from node_modules/ (``npm ci``,
package.json).

What a copy gets for the web: the Colab setup cell is removed (it does nothing there); the
Colab badge shows a local image; the navigation cell's links to sibling notebooks point at
the site's pages (the decks' at the decks) and its "(in Colab)" links are dropped (the
launch button and the badge open Colab); a widget's output becomes its browser version
where its cell has one (a tag ``widget-`` + name: tools/widgets.py, whose models and data
the build writes into ``_static/widgets/`` while the notebooks execute), else a note (the
ipywidgets scripts would come from a CDN, and they need a kernel anyway); the title cell
links the notebook's slides.
The download button gives the notebook as it is, not the copy.

``--solutions 0`` (``make chapter SOLUTIONS=0``) builds the students' site: no page of
notebooks/solutions/, no teaching plan (its rubrics and quiz answers are answers), and in
every copy (pages, decks, downloads) no sentence that names a solutions notebook and no
link to one (``drop_solution_refs``).
"""

import argparse
import asyncio
import concurrent.futures
import contextlib
import copy
import html
import os
import pathlib
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
import time

import nbformat
from nbconvert import SlidesExporter

import book
import colab
import lecture

ROOT = book.ROOT
# The teaching plan's page, written by a step of the build: the course's script, run, never
# imported (nothing of the book imports course/).
PLAN = ROOT / "course" / "plan.py"
PLAN_PAGE = "teaching_plan"  # teaching_plan.md in the site's sources
WIDGETS = ROOT / "tools" / "widgets.py"  # the widgets' assets: run as a script by the build
SITE = ROOT / "site"  # conf.py, templates/ and assets/chapter.css
NODE_MODULES = ROOT / "node_modules"
# What the site and slides need from node_modules/ (package.json): {folder: parts}.
# MathJax 3 loads a TeX extension (\\boldsymbol, ...) when a page first uses it.
SITE_ASSETS = {"mathjax3/es5": ["tex-chtml.js", "input/tex/extensions",
                                "output/chtml/fonts/woff-v2"]}
SLIDE_ASSETS = {
    # config/Safe.js: the Safe extension that nbconvert's MathJax address asks for.
    "mathjax": ["MathJax.js", "config/TeX-AMS_CHTML-full.js", "config/Safe.js", "extensions",
                "jax/element", "jax/input/TeX", "jax/output/CommonHTML", "localization/en",
                "fonts/HTML-CSS/TeX/woff"],
    # One theme, "white": its fonts are local (most other themes import Google Fonts).
    "reveal.js": ["dist/reveal.js", "dist/reveal.css", "dist/theme/white.css",
                  "dist/theme/fonts/source-sans-pro", "plugin/notes"],
    "requirejs": ["require.js"],
    "jquery": ["dist/jquery.min.js"],
}
# A local stand-in for Colab's badge image (drawn here, not copied), so pages load nothing
# remote: site/assets/colab-badge.svg, in the site's assets and the decks'.
BADGE_SVG = SITE / "assets" / "colab-badge.svg"
WIDGET_NOTE = "An interactive widget: it works when you run this notebook in Jupyter or Colab."
WIDGET_PLAIN = "An interactive widget: it runs in this page and in Jupyter or Colab."
WIDGETS_DIR = "_static/widgets/"  # in the built site: tools/widgets.py's assets
# A slide whose cells are taller than the slide is shown smaller, down to this share of its
# size (code then still reads at 14 px on the deck's screen); below it, it would be cut off,
# and tests/browser/test_browser.py fails: split it with the slide rules of tools/colab.py.
SLIDE_MIN_ZOOM = 0.75
# nbconvert's reveal template for the decks: site/templates/chapter_slides.html.j2.
SLIDES_TEMPLATE = SITE / "templates" / "chapter_slides.html.j2"
# A solutions notebook named in Markdown ("solutions/01_solutions.ipynb", or its page), and
# a link to one with the clause that brings it in (", and its [worked solutions](...)").
SOLUTIONS_REF = r"solutions/\d+_solutions\.(?:ipynb|html)"
SOLUTIONS_LINK = re.compile(r"(?:,\s*(?:and\s+)?(?:its\s+|the\s+)?)?\[[^\]]*\]\([^)\s]*"
                            + SOLUTIONS_REF + r"[^)]*\)")
SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n\s*\n")  # or a paragraph's end


def execute(path):
    """Return the notebook at ``path`` executed top to bottom in a fresh kernel."""
    nb = book.clear_outputs(book.read(path))
    client = book.notebook_client(nb, path)
    # Its own event loop, closed at the end: execute() may run in a worker thread (--jobs).
    asyncio.run(client.async_execute())
    return book.normalize_outputs(nb)


def _execute_into(path):
    start = time.perf_counter()
    nbformat.write(execute(path), path)
    return time.perf_counter() - start


def cmd_execute(paths, jobs=1):
    """Execute each notebook of ``paths`` in place, ``jobs`` at a time (each in its own
    kernel), printing a line per notebook as it finishes."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for path, seconds in zip(paths, pool.map(_execute_into, paths), strict=True):
            print(f"executed {path} in {seconds:.1f} s", flush=True)


def cmd_check_reproducible(paths):
    """1 when executing any of ``paths`` would change an untagged cell, else 0."""
    changed = 0
    for path in paths:
        stored, fresh = book.read(path), execute(path)
        cells = [i for i, (old, new) in enumerate(zip(stored.cells, fresh.cells, strict=True))
                 if old != new and not book.is_ignored(old)]
        changed += bool(cells)
        print(f"{path}: " + (f"a run changes cells {cells} (tag them {book.IGNORE_TAG!r} if "
                             "their output truly varies, else make it stable)" if cells else
                             "a run changes no cell outside those tagged " + book.IGNORE_TAG),
              flush=True)
    return 1 if changed else 0


# --- the copies, adapted to the web --------------------------------------------------------

def drop_solution_refs(text):
    """``text`` (Markdown) without its links to a solutions notebook (with the clause that
    brings each in) and without the sentences that still name one: the students' site."""
    text = SOLUTIONS_LINK.sub("", text)
    while ref := re.search(SOLUTIONS_REF, text):
        ends = list(SENTENCE_END.finditer(text))
        start = max((m.end() for m in ends if m.end() <= ref.start()), default=0)
        end = next((m for m in ends if m.start() >= ref.end()), None)
        stop = len(text) if end is None else end.end() if end.group() in ".!?" else end.start()
        text = text[:start] + text[stop:]
    return text


def without_solution_refs(nb):
    """A copy of ``nb`` whose Markdown cells are put through ``drop_solution_refs``."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = drop_solution_refs(cell.source)
    return nb


def widget_html(name, base):
    """The HTML that stands where a widget's output was: its placeholder and the script
    that fills it (``base``: the relative address of the assets' ``widgets/`` folder)."""
    if name not in book.WIDGETS:
        raise ValueError(f"name must be a widget of book.WIDGETS {sorted(book.WIDGETS)}, "
                         f"got {name!r}")
    return (f'<div class="chapter-widget" data-widget="{name}"></div>\n'
            f'<script src="{base}widgets.js"></script>')


def widget_outputs(nb, base):
    """Replace the widget outputs of ``nb`` (in place) with their browser version, where the
    cell names one (tools/widgets.py; its assets at the relative address ``base``), else
    with a note."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        name = book.widget_name(cell)
        for output in cell.get("outputs", []):
            if book.WIDGET_MIME in output.get("data", {}):
                output["data"] = {"text/html": widget_html(name, base),
                                  "text/plain": WIDGET_PLAIN} if name else {
                    "text/html": f'<p class="widget-note">{WIDGET_NOTE}</p>',
                    "text/plain": WIDGET_NOTE}
    return nb


def for_site(nb, pub, rel, slides_href):
    """The copy of ``nb`` (at ``rel``) that the site shows."""
    badge = posixpath.relpath("assets/colab-badge.svg", posixpath.dirname(rel))
    nb = widget_outputs(colab.rewrite_links(nb, pub, rel, lambda target: target, badge),
                        posixpath.relpath(WIDGETS_DIR, posixpath.dirname(rel)) + "/")
    for cell in nb.cells:
        if book.SETUP_TAG in book.tags(cell):
            cell.metadata["tags"] = [*book.tags(cell), "remove-cell"]
    if slides_href:
        nb.cells[0].source += f'\n\n<a class="slides-link" href="{slides_href}">Slides</a>'
    return nb


def for_slides(nb, pub, rel, decks):
    """The copy of ``nb`` that its deck shows; ``decks`` maps rel to deck file name."""
    def link(target):  # a deck for a chapter notebook, else the site's page
        if target in decks:
            return posixpath.join("slides", decks[target])
        return target[: -len(".ipynb")] + ".html"

    nb = colab.rewrite_links(nb, pub, rel, link, "assets/colab-badge.svg", at="slides/deck")
    nb = widget_outputs(nb, "../" + WIDGETS_DIR)  # decks are in slides/
    for cell in nb.cells:  # a deck shows the widget itself, not the code that makes it
        if book.widget_name(cell):
            cell.metadata["transient"] = {"remove_source": True}
    # After the navigation links; a lecture deck (no navigation cell), on its title slide.
    last = nb.cells[-1] if book.NAV_TAG in book.tags(nb.cells[-1]) else nb.cells[0]
    last.source += " · [The chapter's site](../index.html)"
    return nb


# --- building ------------------------------------------------------------------------------

def copy_assets(spec, dest):
    """Copy ``{package: parts}`` from node_modules into ``dest``."""
    missing = [f"{pkg}/{part}" for pkg, parts in spec.items() for part in parts
               if not (NODE_MODULES / pkg / part).exists()]
    if missing:
        raise SystemExit(f"node_modules/ lacks {missing[0]}: run `npm ci` (make chapter does)")
    for pkg, parts in spec.items():
        for part in parts:
            # MathJax 3 (npm "mathjax3", an alias of mathjax@3) is served as mathjax/.
            name = "mathjax" if pkg == "mathjax3/es5" else pkg
            src, dst = NODE_MODULES / pkg / part, dest / name / part
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, dst, dirs_exist_ok=True)
            else:
                shutil.copy2(src, dst)
    shutil.copy2(BADGE_SVG, dest / BADGE_SVG.name)


def index_md(title, chapter, solutions, decks, lectures=(), notation="", teaching=True):
    """The site's front page: the chapter, the solutions (if any) and the teaching plan (with
    ``teaching``) as tables of contents, the notation (Markdown, ``notation_md``), the
    slides: the lecture decks ``lectures`` ([(deck file name, title)]) above the deck of each
    notebook."""
    def toctree(caption, docs):
        return (f"```{{toctree}}\n:caption: {caption}\n:maxdepth: 1\n\n"
                + "\n".join(d.removesuffix(".ipynb") for d in docs) + "\n```\n")

    def items(links):
        return "\n".join(f'<li><a href="slides/{href}">{html.escape(text)}</a></li>'
                          for href, text in links)

    slides = items((decks[rel], title) for rel, title in chapter.items())
    if lectures:
        slides = (f"The lectures, one deck each:\n\n<ul>\n{items(lectures)}\n</ul>\n\n"
                  f"A deck for each notebook:\n\n<ul>\n{slides}\n</ul>")
    else:
        slides = f"A reveal.js deck for each notebook:\n\n<ul>\n{slides}\n</ul>"
    return (f"# {title}\n\n"
            "Read the chapter here, run any notebook in Colab with the rocket button at the "
            "top of its page, or download it and run it in Jupyter.\n\n"
            f"{toctree('Chapter', chapter)}\n"
            + (f"{toctree('Solutions', solutions)}\n" if solutions else "")
            + (f"{toctree('Teaching', [PLAN_PAGE])}\n" if teaching else "")
            + (f"{notation.rstrip()}\n\n" if notation else "")
            + f"## Slides\n\n{slides}\n")


def notation_md(nb, pub, rel):
    """The front page's notation section: the cell of ``nb`` (notebook 1, at ``rel``) tagged
    ``book.NOTATION_TAG``, its links pointing at the site's pages, under a ``##`` heading
    (its own first heading, if it has one; the others are made ``###`` or deeper); "" when
    no cell has the tag."""
    cells = [c for c in nb.cells if book.NOTATION_TAG in book.tags(c)]
    if not cells:
        return ""
    one = nbformat.v4.new_notebook(cells=[copy.deepcopy(cells[0])])
    lines = colab.rewrite_links(one, pub, rel, lambda target: target, "", at="index.md") \
        .cells[0].source.strip().split("\n")
    heading = "## Notation"
    if lines and re.match(r"#+ ", lines[0]):
        heading = "## " + lines.pop(0).lstrip("#").strip()
    body = [re.sub(r"^#{1,2} ", "### ", line) for line in lines]
    return "\n".join([heading, *body]).strip() + "\n"


def start_sphinx(src, out, pub):
    """sphinx-build in its own process, warnings as errors (``.wait()`` gives its status)."""
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going", "-E",
               "-D", f"project={pub.title}", "-D", f"html_title={pub.title}",
               "-D", f"html_theme_options.repository_url={pub.repository}",
               "-D", f"html_theme_options.repository_branch={pub.branch}",
               "-d", str(src / ".doctrees"), str(src), str(out)]
    return subprocess.Popen(command)


def write_slides(nb, pub, rel, decks, out, name=None):
    """Write the deck of ``nb`` (at ``rel``) as ``out/slides/`` + ``name`` (default
    ``decks[rel]``), its links rewritten by ``for_slides``, its code without asserts
    (lecture.StripAsserts)."""
    exporter = SlidesExporter(
        extra_template_paths=[str(SLIDES_TEMPLATE.parent)],
        template_file=SLIDES_TEMPLATE.name, reveal_theme="white",
        reveal_number="c/t",
        reveal_url_prefix="assets/reveal.js", require_js_url="assets/requirejs/require.js",
        jquery_url="assets/jquery/dist/jquery.min.js",
        mathjax_url="assets/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe")
    exporter.register_preprocessor(lecture.StripAsserts, enabled=True)
    size = {"width": book.SLIDE_WIDTH, "height": book.SLIDE_HEIGHT, "min_zoom": SLIDE_MIN_ZOOM}
    body, _ = exporter.from_notebook_node(for_slides(nb, pub, rel, decks),
                                          resources={"chapter": size})
    (out / "slides" / (name or decks[rel])).write_text(body, encoding="utf-8")


def lecture_decks(root, pub, solutions=True):
    """{deck name: (its notebook, its title)} of the lecture decks
    (book.LECTURE_DECKS) that have a tagged cell; a deck without one is left out, with a
    printed note. Without ``solutions``, no sentence names a solutions notebook."""
    built = {}
    for name in book.LECTURE_DECKS:
        if not lecture.deck_cells(root, name):
            print(f"no cell is tagged {name!r}: "
                  f"slides/{name}.html is not built", flush=True)
            continue
        nb = lecture.deck_notebook(root, name, pub)
        built[name] = (nb if solutions else without_solution_refs(nb),
                       lecture.deck_title(pub, name))
    return built


def cmd_build(out, execute_notebooks=True, root=ROOT, solutions=True):
    """Build the site and the slides of the repository at ``root`` into ``out``; without
    ``solutions``, the students' site: no solutions page, no reference to one."""
    root, out = pathlib.Path(root), pathlib.Path(out)
    pub = colab.load_publication(root / "pyproject.toml")
    chapter = {book.relpath_of(p, root): p for p in book.chapter_notebooks(root)}
    solution_nbs = {book.relpath_of(p, root): p for p in book.solution_notebooks(root)
                    if solutions}
    if not chapter:
        print(f"no notebooks under {root / book.CHAPTER_DIR}", file=sys.stderr)
        return 1
    decks = {rel: pathlib.Path(rel).stem + ".html" for rel in chapter}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="chapter-site-") as tmp, \
            contextlib.ExitStack() as cleanup:
        src = pathlib.Path(tmp) / "src"
        # site/widgets/ goes into assets/widgets/ with the models (tools/widgets.py), written
        # by a process of its own while the notebooks execute.
        shutil.copytree(SITE, src, ignore=shutil.ignore_patterns("__pycache__", "widgets"))
        # From the stored notebooks, before anything runs: a missing fact fails at once.
        plan = src / f"{PLAN_PAGE}.md"
        run = subprocess.run([sys.executable, str(PLAN), str(root), str(plan)],
                             capture_output=True, text=True)
        if run.returncode:
            print(f"the teaching plan: {run.stderr.strip()}", file=sys.stderr)
            return 1
        if not solutions:  # the instructors' page: its rubrics and quiz answers are answers
            plan.unlink()
        exporting = None
        if any(book.widget_name(cell) for path in chapter.values()
               for cell in book.read(path).cells):
            exporting = subprocess.Popen([sys.executable, str(WIDGETS), str(src / "assets")],
                                         stdout=subprocess.PIPE, text=True)
            cleanup.callback(exporting.kill)  # should the build stop before it is done
        copy_assets(SITE_ASSETS, src / "assets")
        # Built beside src, then moved to out: myst-nb writes a jupyter_execute folder
        # next to the output folder, which must not be left beside out.
        html = pathlib.Path(tmp) / "html"
        (html / "slides").mkdir(parents=True)
        copy_assets(SLIDE_ASSETS, html / "slides" / "assets")
        notebooks = {}
        for rel, path in {**chapter, **solution_nbs}.items():
            start = time.perf_counter()
            nb = execute(path) if execute_notebooks else book.read(path)
            nb = notebooks[rel] = nb if solutions else without_solution_refs(nb)
            slides_href = None
            if rel in decks:
                slides_href = posixpath.relpath(f"slides/{decks[rel]}", posixpath.dirname(rel))
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(for_site(nb, pub, rel, slides_href), src / rel)
            what = "executed" if execute_notebooks else "copied"
            print(f"{what} {rel} in {time.perf_counter() - start:.1f} s", flush=True)
        titles = {rel: book.title_of(notebooks[rel], rel) for rel in chapter}
        lectures = lecture_decks(root, pub, solutions)
        first = next(iter(chapter))
        front = index_md(pub.title, titles, list(solution_nbs), decks,
                         [(f"{name}.html", title) for name, (_, title) in lectures.items()],
                         notation_md(notebooks[first], pub, first), teaching=solutions)
        (src / "index.md").write_text(front, encoding="utf-8")
        if exporting is not None:
            printed, _ = exporting.communicate()
            if exporting.returncode:
                print("tools/widgets.py failed: the widgets' models and data",
                      file=sys.stderr)
                return exporting.returncode
            print(printed.strip(), flush=True)
        sphinx = start_sphinx(src, html, pub)
        for rel in chapter:  # while Sphinx works on the site
            write_slides(notebooks[rel], pub, rel, decks, html)
        for name, (nb, _) in lectures.items():  # its cells' links are those of notebooks/
            write_slides(nb, pub, f"{book.CHAPTER_DIR}/{name}.ipynb", decks, html,
                         name=f"{name}.html")
        status = sphinx.wait()
        if not status:
            for rel, nb in notebooks.items():  # the download button gives the notebook itself
                nbformat.write(nb, html / "_sources" / rel)
            if out.exists():
                shutil.rmtree(out)
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(html, out)
    if status:
        print("sphinx-build failed (warnings count as errors)", file=sys.stderr)
        return status
    print(f"built the site in {time.perf_counter() - started:.1f} s\n"
          f"Open {(out / 'index.html').resolve().as_uri()} in a browser.")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for command in ("execute", "check-reproducible"):
        sub.add_parser(command).add_argument(
            "notebooks", nargs="*", type=pathlib.Path,
            help="default: every chapter and solutions notebook (tools/book.py)")
    sub.choices["execute"].add_argument(
        "--jobs", type=int, default=1, help="notebooks executed at a time (default: 1)")
    build = sub.add_parser("build")
    build.add_argument("--out", type=pathlib.Path, default=ROOT / "build" / "site")
    build.add_argument("--no-execute", action="store_true",
                       help="build from the stored outputs instead of executing each notebook")
    build.add_argument("--solutions", default="1",
                       help="1 (default): with the solutions notebooks' pages; 0: the "
                            "students' site, without them or any reference to them")
    args = parser.parse_args(argv)
    if args.command == "execute":
        if args.jobs < 1:
            parser.error(f"--jobs must be at least 1, got {args.jobs}")
        cmd_execute(args.notebooks or book.all_notebooks(), args.jobs)
        return 0
    if args.command == "check-reproducible":
        return cmd_check_reproducible(args.notebooks or book.all_notebooks())
    if args.solutions not in ("0", "1"):
        parser.error("--solutions (SOLUTIONS of make chapter) must be 0 or 1, "
                     f"got {args.solutions!r}")
    return cmd_build(args.out, not args.no_execute, solutions=args.solutions == "1")


if __name__ == "__main__":
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    sys.exit(main())
