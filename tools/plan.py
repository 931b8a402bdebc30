"""The site's teaching plan page, made from the notebooks' own facts at `make chapter` time.

tools/chapter.py build calls :func:`write_page`, which writes ``teaching_plan.md`` into the
site's sources (the template is ``teaching_plan.md.j2`` beside this file). For each chapter
notebook (tools/book.py finds them) the page gives:

* minutes to read: the words of its Markdown prose (the References section and the
  navigation cell left out, a formula counted as one word, link targets and HTML tags
  dropped) at ``WORDS_PER_MINUTE``, rounded up;
* seconds to run: its budget in ``NOTEBOOK_BUDGET_S`` of ``benchmarks/report.py``, the one
  home of the notebooks' measured times, read as a literal (that module imports torch); a
  notebook without a budget stops the build with a message saying where to add it;
* the cells to run live in class: the code cells whose stored output is a figure or a
  widget, named by their execution count in Jupyter (``[6]``), their section and their first
  line of code;
* its exercises: the ``Exercise`` objects of the module its import cell names
  (``from d2lutil.exercises.nbNN import ...``, found as tools/grade.py finds it), each with
  its ``max_points``; a checked exercise suits homework graded by `make grade`, an
  open-ended one (no checked parts) carries no points. An exercise the notebook numbers but
  no module checks is listed as open-ended.

Nothing here runs a notebook: it reads the stored notebooks, so the plan is known (and a
missing budget reported) before the build executes anything.
"""

import ast
import dataclasses
import importlib
import math
import pathlib
import re

import jinja2

import book
import grade

PAGE = "teaching_plan"  # the page's name in the site's sources (teaching_plan.md)
TEMPLATE = pathlib.Path(__file__).with_name("teaching_plan.md.j2")
# A careful reading of technical prose, with its formulas, code and figures to look at:
# about half the pace of everyday prose (some 240 words a minute).
WORDS_PER_MINUTE = 120
BUDGETS_FILE = "benchmarks/report.py"
BUDGETS_NAME = "NOTEBOOK_BUDGET_S"
README_SECTION = "README.md#grading-a-class"  # "## Grading a class", as GitHub anchors it
CODE_CHARS = 60  # a live cell's first line of code is cut to this many characters
STATEMENT_CHARS = 100  # an exercise is shown by its first sentences, this long at least

_FORMULA = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.DOTALL)
_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")
_ITEM = re.compile(r"(?m)^(\d+)\.\s+(.*(?:\n(?!\s*\n|\d+\.\s).*)*)")
_SPAN = re.compile(r"`[^`]*`|\$[^$]*\$")
_SENTENCE_END = re.compile(r"[.?!](?=\s|$)")


class PlanError(ValueError):
    """A fact the plan needs is missing or malformed; the message says where to fix it."""


@dataclasses.dataclass
class LiveCell:
    count: object  # the execution count Jupyter shows, or None for a cell never run
    section: str
    code: str
    shows: str  # "a figure", "a widget" or "a figure and a widget"


@dataclasses.dataclass
class ExerciseFact:
    number: int
    statement: str  # its item under "## Exercises", the first sentences (lead)
    checked: int  # answers checked (its parts); 0 for an open-ended exercise
    points: float  # max_points
    written_part: bool  # an open part beside the checked ones (not graded)


@dataclasses.dataclass
class NotebookFact:
    rel: str
    title: str
    words: int
    run_s: float
    live: list
    exercises: list
    solutions: str | None  # the rel of its worked solutions, if any

    @property
    def read_min(self):
        return math.ceil(self.words / WORDS_PER_MINUTE)

    @property
    def points(self):
        return sum(e.points for e in self.exercises)


# --- the facts ------------------------------------------------------------------------------

def load_budgets(root=book.ROOT):
    """``NOTEBOOK_BUDGET_S`` of ``root/benchmarks/report.py``: {"01": seconds, ...}."""
    path = pathlib.Path(root) / BUDGETS_FILE
    if not path.is_file():
        raise PlanError(f"{BUDGETS_FILE} is missing: the teaching plan takes each notebook's "
                        f"seconds to run from its {BUDGETS_NAME}")
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(
            node, "targets", [])
        if any(isinstance(t, ast.Name) and t.id == BUDGETS_NAME for t in targets):
            try:
                budgets = ast.literal_eval(node.value)
            except ValueError:
                budgets = None
            if not (isinstance(budgets, dict) and all(
                    isinstance(k, str) and isinstance(v, (int, float)) and v > 0
                    for k, v in budgets.items())):
                raise PlanError(f"{BUDGETS_FILE}: {BUDGETS_NAME} must be a literal dict of "
                                "notebook numbers to seconds, e.g. {\"01\": 9}")
            return budgets
    raise PlanError(f"{BUDGETS_FILE} defines no {BUDGETS_NAME} (the notebooks' time budgets)")


def budget_of(rel, budgets):
    nn = book.number(rel)
    if nn not in budgets:
        raise PlanError(
            f"{rel} has no time budget: add \"{nn}\": SECONDS to {BUDGETS_NAME} in "
            f"{BUDGETS_FILE} (CONTRIBUTING.md, \"Adding notebook NN\", step 5); the teaching "
            "plan gives it as the notebook's seconds to run")
    return budgets[nn]


def prose_cells(nb):
    """The Markdown a reader reads: every Markdown cell but the navigation cell, up to the
    ``## References`` heading."""
    texts = []
    for cell in nb.cells:
        if cell.cell_type != "markdown" or book.NAV_TAG in book.tags(cell):
            continue
        lines = [x for x in cell.source.split("\n") if not book.BADGE_RE.match(x.strip())]
        text = "\n".join(lines)
        references = re.search(r"(?m)^## References\b", text)
        if references:
            texts.append(text[: references.start()])
            break
        texts.append(text)
    return texts


def count_words(markdown):
    """Words of Markdown prose: a formula is one word; link targets and HTML tags none."""
    text = _FORMULA.sub(" formula ", markdown)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"https?://\S+", " ", text)
    return len(_WORD.findall(text))


def _first_code_line(source):
    lines = [line.strip() for line in source.splitlines()]
    line = next((x for x in lines if x and not x.startswith(("#", "%", "!"))), "")
    return line if len(line) <= CODE_CHARS else line[: CODE_CHARS - 3].rstrip() + "..."


def live_cells(nb):
    """The code cells to run live: those whose stored output is a figure or a widget."""
    found, section = [], ""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            headings = re.findall(r"(?m)^#{2,3} +(.+?)\s*$", cell.source)
            section = headings[-1] if headings else section
            continue
        if cell.cell_type != "code":
            continue
        figure = book.has_figure(cell)
        widget = any(book.WIDGET_MIME in out.get("data", {}) for out in cell.get("outputs", []))
        if figure or widget:
            shows = " and ".join(w for w, yes in (("a figure", figure), ("a widget", widget))
                                 if yes)
            found.append(LiveCell(cell.get("execution_count"), section,
                                  _first_code_line(cell.source), shows))
    return found


def lead(text, at_least=STATEMENT_CHARS):
    """The first sentences of ``text``, as few as make ``at_least`` characters (a sentence
    end inside `code` or $maths$ does not count)."""
    text = " ".join(text.split())
    plain = _SPAN.sub(lambda m: "x" * len(m.group(0)), text)  # same length, no ends inside
    for end in _SENTENCE_END.finditer(plain):
        if end.end() >= at_least:
            return text[: end.end()]
    return text


def exercise_statements(nb):
    """{number: lead} of the numbered items under ``## Exercises``."""
    statements, inside = {}, False
    for cell in nb.cells:
        if cell.cell_type != "markdown" or book.NAV_TAG in book.tags(cell):
            continue
        source = cell.source
        if not inside:
            head, mark, source = source.partition("## Exercises")
            if not mark:
                continue
            inside = True
        source, stop, _ = source.partition("## References")
        for m in _ITEM.finditer(source):
            statements.setdefault(int(m.group(1)), lead(m.group(2)))
        if stop:
            break
    return statements


def exercise_module(nb, rel):
    """The module the notebook's exercise-import cell names, or None without one."""
    numbers = {a or b for cell in nb.cells if cell.cell_type == "code"
               for a, b in grade.IMPORT_RE.findall(cell.source)}
    if len(numbers) > 1:
        raise PlanError(f"{rel} imports the exercises of several notebooks: {sorted(numbers)}")
    return f"d2lutil.exercises.nb{numbers.pop()}" if numbers else None


def load_exercises(module):
    """The ``Exercise`` objects of ``module`` (its ``__all__``), by number."""
    loaded = importlib.import_module(module)
    return sorted((getattr(loaded, name) for name in loaded.__all__), key=lambda e: e.number)


def exercise_facts(nb, rel, exercises_of=load_exercises):
    statements = exercise_statements(nb)
    module = exercise_module(nb, rel)
    exercises = {e.number: e for e in (exercises_of(module) if module else [])}
    facts = []
    for n in sorted(set(statements) | set(exercises)):
        e = exercises.get(n)
        facts.append(ExerciseFact(
            n, statements.get(n, f"ex{n} of {module}"), len(e.parts) if e else 0,
            e.max_points if e else 0, bool(e and e.parts and e.open_part)))
    return facts


def notebook_fact(path, root, budgets, exercises_of=load_exercises):
    rel = book.relpath_of(path, root)
    nb = book.read(path)
    solutions = pathlib.Path(root) / book.SOLUTIONS_DIR / f"{book.number(rel)}_solutions.ipynb"
    return NotebookFact(
        rel, book.title_of(nb, rel), sum(count_words(t) for t in prose_cells(nb)),
        budget_of(rel, budgets), live_cells(nb), exercise_facts(nb, rel, exercises_of),
        book.relpath_of(solutions, root) if solutions.is_file() else None)


def chapter_facts(root=book.ROOT, budgets=None, exercises_of=load_exercises):
    """A :class:`NotebookFact` for every chapter notebook under ``root``, in order."""
    budgets = load_budgets(root) if budgets is None else budgets
    return [notebook_fact(p, root, budgets, exercises_of) for p in book.chapter_notebooks(root)]


# --- the page -------------------------------------------------------------------------------

def _number(value):
    return f"{value:g}"


def _count(value, noun):
    """``1 point``, ``2.5 points``."""
    return f"{value:g} {noun}" + ("" if value == 1 else "s")


def _code(text):
    """``text`` as inline code, fenced by more backticks than it holds."""
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def render(facts, pub):
    """The page's Markdown for the notebooks' ``facts`` (``pub``: where the README lives)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE.parent), undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)
    env.filters["number"] = _number
    env.filters["code"] = _code
    env.filters["count"] = _count
    env.filters["cell"] = lambda text: text.replace("|", "\\|")  # inside a table row
    return env.get_template(TEMPLATE.name).render(
        notebooks=facts, words_per_minute=WORDS_PER_MINUTE, budgets_file=BUDGETS_FILE,
        budgets_name=BUDGETS_NAME, readme=f"{pub.repository}/blob/{pub.branch}/{README_SECTION}",
        total_points=sum(f.points for f in facts),
        total_read=sum(f.read_min for f in facts), total_run=sum(f.run_s for f in facts),
        total_live=sum(len(f.live) for f in facts),
        total_exercises=sum(len(f.exercises) for f in facts))


def write_page(src, facts, pub):
    """Write the page into the site's sources ``src``; return its path."""
    path = pathlib.Path(src) / f"{PAGE}.md"
    path.write_text(render(facts, pub), encoding="utf-8")
    return path
