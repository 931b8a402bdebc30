"""The site's teaching plan page, made from the notebooks' own facts at `make chapter` time.

    python course/plan.py ROOT PAGE   # the chapter at ROOT; writes PAGE and its figure beside it

It reads the stored notebooks of ROOT (it runs none), the exercise modules of ROOT's
``d2lutil`` and ``course/course.toml``, checks each against the others and writes the page
(``teaching_plan.md.j2``) and ``MAP_FIGURE``; a missing or malformed fact stops the build
with a :class:`PlanError` that says where to fix it (CONTRIBUTING.md, "A notebook's facts").
"""

import argparse
import dataclasses
import importlib
import math
import pathlib
import re
import sys
import textwrap

import jinja2
import tomllib

sys.path.append(str(pathlib.Path(__file__).resolve().parents[1] / "tools"))  # as a script
import book  # noqa: E402  (the book's tools: the course reads the book)
import colab  # noqa: E402
import lecture  # noqa: E402

COURSE_FILE = "course/course.toml"  # the course-wide facts of a chapter, under its root
TEMPLATE = pathlib.Path(__file__).with_name("teaching_plan.md.j2")
MAP_FIGURE = "teaching_plan_map.png"  # the figure of which notebook builds on which
# A careful reading of technical prose, formulas, code and figures: half the everyday pace.
WORDS_PER_MINUTE = 120
GRADING_GUIDE = "course/README.md"  # the one home of the grading workflow
STATEMENT_CHARS = 100  # an exercise is shown by its first sentences, this long at least
OBJECTIVES_HEADING = "## What you will learn"
# A bullet no exercise assesses says so (course/tests/test_plan.py), as "(not assessed)".
NOT_ASSESSED = "not assessed"
# The page's sections on the course after the lectures' (the labs' only with a lab).
HEADINGS = {"labs": "Labs", "live": "Cells to run live", "map": "Which notebook builds on which",
            "misconceptions": "Misconceptions students bring", "quiz": "A concept quiz"}
LECTURE_MINUTES = 75

_FORMULA = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.DOTALL)
_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")
_ITEM = re.compile(r"(?m)^(\d+)\.\s+(.*(?:\n(?!\s*\n|\d+\.\s).*)*)")
_SPAN = re.compile(r"`[^`]*`|\$[^$]*\$")
_SENTENCE_END = re.compile(r"[.?!](?=\s|$)")
_HEADING = re.compile(r"^(#{2,3}) +(.+?)\s*#*\s*$")
_BULLET = re.compile(r"^\s{0,3}(?:[-*+]|\d+[.)])\s+(.*)$")


class PlanError(ValueError):
    """A fact the plan needs is missing or malformed; the message says where to fix it."""


# --- the course: course/course.toml (edit it there; the build checks it) ---------------------

@dataclasses.dataclass(frozen=True)
class Part:
    minutes: int
    topic: str
    notebooks: tuple = ()  # those whose tagged cells (the deck's screens) it shows


@dataclasses.dataclass(frozen=True)
class Lecture:
    deck: str  # its deck in book.LECTURE_DECKS
    title: str
    parts: tuple
    minutes: int = LECTURE_MINUTES
    homework: tuple = ()  # "NN" (a notebook's exercises with points) or "NN:K" (exercise K)


@dataclasses.dataclass(frozen=True)
class Misconception:
    belief: str  # what students bring
    answer: str  # what the chapter shows instead, one or two sentences
    where: tuple  # ((notebook number, the heading of the section that shows it), ...)


@dataclasses.dataclass(frozen=True)
class Question:
    question: str
    answer: str  # true of the chapter: say where it shows it
    notebooks: tuple  # the notebooks that answer it, by number


@dataclasses.dataclass(frozen=True)
class Course:
    lectures: tuple
    live: dict  # {tag: (purpose, what to say: one sentence)}
    misconceptions: tuple
    quiz: tuple


def _folded(value):
    """The TOML ``value`` with every string's line breaks and indents read as one space."""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, list):
        return tuple(_folded(v) for v in value)
    return {k: _folded(v) for k, v in value.items()} if isinstance(value, dict) else value


def load_course(root=book.ROOT):
    """The :class:`Course` of ``root``'s ``COURSE_FILE``; None for a chapter without one."""
    path = pathlib.Path(root) / COURSE_FILE
    if not path.is_file():
        return None
    try:
        data = _folded(tomllib.loads(path.read_text(encoding="utf-8")))
        return Course(
            tuple(Lecture(**{**lec, "parts": tuple(Part(**p) for p in lec["parts"])})
                  for lec in data["lectures"]),
            {tag: (v["purpose"], v["say"]) for tag, v in data["live"].items()},
            tuple(Misconception(**m) for m in data["misconceptions"]),
            tuple(Question(**q) for q in data["quiz"]))
    except (tomllib.TOMLDecodeError, KeyError, TypeError) as e:
        what = f"an entry lacks its {e}" if isinstance(e, KeyError) else e
        raise PlanError(f"{COURSE_FILE}: {what}") from None


_D2L_ATTENTION = "chapter_attention-mechanisms-and-transformers/"
# D2L's sections a notebook's facts may name as prerequisites: {title: its page on d2l.ai}.
D2L = "https://d2l.ai/"
D2L_SECTIONS = {
    "Data Manipulation": "chapter_preliminaries/ndarray.html",
    "Linear Regression": "chapter_linear-regression/linear-regression.html",
    "Queries, Keys, and Values": _D2L_ATTENTION + "queries-keys-values.html",
    "Attention Scoring Functions": _D2L_ATTENTION + "attention-scoring-functions.html",
    "The Bahdanau Attention Mechanism": _D2L_ATTENTION + "bahdanau-attention.html",
    "Multi-Head Attention": _D2L_ATTENTION + "multihead-attention.html",
    "Self-Attention and Positional Encoding":
        _D2L_ATTENTION + "self-attention-and-positional-encoding.html",
    "The Transformer Architecture": _D2L_ATTENTION + "transformer.html",
    "Sequence-to-Sequence Learning for Machine Translation":
        "chapter_recurrent-modern/seq2seq.html",
    "Adam": "chapter_optimization/adam.html",
    "Information Theory":
        "chapter_appendix-mathematics-for-deep-learning/information-theory.html",
}

# --- the facts ------------------------------------------------------------------------------

@dataclasses.dataclass
class LiveCell:
    tag: str  # book.LIVE_PREFIX + its purpose
    section: str  # the heading of its section (a ### one after the ## one it belongs to)
    purpose: str = ""  # from the course's live table
    say: str = ""


@dataclasses.dataclass
class ExerciseFact:
    number: int
    statement: str  # its item under "## Exercises", the first sentences (lead)
    checked: int  # answers checked (its parts); 0 for an open-ended exercise
    points: float  # max_points
    written_part: bool  # an open part beside the checked ones (not graded by make grade)
    rubric: list = dataclasses.field(default_factory=list)  # (points, criterion): by hand
    # the checked points each student's own (variants), and those open-book
    own_points: float = 0
    open_book_points: float = 0


@dataclasses.dataclass
class NotebookFact:
    rel: str
    title: str
    words: int
    run_s: float
    live: list
    exercises: list
    solutions: str | None  # the rel of its worked solutions, if any
    headings: list = dataclasses.field(default_factory=list)  # its ## and ### headings
    objectives: list = dataclasses.field(default_factory=list)  # "What you will learn"
    meta: dict = dataclasses.field(default_factory=dict)  # its facts (book.facts)

    @property
    def number(self):
        return book.number(self.rel)

    @property
    def read_min(self):
        return math.ceil(self.words / WORDS_PER_MINUTE)

    @property
    def points(self):
        return sum(e.points for e in self.exercises)


class ChapterFacts(list):
    plan = None  # the CoursePlan checked against the notebooks, or None without a course


def checked_facts(nb, rel):
    """The notebook's facts (book.facts): a time budget and no unknown key, or a PlanError."""
    meta = dict(book.facts(nb))
    budget = meta.get("budget_s")
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget <= 0:
        raise PlanError(
            f"{rel} has no time budget: set \"{book.FACTS_KEY}\": {{\"budget_s\": SECONDS}} "
            "in its metadata (CONTRIBUTING.md, \"A notebook's facts\"); the teaching plan "
            f"gives it as the notebook's seconds to run (got {budget!r})")
    unknown = sorted(set(meta) - set(book.FACT_KEYS))
    if unknown:
        raise PlanError(f"{rel}: its metadata \"{book.FACTS_KEY}\" holds {unknown}, not among "
                        f"{list(book.FACT_KEYS)} (tools/book.py FACT_KEYS)")
    return meta


def _markdown(nb):
    """The Markdown cells a reader reads: all but the navigation cell."""
    return [c for c in nb.cells if c.cell_type == "markdown" and book.NAV_TAG not in book.tags(c)]


def prose_cells(nb):
    """The Markdown a reader reads, up to the ``## References`` heading."""
    texts = []
    for cell in _markdown(nb):
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


def _headings(source):
    """[(level, text)] of the ``##`` and ``###`` headings of ``source``, outside code blocks."""
    found, fenced = [], False
    for line in source.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        m = None if fenced else _HEADING.match(line)
        if m:
            found.append((len(m.group(1)), m.group(2)))
    return found


def objectives(nb):
    """The bullets of the notebook's ``## What you will learn`` section, each on one line
    (a bullet's continuation lines joined to it; a paragraph after the list is none)."""
    bullets, inside, gap = [], False, False
    for cell in _markdown(nb):
        for line in cell.source.split("\n"):
            if line.startswith("## "):
                if inside:
                    return bullets
                inside = line.strip() == OBJECTIVES_HEADING
                continue
            if not inside or line.startswith("#"):
                continue
            m = _BULLET.match(line)
            if m:
                bullets.append(m.group(1).strip())
            elif line.strip() and bullets and not (gap and line[0] != " "):
                bullets[-1] += " " + line.strip()
            gap = not line.strip() or gap and not m  # after a blank line, until a bullet
    return bullets


def live_cells(nb):
    """The cells tagged ``live-...`` (book.LIVE_PREFIX) as :class:`LiveCell`, in order, each
    with the heading it sits under ("## › ###" in a ``###`` part); tests/notebooks/hygiene.py
    checks that each tag is on one code cell."""
    found, top, sub = [], "", ""
    for cell in nb.cells:
        if book.NAV_TAG in book.tags(cell):
            continue
        if cell.cell_type == "markdown":
            for level, text in _headings(cell.source):
                top, sub = (text, "") if level == 2 else (top, text)
        found += [LiveCell(tag, f"{top} › {sub}" if top and sub else sub or top)
                  for tag in book.tags(cell) if tag.startswith(book.LIVE_PREFIX)]
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
    for cell in _markdown(nb):
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
    numbers = book.exercise_numbers(c.source for c in nb.cells if c.cell_type == "code")
    if len(numbers) > 1:
        raise PlanError(f"{rel} imports the exercises of several notebooks: {numbers}")
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
        e, statement = exercises.get(n), statements.get(n, f"ex{n} of {module}")
        if e is None:
            facts.append(ExerciseFact(n, statement, 0, 0, False))
            continue
        # a part is each student's own when the exercise has variants and it is not open-book
        own = sum(p for j, p in enumerate(e.points) if e.variants and j not in e.open_book)
        facts.append(ExerciseFact(n, statement, len(e.parts), e.max_points,
                                  bool(e.parts and e.open_part), list(e.rubric), own,
                                  e.max_points - own))
    return facts


def notebook_fact(path, root, exercises_of=load_exercises):
    rel = book.relpath_of(path, root)
    nb = book.read(path)
    solutions = pathlib.Path(root) / book.SOLUTIONS_DIR / f"{book.number(rel)}_solutions.ipynb"
    meta = checked_facts(nb, rel)
    headings = [text for cell in _markdown(nb) for _, text in _headings(cell.source)]
    return NotebookFact(
        rel, book.title_of(nb, rel), sum(count_words(t) for t in prose_cells(nb)),
        meta["budget_s"], live_cells(nb), exercise_facts(nb, rel, exercises_of),
        book.relpath_of(solutions, root) if solutions.is_file() else None,
        headings, objectives(nb), meta)


_AUTO = object()


def chapter_facts(root=book.ROOT, exercises_of=load_exercises, course=_AUTO):
    """A :class:`NotebookFact` for every chapter notebook under ``root``, in order, as a
    :class:`ChapterFacts` whose ``plan`` is ``course`` (default: ``load_course(root)``)
    checked against the notebooks (``plan_course``)."""
    facts = ChapterFacts(notebook_fact(p, root, exercises_of)
                         for p in book.chapter_notebooks(root))
    course = load_course(root) if course is _AUTO else course
    if course is not None:
        facts.plan = plan_course(course, facts, root)
    return facts


# --- the course, checked against the notebooks ----------------------------------------------

@dataclasses.dataclass
class PlannedPart:
    minutes: int
    topic: str
    notebooks: list  # their NotebookFact
    screens: tuple | None  # (first, last) of the deck, None for a part with no notebook
    live: list  # the LiveCell of its notebooks


@dataclasses.dataclass
class PlannedLecture:
    title: str
    deck: str
    minutes: int
    parts: list
    screens: int  # the deck's screens, its title slide included
    homework: list = dataclasses.field(default_factory=list)  # [(NotebookFact, [exercises])]
    whole: list = dataclasses.field(default_factory=list)  # those listed as a notebook ("NN")

    @property
    def homework_points(self):
        return sum(e.points for _, exercises in self.homework for e in exercises)

    @property
    def notebooks(self):
        return [f for part in self.parts for f in part.notebooks]

    @property
    def heading(self):
        return f"{self.title}: {self.minutes} minutes"


@dataclasses.dataclass
class CoursePlan:
    lectures: list
    labs: list  # [(NotebookFact, what it does, [the facts it builds on])]
    live: list  # [(NotebookFact, LiveCell)] in reading order
    objectives: dict  # {rel: [(objective, [exercises: K, or "NN:K" of notebook NN])]}
    builds_on: dict  # {rel: [NotebookFact]}
    prerequisites: list  # [(NotebookFact, [(section, url, what)], [maths])]
    misconceptions: list  # [(belief, answer, [(NotebookFact, [its headings])])]
    quiz: list  # [(question, answer, [NotebookFact])]
    roles: dict  # {rel: "part 3 of the first lecture", ...}
    edges: list  # [(from number, to number)] between notebooks that exist


def _homework(lec, by_number):
    """(PlannedLecture.homework, .whole) of ``lec``, and the problems of its entries."""
    chosen, whole, problems = {}, [], []
    for entry in map(str, lec.homework):
        nn, _, k = entry.partition(":")
        where = f"lectures in {COURSE_FILE}: the homework of {lec.title} lists {entry!r}"
        form = re.fullmatch(r"\d\d(:\d+)?", entry)
        if not form or nn not in by_number:
            problems.append(f"{where}: notebook {nn} is not in the chapter" if form else
                            f"{where}: not \"NN\" (a notebook) or \"NN:K\" (its exercise K)")
            continue
        named = [e for e in by_number[nn].exercises if (e.number == int(k) if k else e.points)]
        if not any(e.points for e in named):
            problems.append(f"{where}: " + (f"notebook {nn} has no exercise {k}" if k and not named
                                            else "it carries no points"))
            continue
        chosen.setdefault(nn, {}).update({e.number: e for e in named})
        whole += [] if k else [by_number[nn]]
    return [(by_number[nn], list(e.values())) for nn, e in chosen.items()], whole, problems


def _lectures(course, by_number, root):
    lectures, problems = [], []
    for lec in course.lectures:
        if lec.deck not in book.LECTURE_DECKS:
            problems.append(f"lectures in {COURSE_FILE}: {lec.title} names the deck "
                            f"{lec.deck!r}, which is not in book.LECTURE_DECKS")
            continue
        total = sum(p.minutes for p in lec.parts)
        if total != lec.minutes:
            problems.append(f"lectures in {COURSE_FILE}: the parts of {lec.title} add up to "
                            f"{total} minutes, not {lec.minutes}")
        ranges = lecture.screen_ranges(root, lec.deck)
        if not ranges:
            problems.append(f"the lecture deck {lec.deck!r} has no cell tagged {lec.deck!r}: tag "
                            f"the cells of {lec.title.lower()} before building the teaching plan")
            continue
        parts = []
        for part in lec.parts:
            facts, screens = [], []
            for nn in part.notebooks:
                if nn not in by_number:
                    problems.append(f"lectures in {COURSE_FILE}: {lec.title} names notebook "
                                    f"{nn}, which is not in the chapter")
                elif by_number[nn].rel not in ranges:
                    problems.append(f"{by_number[nn].rel}: no cell is tagged {lec.deck!r}, so "
                                    f"it has no screen in the deck {lec.deck!r}")
                else:
                    facts.append(by_number[nn])
                    screens.append(ranges[by_number[nn].rel])
            parts.append(PlannedPart(
                part.minutes, part.topic, facts,
                (screens[0][0], screens[-1][1]) if screens else None,
                [c for f in facts for c in f.live]))
        named = {f.rel for part in parts for f in part.notebooks}
        problems += [f"{rel}: it has cells tagged {lec.deck!r}, but no part of {lec.title} in "
                     f"{COURSE_FILE} names its notebook" for rel in ranges if rel not in named]
        homework, whole, more = _homework(lec, by_number)
        problems += more
        lectures.append(PlannedLecture(lec.title, lec.deck, lec.minutes, parts,
                                       max(last for _, last in ranges.values()), homework, whole))
    return lectures, problems


def _live(course, facts):
    problems, where = [], {}
    for fact in facts:
        for cell in fact.live:
            where[cell.tag] = fact
            if cell.tag not in course.live:
                problems.append(
                    f"{fact.rel}: the cell tagged {cell.tag!r} (in \"{cell.section}\") is not "
                    f"in the live cells of {COURSE_FILE}: add its purpose and what to say, or "
                    "fix the tag")
            else:
                cell.purpose, cell.say = course.live[cell.tag]
    for tag in course.live:
        if tag not in where:
            problems.append(f"live in {COURSE_FILE}: no cell of the chapter is tagged {tag!r}: "
                            "tag the code cell to run live, or drop it from the table")
    return [(f, c) for f in facts for c in f.live], problems


def _assessing(entry):
    """("", K) for K (the notebook's own exercise), ("NN", K) for "NN:K", else None."""
    m = re.fullmatch(r"(\d\d):(\d+)", entry) if isinstance(entry, str) else None
    if m or isinstance(entry, int) and not isinstance(entry, bool):
        return (m.group(1), int(m.group(2))) if m else ("", entry)


def _objectives(facts):
    """{rel: [(objective, [its exercises: K, or "NN:K" of notebook NN])]} from each notebook's
    facts' ``objectives`` (one list per bullet of its "What you will learn"), and the problems."""
    mapped, problems = {}, []
    by_number = {f.number: f for f in facts}
    for fact in facts:
        table = fact.meta.get("objectives", [])
        if table and len(table) != len(fact.objectives):
            problems.append(
                f"{fact.rel}: its facts' objectives hold {len(table)} lists of exercises, one "
                f"per bullet of its \"What you will learn\", which has {len(fact.objectives)}: "
                "re-map them to the current bullets")
        for entry in dict.fromkeys(e for exercises in table for e in exercises):
            nn, k = _assessing(entry) or ("?", None)
            of = fact if nn == "" else by_number.get(nn)
            what = f"{fact.rel}: its facts' objectives name {entry!r}" if nn else (
                f"{fact.rel}: its facts' objectives name exercise {k}")
            if k is None:
                problems.append(f"{what}, not an exercise K or \"NN:K\" (K of notebook NN)")
            elif of is None:
                problems.append(f"{what}, but notebook {nn} is not in the chapter")
            elif k not in (known := sorted(e.number for e in of.exercises)):
                problems.append(f"{what}, which {f'notebook {nn}' if nn else 'it'} does not have "
                                f"(its exercises: {known})")
        mapped[fact.rel] = [(text, sorted(table[i], key=lambda e: _assessing(e) or ("~", 0))
                             if i < len(table) else []) for i, text in enumerate(fact.objectives)]
    return mapped, problems


def _assessed(entries, bullet):
    """`` *Assessed by:* exercise 2, and exercises 1 and 2 of notebook 10.`` after a bullet
    (``entries``: its sorted exercises), nothing after one that says it is NOT_ASSESSED."""
    if not entries and NOT_ASSESSED in bullet.lower():
        return ""
    groups = {}
    for nn, k in map(_assessing, entries):
        groups.setdefault(nn, []).append(k)
    parts = [_numbers(ks, "exercise", "exercises") + (f" of notebook {int(nn)}" if nn else "")
             for nn, ks in groups.items()]
    parts = ", and ".join(filter(None, [", ".join(parts[:-1]), *parts[-1:]])) or "no exercise"
    return f" *Assessed by:* {parts}."


def _heading_of(fact, heading, table):
    """``heading`` as it stands in ``fact``'s notebook (whitespace aside), or a problem."""
    wanted = " ".join(heading.split())
    for text in fact.headings:
        if " ".join(text.split()) == wanted:
            return text, None
    listed = "; ".join(f'"{h}"' for h in fact.headings)
    return None, (f"{table} in {COURSE_FILE}: {fact.rel} has no section \"{heading}\" (a "
                  f"renamed heading?); its headings: {listed}")


def _misconceptions(course, by_number):
    rows, problems = [], []
    for m in course.misconceptions:
        where = []
        for nn, heading in m.where:
            if nn not in by_number:
                problems.append(f"misconceptions in {COURSE_FILE}: notebook {nn} is not in the "
                                f"chapter (for \"{m.belief}\")")
                continue
            found, problem = _heading_of(by_number[nn], heading, "misconceptions")
            if problem:
                problems.append(problem)
            elif where and where[-1][0] is by_number[nn]:
                where[-1][1].append(found)
            else:
                where.append((by_number[nn], [found]))
        rows.append((m.belief, m.answer, where))
    return rows, problems


def plan_course(course, facts, root):
    """The :class:`CoursePlan` of ``course`` for the chapter ``facts`` under ``root``, the
    course and every notebook's facts checked against the notebooks; a PlanError lists every
    problem found."""
    by_number = {f.number: f for f in facts}
    lectures, problems = _lectures(course, by_number, root)
    live, more = _live(course, facts)
    problems += more
    objectives, more = _objectives(facts)
    problems += more
    misconceptions, more = _misconceptions(course, by_number)
    problems += more
    edges = []
    for fact in facts:
        for nn in fact.meta.get("builds_on", []):
            if nn in by_number:
                edges.append((nn, fact.number))
            else:
                problems.append(f"{fact.rel}: its facts' builds_on names notebook {nn}, which "
                                "is not in the chapter")
    builds_on = {f.rel: [by_number[a] for a, b in edges if b == f.number] for f in facts}
    prerequisites = []
    for fact in facts:
        sections_ = []
        for title, what in fact.meta.get("d2l_sections", []):
            if title not in D2L_SECTIONS:
                problems.append(f"{fact.rel}: its facts' d2l_sections name \"{title}\", which "
                                "is not in D2L_SECTIONS of course/plan.py")
            else:
                sections_.append((title, D2L + D2L_SECTIONS[title], what))
        prerequisites.append((fact, sections_, list(fact.meta.get("maths", []))))
    quiz = []
    for q in course.quiz:
        missing = [nn for nn in q.notebooks if nn not in by_number]
        if missing:
            problems.append(f"quiz in {COURSE_FILE}: notebook {missing[0]} is not in the "
                            f"chapter (for \"{q.question}\")")
        quiz.append((q.question, q.answer, [by_number[nn] for nn in q.notebooks
                                            if nn in by_number]))
    if problems:
        raise PlanError("\n".join(dict.fromkeys(problems)))  # each once, in order
    roles = {}
    for lec in lectures:
        for i, part in enumerate(lec.parts, 1):
            for f in part.notebooks:
                first, last = part.screens
                roles[f.rel] = (f"part {i} of {lec.title.lower()} ({part.minutes} min, "
                                f"screens {first}–{last})")
    labs = [(f, f.meta["lab"], builds_on[f.rel]) for f in facts if "lab" in f.meta]
    for f, _, sources in labs:
        roles[f.rel] = "a lab, after " + (_numbers(
            [s.number for s in sources], "notebook", "notebooks") if sources else "the lectures")
    return CoursePlan(lectures, labs, live, objectives, builds_on, prerequisites,
                      misconceptions, quiz, roles, edges)


def course_headings(plan):
    """The page's ``##`` headings on the course ``plan``, before "Grading the homework"."""
    return [lec.heading for lec in plan.lectures] + [
        text for key, text in HEADINGS.items() if key != "labs" or plan.labs]


# --- the figure: which notebook builds on which ---------------------------------------------

def _groups(plan, facts):
    """{number: (group index, group name)}: each lecture, then the labs, then the rest."""
    groups = {}
    for i, lec in enumerate(plan.lectures):
        for f in lec.notebooks:
            groups[f.number] = (i, lec.title.removeprefix("The ").capitalize())
    for f, _, _ in plan.labs:
        groups.setdefault(f.number, (len(plan.lectures), "Lab"))
    for f in facts:
        groups.setdefault(f.number, (len(plan.lectures) + 1, "Other"))
    return groups


def map_layout(numbers, edges, groups):
    """{number: (x, y)}: -y the length of the longest chain of notebooks leading to it (the
    first notebook on top), x its group's column (the first lecture on the left); a notebook
    that would take a place already taken moves one column to the right."""
    depth = {}

    def depth_of(n, seen=()):
        if n not in depth:
            if n in seen:
                raise PlanError(f"notebook {n} builds on itself (a cycle of its facts' "
                                "builds_on)")
            depth[n] = max((depth_of(a, (*seen, n)) + 1 for a, b in edges if b == n),
                           default=0)
        return depth[n]

    places, taken = {}, set()
    for n in numbers:
        x, y = groups[n][0], -depth_of(n)
        while (x, y) in taken:
            x += 1
        taken.add((x, y))
        places[n] = (x, y)
    return places


def map_alt(plan, facts):
    """The figure's alt text: each notebook, its place in the course and what it builds on."""
    groups = _groups(plan, facts)
    parts = []
    for f in facts:
        sources = [a.number for a in plan.builds_on[f.rel]]
        on = f" builds on {' and '.join(sources)}" if sources else " starts the chapter"
        parts.append(f"{f.number} {f.title} ({groups[f.number][1].lower()}){on}.")
    return "Which notebook builds on which, arrows from a notebook to the next: " + " ".join(
        parts)


def draw_map(plan, facts, path):
    """Draw the figure of which notebook builds on which into the PNG ``path``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch, Patch

    groups = _groups(plan, facts)
    places = map_layout([f.number for f in facts], plan.edges, groups)
    colours = ["#c6dbef", "#fdd0a2", "#c7e9c0", "#e0e0e0"]  # light, text stays legible
    xs, ys = [x for x, _ in places.values()], [y for _, y in places.values()]
    # About 2.2 by 0.9 inches a place, and half an inch for the legend: at 110 dpi the
    # figure keeps its size in the page's column, its text legible.
    columns, rows = max(xs) - min(xs) + 1, max(ys) - min(ys) + 1
    fig = Figure(figsize=(2.2 * columns, 0.9 * rows + 0.5), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(min(xs) - 0.5, max(xs) + 0.5)
    ax.set_ylim(min(ys) - 0.5, max(ys) + 0.5 + 0.5 / 0.9)
    ax.axis("off")
    boxes = {}
    for f in facts:
        x, y = places[f.number]
        label = "\n".join(textwrap.wrap(f"{f.number} {f.title.split(':')[0]}", 24,
                                        max_lines=2, placeholder=" …"))
        colour = colours[min(groups[f.number][0], len(colours) - 1)]
        boxes[f.number] = ax.text(
            x, y, label, ha="center", va="center", fontsize=9, zorder=3,
            bbox={"boxstyle": "round,pad=0.4", "facecolor": colour, "edgecolor": "#333333"})
    fig.canvas.draw()  # places the boxes, so that the arrows stop at their edges
    for a, b in plan.edges:
        ax.add_patch(FancyArrowPatch(
            places[a], places[b], patchA=boxes[a].get_bbox_patch(),
            patchB=boxes[b].get_bbox_patch(), arrowstyle="-|>", mutation_scale=12,
            color="#333333", linewidth=1.1, zorder=2))
    names = sorted({g for g in groups.values()})
    ax.legend(handles=[Patch(facecolor=colours[min(i, len(colours) - 1)], edgecolor="#333333",
                             label=name) for i, name in names],
              loc="upper center", ncol=len(names), frameon=False, fontsize=9,
              bbox_to_anchor=(0.5, 1.0))
    fig.savefig(path, format="png", metadata={"Software": None})
    return path


# --- the page -------------------------------------------------------------------------------

def _count(value, noun):
    """``1 point``, ``2.5 points``."""
    return f"{value:g} {noun}" + ("" if value == 1 else "s")


def _code(text):
    """``text`` as inline code, fenced by more backticks than it holds."""
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _numbers(values, one, many):
    """``exercise 2``, ``exercises 1 and 3``, ``exercises 1, 2 and 3``."""
    values = [str(int(v)) if isinstance(v, str) else str(v) for v in values]
    if len(values) == 1:
        return f"{one} {values[0]}"
    return f"{many} {', '.join(values[:-1])} and {values[-1]}"


def render(facts, pub):
    """The page's Markdown for ``facts`` and their ``plan`` (``pub``: where the README is)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE.parent), undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)
    env.filters.update(
        number=lambda value: f"{value:g}", code=_code, count=_count, numbers=_numbers,
        assessed=_assessed, cell=lambda text: text.replace("|", "\\|"),  # inside a table row
        quoted=lambda text: f"“{text}”", alt=lambda text: re.sub(r"([\[\]])", r"\\\1", text))
    plan = getattr(facts, "plan", None)
    return env.get_template(TEMPLATE.name).render(
        notebooks=facts, plan=plan, headings=HEADINGS, words_per_minute=WORDS_PER_MINUTE,
        facts_key=book.FACTS_KEY, readme=f"{pub.repository}/blob/{pub.branch}/{GRADING_GUIDE}",
        map_figure=MAP_FIGURE, map_alt=map_alt(plan, facts) if plan else "")


def write_page(path, facts, pub):
    """Write the page to ``path`` (and, with a course, its figure beside it); return it."""
    path = pathlib.Path(path)
    path.write_text(render(facts, pub), encoding="utf-8")
    plan = getattr(facts, "plan", None)
    if plan is not None:
        draw_map(plan, facts, path.with_name(MAP_FIGURE))
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=pathlib.Path, help="the chapter's repository")
    parser.add_argument("page", type=pathlib.Path, help="the page to write (Markdown)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.root))  # the chapter's own d2lutil, with its exercises
    try:
        facts = chapter_facts(args.root)
    except PlanError as e:
        print(e, file=sys.stderr)
        return 1
    write_page(args.page, facts, colab.load_publication(args.root / "pyproject.toml"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
