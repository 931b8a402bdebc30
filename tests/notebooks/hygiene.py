"""Checks of a stored notebook's hygiene (CONTRIBUTING.md and issue 6), one function each.

Each ``check_*(nb, name)`` takes a notebook node and the name to report it under and
returns a list of messages (empty when the notebook passes), each naming the notebook and
the offending cell as ``cell N`` (0-based index, as nbformat and JupyterLab's cell list
count) with the cell's first line. A check over the whole chapter at once (one home for
the notation table, one cell per live tag) is a ``check_chapter_*(notebooks)`` that takes
{name: notebook node} and reports the same way. tests/notebooks/test_notebooks.py runs them
over every notebook; tests/tools/test_chapter_tools.py shows each one failing on a
deliberately broken notebook. What a notebook is (tags, badge, output texts) comes from
tools/book.py.
"""

import ast
import copy
import importlib
import re
import warnings

import nbformat

import book

MAX_BYTES = 1_000_000
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:root|home|tmp|work)(?:/|\b)")


def where(name, i, cell):
    first = cell.source.strip().splitlines()[0] if cell.source.strip() else ""
    return f"{name}: cell {i} ({first[:50]!r})"


def check_valid(nb, name):
    try:
        with warnings.catch_warnings():  # validate() repairs ids (with a warning): ours below
            warnings.simplefilter("ignore")
            nbformat.validate(copy.deepcopy(nb))
    except nbformat.ValidationError as e:
        return [f"{name}: not valid nbformat: {str(e).splitlines()[0]}"]
    if (nb.nbformat, nb.nbformat_minor) < (4, 5):
        return [f"{name}: nbformat {nb.nbformat}.{nb.nbformat_minor} has no cell ids; "
                "save it with nbformat >= 4.5"]
    problems = []
    seen = set()
    for i, cell in enumerate(nb.cells):
        if not cell.get("id"):
            problems.append(f"{where(name, i, cell)}: no cell id")
        elif cell.id in seen:
            problems.append(f"{where(name, i, cell)}: duplicate cell id {cell.id!r}")
        seen.add(cell.get("id"))
    return problems


def check_execution_counts(nb, name):
    problems = []
    expected = 0
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        expected += 1
        if cell.execution_count != expected:
            problems.append(
                f"{where(name, i, cell)}: execution count {cell.execution_count}, expected "
                f"{expected} (run the notebook top to bottom: make execute NB={name})")
            break
        for out in cell.outputs:
            if out.output_type == "execute_result" and out.execution_count != expected:
                problems.append(f"{where(name, i, cell)}: an output from execution "
                                f"{out.execution_count}, not {expected}")
    return problems


def check_errors(nb, name):
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        errors = [o for o in cell.outputs if o.output_type == "error"]
        meant = book.RAISES_TAG in book.tags(cell)
        if errors and not meant:
            problems.append(f"{where(name, i, cell)}: stored error "
                            f"{errors[0].ename}: {errors[0].evalue}")
        if meant and not errors:
            problems.append(
                f"{where(name, i, cell)}: tagged {book.RAISES_TAG!r} but stores no error")
    return problems


def check_streams_and_paths(nb, name):
    """Nothing on stderr, no machine paths, except in cells tagged ``nbval-ignore-output``.

    nbval's comment markers (``# NBVAL_IGNORE_OUTPUT`` and the like) are refused: they put
    test machinery in the students' view, and a cell with both a comment and a tag makes
    nbval warn about overlapping options. Use the cell tag instead.
    """
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if re.search(r"#\s*NBVAL_", cell.source):
            problems.append(f"{where(name, i, cell)}: an nbval comment marker; use the cell tag "
                            f"{book.IGNORE_TAG!r} instead")
        if book.is_ignored(cell):
            continue
        for out in cell.outputs:
            if out.output_type == "stream" and out.name == "stderr":
                problems.append(f"{where(name, i, cell)}: writes to stderr: {out.text[:120]!r}")
        for text in book.output_texts(cell):
            m = MACHINE_PATH.search(text)
            if m:
                line = text[text.rfind("\n", 0, m.start()) + 1:][:120]
                problems.append(f"{where(name, i, cell)}: machine path in an output: {line!r}")
                break
    return problems


def check_no_svg(nb, name):
    return [f"{where(name, i, cell)}: SVG output (figures must be PNG)"
            for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
            if any("image/svg+xml" in o.get("data", {}) for o in cell.outputs)]


def check_size(size, name, limit=MAX_BYTES):
    if size >= limit:
        return [f"{name}: {size} bytes, must be under {limit} (smaller or fewer figures)"]
    return []


def check_kernelspec(nb, name):
    kernel = nb.metadata.get("kernelspec", {}).get("name")
    if kernel != "python3":
        return [f"{name}: kernelspec name is {kernel!r}, must be 'python3'"]
    return []


MAX_LINE = 79  # characters; notebooks/ruff.toml holds the code to it as well
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def printed_lines(output):
    """The lines a reader sees of an output shown as text: a stream, or the text/plain of
    a result with no richer form (a figure's or widget's text/plain never shows)."""
    if output.output_type == "stream":
        text = output.text
    elif output.output_type in ("execute_result", "display_data"):
        data = output.get("data", {})
        if set(data) - {"text/plain"}:
            return []
        text = data.get("text/plain", "")
    else:  # an error's traceback: only in cells meant to raise
        return []
    return ANSI.sub("", "".join(text)).expandtabs().splitlines()


def check_line_length(nb, name, limit=MAX_LINE):
    """Every line of code and every printed line fits in ``limit`` characters: the site's
    text column at 1280 px and a slide show that many without scrolling or wrapping."""
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        long_code = [line for line in cell.source.splitlines() if len(line) > limit]
        long_out = [line for out in cell.outputs for line in printed_lines(out)
                    if len(line) > limit]
        for what, lines in (("code", long_code), ("printed", long_out)):
            if lines:
                problems.append(
                    f"{where(name, i, cell)}: {len(lines)} {what} line(s) longer than {limit} "
                    f"characters, the longest {max(map(len, lines))}: "
                    f"{max(lines, key=len)[:limit + 10]!r}")
    return problems


def check_title(nb, name):
    if not nb.cells or nb.cells[0].cell_type != "markdown":
        return [f"{name}: the first cell must be the Markdown title cell"]
    lines = [line.strip() for line in nb.cells[0].source.strip().splitlines()]
    problems = []
    if not lines or not lines[0].startswith("# "):
        problems.append(f"{name}: the title cell must start with '# Title'")
    if not any(is_badge(line) for line in lines):
        problems.append(f"{name}: the title cell has no Open-in-Colab badge line "
                        "(run `python tools/colab.py stamp`)")
    return problems


def is_badge(line):
    """A badge line with Colab's image, linking to a notebook on Colab."""
    m = book.BADGE_RE.match(line)
    return bool(m and m.group("image") == book.BADGE_IMAGE
                and m.group("target").startswith(book.COLAB_PREFIX))


def unreproducible_outputs(nb):
    """(cell index, what) for every output that ``normalize_outputs`` would change."""
    found = []
    if "widgets" in nb.metadata:
        found.append((None, "widget state in the notebook's metadata"))
    for i, cell in enumerate(nb.cells):
        previous = None
        for out in cell.get("outputs", []):
            if (out.output_type == "stream" and previous is not None
                    and previous.output_type == "stream" and previous.name == out.name):
                found.append((i, f"{out.name} split into several outputs"))
            if "model_id" in out.get("data", {}).get(book.WIDGET_MIME, {}):
                found.append((i, "a widget output with a model id"))
            previous = out
    return found


def check_reproducible(nb, name):
    """Outputs as `make execute` stores them: streams merged, widgets without model ids."""
    return [f"{name}: {what} (re-run `make execute NB={name}`)" if i is None else
            f"{where(name, i, nb.cells[i])}: {what} (re-run `make execute NB={name}`)"
            for i, what in unreproducible_outputs(nb)]


def check_figures_have_alt_text(nb, name):
    """Every figure says what it shows: cell metadata ``mystnb.image.alt`` (see CONTRIBUTING)."""
    return [f"{where(name, i, cell)}: a figure without alt text; add "
            '{"mystnb": {"image": {"alt": "what the figure shows"}}} to the cell\'s metadata'
            for i, cell in enumerate(nb.cells)
            if book.has_figure(cell) and not str(  # the metadata myst-nb reads
                cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")).strip()]


def headings(nb):
    """(cell index, text after the heading) of every ``## `` heading line in Markdown cells."""
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown" or book.NAV_TAG in book.tags(cell):
            continue
        for m in re.finditer(r"(?m)^## .*$", cell.source):
            found.append((i, m.group(0).strip(), cell.source[m.end():]))
    return found


LAST_SECTIONS = ["## Recap", "## Exercises", "## References"]
# The optional section of what a lecture skips (measurement, robustness, numerical detail),
# just before Recap; book.lesson_words leaves it out of the lesson's words.
GOING_DEEPER = "## Going deeper"


def check_structure(nb, name):
    """A chapter notebook: what you will learn, the lesson, Going deeper (optional), Recap,
    Exercises (2 to 4), References."""
    problems = []
    if len(nb.cells) < 2 or not (nb.cells[1].cell_type == "markdown" and
                                 nb.cells[1].source.strip().startswith("## What you will learn")):
        problems.append(f"{name}: cell 1 must be Markdown starting with '## What you will learn'")
    sections = headings(nb)
    last = [text for _, text, _ in sections[-3:]]
    if last != LAST_SECTIONS:
        problems.append(f"{name}: the last three sections must be "
                        f"{', '.join(repr(s) for s in LAST_SECTIONS)}, found {last}")
        return problems
    deeper = [k for k, (_, text, _) in enumerate(sections) if text.startswith(GOING_DEEPER)]
    if deeper and deeper != [len(sections) - 4]:
        problems.append(
            f"{name}: '{GOING_DEEPER}' must be one section, just before '## Recap' (the last "
            f"four sections then {GOING_DEEPER!r}, {', '.join(repr(s) for s in LAST_SECTIONS)}),"
            f" found {[text for _, text, _ in sections[-4:]]}"
            + (f" and {len(deeper)} of it" if len(deeper) > 1 else ""))
    (start, _, rest), (stop, _, _) = sections[-2], sections[-1]
    # The numbered items between '## Exercises' and '## References', wherever the cells split.
    texts = [rest.split("\n## References")[0]] + [
        cell.source for cell in nb.cells[start + 1:stop + 1]
        if cell.cell_type == "markdown" and book.NAV_TAG not in book.tags(cell)]
    texts[1:] = [t.split("## References")[0] for t in texts[1:]]
    items = sum(len(re.findall(r"(?m)^\d+\.\s", t)) for t in texts)
    if not 2 <= items <= 4:
        problems.append(f"{name}: '## Exercises' has {items} numbered exercises, expected 2 to 4")
    return problems


# --- slides: headings start cells, notes are tagged -------------------------------------

SUBHEADING = re.compile(r"^#{2,3} ")  # a '## ' or '### ' heading line
FENCE = re.compile(r"^\s*(```|~~~)")


def markdown_lines(cell):
    """(line number in the cell, line) of a Markdown cell's lines outside fenced code."""
    fenced = False
    for k, line in enumerate(cell.source.splitlines()):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            yield k, line


def check_headings_start_cells(nb, name):
    """Every '## ' and '### ' heading is the first line of its Markdown cell: the slides
    (tools/colab.py stamp) start a slide or subslide at a cell, so a heading in the middle
    of a cell starts none. Split the cell at the heading (the new cell gets a new id)."""
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown" or book.NAV_TAG in book.tags(cell):
            continue
        first = next((k for k, line in enumerate(cell.source.splitlines()) if line.strip()),
                     None)
        mid = [line.strip() for k, line in markdown_lines(cell)
               if k != first and SUBHEADING.match(line)]
        if mid:
            problems.append(f"{where(name, i, cell)}: heading(s) in the middle of the cell, "
                            f"where no slide starts: {', '.join(repr(h) for h in mid)} "
                            "(split the cell so that each heading starts one)")
    return problems


def check_notes_tagged(nb, name):
    """Speaker notes are the cells their authors tag ``notes`` (book.NOTES_TAG), Markdown:
    a cell stored with slide type "notes" carries the tag, and the tag is on Markdown."""
    problems = []
    for i, cell in enumerate(nb.cells):
        tagged = book.NOTES_TAG in book.tags(cell)
        stored = cell.get("metadata", {}).get("slideshow", {}).get("slide_type")
        if tagged and cell.cell_type != "markdown":
            problems.append(f"{where(name, i, cell)}: tagged {book.NOTES_TAG!r} but a "
                            f"{cell.cell_type} cell; speaker notes are Markdown")
        elif stored == "notes" and not tagged:
            problems.append(f"{where(name, i, cell)}: slide type 'notes' without the tag "
                            f"{book.NOTES_TAG!r}: lesson prose belongs on the slides (split "
                            "it if it is too tall), or tag it if it is truly speaker notes; "
                            "then run `python tools/colab.py stamp`")
    return problems


# --- what a student reads is the lesson --------------------------------------------------

# Words of the test machinery that have no place in what a student reads (any Markdown
# cell, chapter or solutions): (pattern, what it is). Say what holds instead ("at every
# seed", "a trained model's last digits"); the machinery is CONTRIBUTING.md's business.
CI_WORDS = [
    (r"(?i)\bseed[- ]shifts?\b|\bshifted seeds?\b", "seed shifts"),
    (r"(?<![\w\\{])K\s*=\s*[\"']?\d", "the seed shift K"),
    (r"(?i)\btolerances?\b", "tolerances"),
    (r"(?i)\bround-?off pass(?:es)?\b", "the round-off pass"),
    (r"(?i)\bnbval\b", "nbval"),
    (r"\bCI\b", "CI"),
    (r"\bmake (?:robust|test-roundoff|test|execute)\b", "a make target"),
    (r"(?i)\btest-roundoff\b", "test-roundoff"),
    (r"ATEN_CPU_CAPABILITY", "ATEN_CPU_CAPABILITY"),
]
# Issue and pull-request threads: a source for ``## References``, not an argument.
THREAD_WORDS = [
    (r"(?i)\bissues? #?\d+", "an issue thread"),
    (r"(?i)\bpull requests?\b|\bPR #?\d+", "a pull request"),
    (r"(?i)/(?:issues|pull)/\d+", "a link to an issue or pull request"),
]
REFERENCES_HEADING = "## References"


def _prose_parts(nb):
    """(cell index, cell, its Markdown outside References, its Markdown inside) for every
    Markdown cell but the navigation cell; a section runs to the next '## ' heading."""
    parts, in_refs = [], False
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown" or book.NAV_TAG in book.tags(cell):
            continue
        outside, inside = [], []
        for line in cell.source.splitlines():
            if line.startswith("## "):
                in_refs = line.strip().startswith(REFERENCES_HEADING)
            (inside if in_refs else outside).append(line)
        parts.append((i, cell, "\n".join(outside), "\n".join(inside)))
    return parts


def check_student_prose(nb, name):
    """No test machinery in the Markdown (CI_WORDS), and issue or pull-request threads
    (THREAD_WORDS) only in the References section."""
    problems = []
    for i, cell, outside, inside in _prose_parts(nb):
        found = [(what, m.group(0)) for pattern, what in CI_WORDS
                 for m in re.finditer(pattern, outside + "\n" + inside)]
        found += [(what, m.group(0)) for pattern, what in THREAD_WORDS
                  for m in re.finditer(pattern, outside)]
        if found:
            words = ", ".join(f"{what} ({text!r})" for what, text in dict.fromkeys(found))
            problems.append(
                f"{where(name, i, cell)}: test machinery in what a student reads: {words} "
                "(say what holds, in the lesson's words; cite a thread in '## References')")
    return problems


def check_no_forward_reference(nb, name):
    """A chapter notebook uses nothing a later one builds: the names its facts'
    ``later_names`` hold ({name: where it is built}), in code or Markdown."""
    banned = book.facts(nb).get("later_names", {})
    problems = []
    for i, cell in enumerate(nb.cells):
        if book.NAV_TAG in book.tags(cell) or cell.cell_type not in ("code", "markdown"):
            continue
        used = [word for word in banned if re.search(rf"\b{re.escape(word)}\b", cell.source)]
        problems += [f"{where(name, i, cell)}: uses {word} before it is built ({banned[word]})"
                     for word in used]
    return problems


def hint_names(name):
    """The globals the book's hints of the notebook's exercises (``d2lutil.exercises.nbNN``)
    name: a span in backticks that is a name, or starts with a call of one."""
    number = re.match(r"(\d\d)_", name.rsplit("/", 1)[-1])
    try:
        module = importlib.import_module(f"d2lutil.exercises.nb{number.group(1)}")
    except (AttributeError, ModuleNotFoundError):
        return set()
    hints = [h for ex in map(vars(module).get, module.__all__) for h in ex.built(0)[1]]
    spans = [s.strip() for h in hints for s in re.findall(r"`([^`]+)`", h)]
    return {m[1] for m in (re.fullmatch(r"([A-Za-z_]\w*)(\(.*)?", s) for s in spans) if m}


def bound_names(source):
    """{name: "loop" or "set"}: the globals a cell binds (a for loop's target: "loop")."""
    found = {}
    def visit(node, kind):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.setdefault(node.name, "set")
            return
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp)):
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                found.setdefault((alias.asname or alias.name).split(".")[0], "set")
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.setdefault(node.id, kind)
        for child in ast.iter_child_nodes(node):
            loop = isinstance(node, (ast.For, ast.AsyncFor)) and child is node.target
            visit(child, "loop" if loop else kind)
    try:
        visit(ast.parse(source), "set")
    except SyntaxError:  # a cell magic: no Python to read
        pass
    return found


def check_hint_names_kept(nb, name, names=None):
    """No lesson cell (before '## Exercises') rebinds, as a for loop's variable, a global
    that an exercise's hint names (``hint_names``) and an earlier cell set: after a full
    run, the name still holds what the hint means."""
    names = hint_names(name) if names is None else names
    home, problems = {}, []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and cell.source.startswith("## Exercises"):
            break
        for n, kind in bound_names(cell.source if cell.cell_type == "code" else "").items():
            if n in home and kind == "loop":
                problems.append(f"{where(name, i, cell)}: its loop rebinds `{n}`, which an "
                                f"exercise's hint names (set in cell {home[n]}): rename it")
            elif n in names and kind == "set":
                home.setdefault(n, i)
    return problems

def check_live_tags(nb, name):
    """A live tag (book.LIVE_PREFIX + its purpose) is on a code cell, once per notebook
    (once per chapter: ``check_chapter_live_tags``)."""
    problems, seen = [], set()
    for i, cell in enumerate(nb.cells):
        for tag in book.tags(cell):
            if not tag.startswith(book.LIVE_PREFIX):
                continue
            if cell.cell_type != "code":
                problems.append(f"{where(name, i, cell)}: live tag {tag!r} on a "
                                f"{cell.cell_type} cell; a live cell is code to run in class")
            if tag in seen:
                problems.append(f"{where(name, i, cell)}: live tag {tag!r} on a second cell")
            seen.add(tag)
    return problems


# --- checks over the whole chapter: {name: notebook} -------------------------------------

def tagged_cells(notebooks, tag):
    """(name, cell index, cell) of every cell tagged ``tag`` in ``notebooks``."""
    return [(name, i, cell) for name, nb in notebooks.items()
            for i, cell in enumerate(nb.cells) if tag in book.tags(cell)]


MARKDOWN_TABLE = re.compile(r"(?m)^\s*\|.*\|\s*\n\s*\|(?:\s*:?-+:?\s*\|)+\s*$")


def check_chapter_notation(notebooks, home="01"):
    """The chapter's notation table has one home: exactly one cell of all the notebooks
    (chapter and solutions) is tagged ``notation`` (book.NOTATION_TAG), a Markdown cell of
    chapter notebook ``home`` holding a Markdown table. The site renders it from there."""
    tag = book.NOTATION_TAG
    found = tagged_cells(notebooks, tag)
    if len(found) != 1:
        return [f"the chapter has {len(found)} cells tagged {tag!r}, must have exactly one "
                f"(in notebook {home}): "
                + (", ".join(where(name, i, cell) for name, i, cell in found) or "none")]
    name, i, cell = found[0]
    problems = []
    if book.number(name) != home or "solutions" in name.split("/")[:-1]:
        problems.append(f"{where(name, i, cell)}: the notation table lives in chapter "
                        f"notebook {home}, not here")
    if cell.cell_type != "markdown" or not MARKDOWN_TABLE.search(cell.source):
        problems.append(f"{where(name, i, cell)}: tagged {tag!r} but not a Markdown cell "
                        "holding a table (a header row, then '|---|---|')")
    return problems


def check_chapter_live_tags(notebooks):
    """Each live tag (book.LIVE_PREFIX + its purpose) names exactly one cell of the chapter
    (chapter and solutions): the teaching plan names the cell by it."""
    cells = {}
    for name, nb in notebooks.items():
        for i, cell in enumerate(nb.cells):
            for tag in book.tags(cell):
                if tag.startswith(book.LIVE_PREFIX):
                    cells.setdefault(tag, []).append(where(name, i, cell))
    return [f"live tag {tag!r} is on {len(at)} cells, must be on one: {'; '.join(at)}"
            for tag, at in cells.items() if len(at) > 1]


# --- the prose is true to the outputs --------------------------------------------------

NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+(?:[eE][-+]?\d+)?|\d{4,})(?![\w]|[.,]\d)")


# The year of a citation in prose, in one of three forms: "Vaswani et al. 2017" or
# "Vaswani et al. (2017)"; "Shazeer (2019)"; "(Shazeer, 2019)" or "(Michel, Levy and
# Neubig, 2019)". A bare "Shazeer 2019" is not read as a citation: a capitalised word
# before a number ("At 2048 tokens") is far more often prose.
_YEAR = r"(?P<year>(?:19[5-9]\d|20[0-3]\d)[a-z]?)(?![\d.,]\d)"  # 1950 to 2039
CITATION_YEARS = [re.compile(rf"et al\.,?\s*\(?{_YEAR}"),
                  re.compile(rf"[A-Z][\w'-]+\s+\({_YEAR}\)"),
                  re.compile(rf"\([^()]*[A-Z][\w'-]+,?\s+{_YEAR}(?=[;)])")]


def _drop_citation_years(text):
    for pattern in CITATION_YEARS:
        text = pattern.sub(lambda m: m.string[m.start():m.start("year")], text)
    return text


REFERENCES = re.compile(r"(?ms)^## References\b.*")


def prose_numbers(markdown):
    """The numbers the rule covers in a Markdown text: decimals and integers of 4+ digits.

    Link targets, bare URLs, HTML tags and version strings (1.0.3) are not prose and are
    dropped, and so are the years of citations ("Vaswani et al. (2017)") and the whole
    ``## References`` section (years, volumes, arXiv numbers). LaTeX counts: ``1{,}024``
    and ``1\\,024`` are read as ``1,024``.
    """
    text = REFERENCES.sub(" ", markdown)
    text = _drop_citation_years(text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"(\d)(?:\{,\}|\\,)(?=\d{3})", r"\1,", text)
    text = re.sub(r"(?<![\w.])\d+(?:\.\d+){2,}(?![\w.])", " ", text)
    return NUMBER.findall(text)


def number_in(number, texts):
    forms = {number, number.replace(",", "")}
    for form in forms:
        pattern = re.compile(r"(?<![\d.])" + re.escape(form) + r"(?![\d]|[.,]\d)")
        if any(pattern.search(text) for text in texts):
            return True
    return False


def check_prose_numbers(nb, name, allowed=()):
    """Every decimal and every 4+ digit integer of the Markdown appears in an output."""
    texts = [t for cell in nb.cells if cell.cell_type == "code" for t in book.output_texts(cell)]
    problems = []
    for i, cell, outside, _ in _prose_parts(nb):  # the References may span several cells
        missing = [n for n in prose_numbers(outside)
                   if n not in allowed and not number_in(n, texts)]
        if missing:
            problems.append(
                f"{where(name, i, cell)}: {', '.join(dict.fromkeys(missing))} not printed by any "
                "cell of this notebook (print and assert it, or allowlist it in "
                "tests/notebooks/test_notebooks.py with a reason; a citation's year is written "
                "'Name et al. (2017)', 'Name (2017)' or '(Name, 2017)')")
    return problems


def check_all(nb, name, size, chapter=True, allowed=()):
    """Every check above; ``chapter`` adds the structure of a chapter notebook."""
    problems = []
    for check in (check_valid, check_execution_counts, check_errors, check_streams_and_paths,
                  check_no_svg, check_kernelspec, check_title, check_reproducible,
                  check_figures_have_alt_text, check_line_length, check_headings_start_cells,
                  check_notes_tagged, check_student_prose, check_live_tags):
        problems += check(nb, name)
    problems += check_size(size, name)
    if chapter:
        problems += check_structure(nb, name)
        problems += check_no_forward_reference(nb, name)
    problems += check_prose_numbers(nb, name, allowed)
    return problems
