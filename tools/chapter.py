"""Execute the chapter's notebooks and render them into HTML pages and slides.

    python tools/chapter.py execute NOTEBOOK...          # refresh stored outputs in place
    python tools/chapter.py render --out build NOTEBOOK...  # executed copies, pages, slides, index
    python tools/chapter.py render --no-execute ...      # from the stored outputs (fast)
    python tools/chapter.py check-offline build          # list remote resources in build/*.html

``execute`` is the only way outputs get into a tracked notebook: each one is
cleared and run top to bottom in a fresh kernel (the venv's ``python3``), with
the notebook's own folder as working directory. ``render`` never touches the
tracked notebooks: it executes each one once into the output folder and
writes, for chapter notebook ``NN_x.ipynb``:

* ``NN_x.html``, the page, and ``NN_x.slides.html``, a reveal.js talk (cells'
  ``slideshow.slide_type``, stamped by tools/colab.py);
* ``solutions/NN_solutions.html`` for the solutions in ``notebooks/solutions/``
  next to the chapter notebooks: their own pages, linked from the index;
* ``index.html`` linking every page, deck and solutions page in order.

Offline: reveal.js, MathJax, require.js and jQuery come from the npm registry
at build time (package.json, ``npm ci`` into node_modules/) and are copied into
``OUT/assets/``, so the folder works without a network. Without npm, the pages
load them from CDNs and a note says so. Colab links to chapter notebooks
become links to the rendered pages (or decks); the Colab badge keeps linking
to Colab but its image is a local copy.
"""

import argparse
import copy
import html
import os
import pathlib
import posixpath
import re
import shutil
import subprocess
import sys
import time

import jinja2
import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter, SlidesExporter

TIMEOUT = 120  # seconds per cell; no cell of the chapter needs more than a few
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import colab  # noqa: E402  (the sibling module, tools/colab.py)

CHAPTER_TITLE = "Multi-head and cross-attention"
MATHJAX_CONFIG = "?config=TeX-AMS_CHTML-full,Safe"
# What the pages need from node_modules/ (package.json), copied into OUT/assets/.
ASSETS = {
    "mathjax": ["MathJax.js", "config/TeX-AMS_CHTML-full.js", "extensions", "jax/element",
                "jax/input/TeX", "jax/output/CommonHTML", "localization/en",
                "fonts/HTML-CSS/TeX/woff", "LICENSE"],
    # One theme, "white": its fonts are local (most other themes import Google Fonts).
    "reveal.js": ["dist/reveal.js", "dist/reveal.css", "dist/theme/white.css",
                  "dist/theme/fonts/source-sans-pro", "plugin/notes", "LICENSE"],
    "requirejs": ["require.js"],
    "jquery": ["dist/jquery.min.js", "LICENSE.txt"],
}
# A local stand-in for Colab's badge image (drawn here, not copied), so pages load nothing remote.
BADGE_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="117" height="20" role="img" \
aria-label="Open in Colab"><rect width="117" height="20" rx="3" fill="#555"/>\
<rect x="24" width="93" height="20" rx="3" fill="#e37400"/><rect x="24" width="6" height="20" \
fill="#e37400"/><circle cx="8" cy="10" r="4.5" fill="none" stroke="#f9ab00" stroke-width="3"/>\
<circle cx="16" cy="10" r="4.5" fill="none" stroke="#f9ab00" stroke-width="3"/>\
<text x="70" y="14" fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" \
text-anchor="middle">Open in Colab</text></svg>
"""
# The lab and reveal templates, without the mermaid loader (it imports from a CDN).
TEMPLATES = {
    "chapter_page.html.j2": "{%- extends 'lab/index.html.j2' -%}\n"
                            "{% block html_head_js_mermaidjs %}{% endblock %}\n",
    "chapter_slides.html.j2": "{%- extends 'reveal/index.html.j2' -%}\n"
                              "{% block html_head_js_mermaidjs %}{% endblock %}\n",
}
REVEAL_THEME = "white"
CDN_HOSTS = ("cdnjs.cloudflare.com", "unpkg.com", "cdn.jsdelivr.net", "code.jquery.com",
             "ajax.googleapis.com", "fonts.googleapis.com")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = "[an interactive widget: run this notebook in Jupyter or Colab to use it]"


def execute(path):
    """Return the notebook at ``path`` executed top to bottom in a fresh kernel."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            cell.metadata.pop("execution", None)
    client = NotebookClient(
        nb,
        timeout=TIMEOUT,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(pathlib.Path(path).parent)}},
    )
    client.execute()
    # Widget state holds fresh random model ids on every run: storing it would change the
    # notebook each time without changing anything a reader sees. (Not store_widget_state=False:
    # nbclient 0.11 then fails on interact's output widget with a KeyError.)
    nb.metadata.pop("widgets", None)
    return nb


def title_of(nb, fallback):
    """The text of the notebook's first Markdown heading."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return fallback


def cmd_execute(paths):
    for path in paths:
        start = time.perf_counter()
        nb = execute(path)
        nbformat.write(nb, path)
        print(f"executed {path} in {time.perf_counter() - start:.1f} s")


# --- offline assets -----------------------------------------------------------------------

def prepare_assets(out, root=ROOT, npm=None):
    """Copy reveal.js, MathJax, require.js and jQuery into ``out/assets``.

    Installs them with npm first when node_modules/ lacks them. Returns True
    when the assets are local, False (after printing a note) when the pages
    must fall back to CDNs because npm is missing or failed.
    """
    modules = pathlib.Path(root) / "node_modules"
    missing = [f"{pkg}/{part}" for pkg, parts in ASSETS.items() for part in parts
               if not (modules / pkg / part).exists()]
    if missing:
        npm = npm if npm is not None else shutil.which("npm")
        if not npm:
            print("note: npm not found, so the pages load reveal.js and MathJax from CDNs "
                  "and need a network (install node and npm for offline pages)")
            return False
        lock = (pathlib.Path(root) / "package-lock.json").exists()
        command = [npm, "ci" if lock else "install", "--no-audit", "--no-fund",
                   "--loglevel=error"]
        print("fetching reveal.js and MathJax:", " ".join(command[1:]))
        done = subprocess.run(command, cwd=root, check=False)
        if done.returncode != 0:
            print(f"note: `npm {command[1]}` failed, so the pages load reveal.js and MathJax "
                  "from CDNs and need a network")
            return False
    assets = pathlib.Path(out) / "assets"
    for pkg, parts in ASSETS.items():
        for part in parts:
            src, dst = modules / pkg / part, assets / pkg / part
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, dst, dirs_exist_ok=True)
            else:
                shutil.copy2(src, dst)
    (assets / "colab-badge.svg").write_text(BADGE_SVG, encoding="utf-8")
    return True


def exporter_urls(page, out, local):
    """Asset URLs for the page ``page`` (inside ``out``): relative paths, or CDNs."""
    if not local:
        return {}, {}
    up = pathlib.PurePosixPath(os.path.relpath(out, pathlib.Path(page).parent).replace(os.sep, "/"))
    a = up / "assets"
    page_urls = {"mathjax_url": f"{a}/mathjax/MathJax.js{MATHJAX_CONFIG}",
                 "require_js_url": f"{a}/requirejs/require.js",
                 "jquery_url": f"{a}/jquery/dist/jquery.min.js"}
    return page_urls, {"reveal_url_prefix": f"{a}/reveal.js"}


# --- links --------------------------------------------------------------------------------

def rewrite_links(nb, pub, source, targets, badge_src, index_href, deck=False):
    """Point the notebook's links at rendered files (in a copy of ``nb``).

    ``source`` is the notebook's repository path (``notebooks/01_x.ipynb``);
    ``targets`` maps repository paths of notebooks to their rendered pages,
    relative to the output folder. Colab links and relative ``.ipynb`` links to
    those notebooks become relative links to the pages (to the decks when
    ``deck`` and the target has one); other relative ``.ipynb`` links become
    ``.html``. The badge keeps its Colab link but shows ``badge_src``; the
    navigation cell gains a link to the index.
    """
    nb = copy.deepcopy(nb)
    here_dir = posixpath.dirname(targets[source])

    def local(rel):
        target = targets[rel]
        if deck and not target.startswith("solutions/"):
            target = target[: -len(".html")] + ".slides.html"
        return posixpath.relpath(target, here_dir or ".")

    colab_re = re.compile(r"\]\(" + re.escape(pub.colab_url("")) + r"([^)\s]+\.ipynb)\)")
    rel_re = re.compile(r"\]\((?![a-z]+:|/|#)([^)\s]+)\.ipynb(#[^)\s]*)?\)")

    def colab_sub(m):
        return f"]({local(m.group(1))})" if m.group(1) in targets else m.group(0)

    def rel_sub(m):
        rel = posixpath.normpath(posixpath.join(posixpath.dirname(source), m.group(1) + ".ipynb"))
        anchor = m.group(2) or ""
        if rel in targets:
            return f"]({local(rel)}{anchor})"
        return f"]({m.group(1)}.html{anchor})"

    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        lines = []
        for line in cell.source.split("\n"):
            if colab.BADGE_RE.match(line.strip()):
                lines.append(line.replace(colab.BADGE_IMAGE, badge_src))
            else:
                lines.append(rel_re.sub(rel_sub, colab_re.sub(colab_sub, line)))
        cell.source = "\n".join(lines)
        if colab.NAV_TAG in cell.get("metadata", {}).get("tags", []):
            cell.source += f" · [Chapter index]({index_href})"
    return nb


def without_widgets(nb):
    """A copy of ``nb`` whose widget outputs are a short note (their JS comes from a CDN)."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if WIDGET_MIME in output.get("data", {}):
                output["data"] = {"text/plain": WIDGET_NOTE}
    return nb


REMOTE_PATTERNS = [
    re.compile(r"<(?:script|img|iframe|source|embed|video|audio)\b[^>]*\bsrc\s*=\s*[\"']?"
               r"((?:https?:)?//[^\"'\s>]+)", re.I),
    re.compile(r"<link\b[^>]*\bhref\s*=\s*[\"']?((?:https?:)?//[^\"'\s>]+)", re.I),
    re.compile(r"url\(\s*[\"']?((?:https?:)?//[^\"')\s]+)", re.I),
    re.compile(r"@import\s+[\"']((?:https?:)?//[^\"']+)", re.I),
    re.compile(r"\bimport\s*\(?\s*[\"']((?:https?:)?//[^\"']+)", re.I),
    re.compile(r"\bfrom\s+[\"']((?:https?:)?//[^\"']+)", re.I),
]


def remote_resources(text):
    """The remote addresses an HTML text would load: scripts, styles, images, fonts, modules.

    Also any mention of a CDN host (e.g. in a script's string). Plain links
    (``<a href>``) are not loads and are allowed.
    """
    found = [m.group(1) for pattern in REMOTE_PATTERNS for m in pattern.finditer(text)]
    for host in CDN_HOSTS:
        for m in re.finditer(re.escape(host), text):
            start = max(text.rfind(c, 0, m.start()) for c in " \n\"'(=") + 1
            end = re.compile(r"[\s\"')]|$").search(text, m.end()).start()
            found.append(text[start:end])
    return sorted(set(found))


def check_offline(out):
    """{file: remote addresses} for every page and style sheet under ``out`` that loads any.

    The copied packages' JavaScript is not searched (it names addresses it never loads).
    """
    report = {}
    out = pathlib.Path(out)
    for path in sorted([*out.rglob("*.html"), *out.rglob("*.css")]):
        if path.suffix == ".html" and "assets" in path.relative_to(out).parts:
            continue  # the copied packages' own demo pages
        found = remote_resources(path.read_text(encoding="utf-8", errors="replace"))
        if found:
            report[str(path)] = found
    return report


# --- render -------------------------------------------------------------------------------

def find_solutions(paths):
    """The solutions notebooks next to the chapter notebooks ``paths`` (``solutions/*.ipynb``)."""
    folders = sorted({pathlib.Path(p).resolve().parent / "solutions" for p in paths})
    return [p for folder in folders for p in sorted(folder.glob("*.ipynb"))]


def make_exporters(page_urls, slide_urls):
    loader = jinja2.DictLoader(TEMPLATES)
    page = HTMLExporter(extra_loaders=[loader], template_file="chapter_page.html.j2",
                        **page_urls)
    slides = SlidesExporter(extra_loaders=[loader], template_file="chapter_slides.html.j2",
                            reveal_theme=REVEAL_THEME, reveal_scroll=True,
                            reveal_number="c/t", **page_urls, **slide_urls)
    return page, slides


def index_html(entries, solutions, local):
    def link(href, text):
        return f'<a href="{html.escape(href)}">{html.escape(text)}</a>'

    items = []
    for entry in entries:
        extra = [link(entry["slides"], "slides")]
        for sol in solutions.get(entry["number"], []):
            extra.append(link(sol["page"], "solutions"))
        items.append(f"  <li>{link(entry['page'], entry['title'])} ({', '.join(extra)})</li>")
    orphans = [s for number, sols in solutions.items() for s in sols
               if number not in {e["number"] for e in entries}]
    rest = ""
    if orphans:
        rest = "<h2>Solutions</h2>\n<ul>\n" + "\n".join(
            f"  <li>{link(s['page'], s['title'])}</li>" for s in orphans) + "\n</ul>\n"
    note = "" if local else ("<p><em>Built without npm: formulas and slides need a network "
                             "connection (reveal.js and MathJax come from CDNs).</em></p>\n")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\">"
        f"<title>{CHAPTER_TITLE}</title>\n<style>body {{ font-family: sans-serif; "
        "max-width: 46em; margin: 2em auto; font-size: 1.2em; line-height: 1.6; }</style>"
        f"</head>\n<body>\n<h1>{CHAPTER_TITLE}</h1>\n{note}<ol>\n" + "\n".join(items)
        + f"\n</ol>\n{rest}</body>\n</html>\n"
    )


def cmd_render(paths, out, execute_notebooks=True, root=None, npm=None):
    """Render the chapter notebooks ``paths`` and their solutions into ``out``."""
    paths = [pathlib.Path(p).resolve() for p in paths]
    root = pathlib.Path(root) if root else ROOT
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    local = prepare_assets(out, ROOT, npm=npm)
    pub = colab.load_publication(root / "pyproject.toml")
    solutions = find_solutions(paths)

    def relpath(path):
        try:
            return colab.relpath_of(path, root)
        except colab.StampError:
            return f"notebooks/{path.name}"

    targets = {relpath(p): p.with_suffix(".html").name for p in paths}
    targets.update({relpath(p): f"solutions/{p.with_suffix('.html').name}" for p in solutions})

    entries, sols = [], {}
    for path in paths + solutions:
        start = time.perf_counter()
        nb = execute(path) if execute_notebooks else nbformat.read(path, as_version=4)
        rel = relpath(path)
        page = out / targets[rel]
        page.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, page.with_suffix(".ipynb"))
        view = without_widgets(nb)
        page_urls, slide_urls = exporter_urls(page, out, local)
        page_exporter, slides_exporter = make_exporters(page_urls, slide_urls)
        up = os.path.relpath(out, page.parent).replace(os.sep, "/")
        badge = f"{up}/assets/colab-badge.svg" if local else colab.BADGE_IMAGE
        index_href = f"{up}/index.html"
        body, _ = page_exporter.from_notebook_node(
            rewrite_links(view, pub, rel, targets, badge, index_href))
        page.write_text(body, encoding="utf-8")
        title = title_of(nb, path.stem)
        entry = {"page": targets[rel], "title": title, "number": colab.chapter_number(path)}
        if path in solutions:
            sols.setdefault(entry["number"], []).append(entry)
        else:
            deck = page.with_name(page.stem + ".slides.html")
            body, _ = slides_exporter.from_notebook_node(
                rewrite_links(view, pub, rel, targets, badge, index_href, deck=True))
            deck.write_text(body, encoding="utf-8")
            entry["slides"] = deck.name
            entries.append(entry)
        print(f"rendered {page} in {time.perf_counter() - start:.1f} s")
    index = out / "index.html"
    index.write_text(index_html(entries, sols, local), encoding="utf-8")
    if local:
        remote = check_offline(out)
        if remote:
            for page, found in remote.items():
                print(f"error: {page} loads remote resources: {found}", file=sys.stderr)
            return 1
    print(f"\nOpen {index.resolve()} in a browser.")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("execute").add_argument(
        "notebooks", nargs="*",
        help="default: every chapter and solutions notebook under notebooks/")
    render = sub.add_parser("render")
    render.add_argument("--out", type=pathlib.Path, default=pathlib.Path("build"))
    render.add_argument("--no-execute", action="store_true",
                        help="render the stored outputs instead of executing each notebook")
    render.add_argument("--root", type=pathlib.Path, default=ROOT,
                        help="the repository whose pyproject.toml names it (default: this one)")
    render.add_argument("notebooks", nargs="*",
                        help="default: every chapter notebook under notebooks/ (the solutions "
                             "are found beside them)")
    offline = sub.add_parser("check-offline")
    offline.add_argument("out", type=pathlib.Path)
    args = parser.parse_args(argv)
    if args.command == "check-offline":
        report = check_offline(args.out)
        for page, found in report.items():
            print(f"{page}: {found}")
        return 1 if report else 0
    if not args.notebooks:
        # No shell globbing needed (Windows): take the chapter as the Makefile does.
        chapter = sorted(str(p) for p in (ROOT / "notebooks").glob("*.ipynb"))
        solutions = sorted(str(p) for p in (ROOT / "notebooks" / "solutions").glob("*.ipynb"))
        args.notebooks = chapter + solutions if args.command == "execute" else chapter
    if not args.notebooks:
        print("no notebooks found under notebooks/", file=sys.stderr)
        return 0
    if args.command == "execute":
        cmd_execute(args.notebooks)
        return 0
    return cmd_render(args.notebooks, args.out, not args.no_execute, args.root)


if __name__ == "__main__":
    sys.exit(main())
