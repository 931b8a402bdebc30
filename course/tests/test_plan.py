"""The teaching plan (course/plan.py) on a small synthetic chapter (two lecture notebooks and
a lab, not executed, their facts in their metadata) and course: what the page says, and
that a wrong table or fact, or a renamed heading, stops the build with a PlanError naming
it. The last tests check the chapter's own course (``course/course.toml``) and facts."""

import dataclasses
import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import book
import colab
import lecture
import plan

PUB = colab.Publication("https://github.com/example-owner/example-chapter", "teaching")
# The notebooks' own facts, their metadata book.FACTS_KEY.
FACTS = {
    "01_first.ipynb": {"budget_s": 5, "objectives": [[1, 2], []], "maths": ["rank"],
                       "d2l_sections": [["Multi-Head Attention", "all of it"]]},
    "02_second.ipynb": {"budget_s": 6, "builds_on": ["01"], "objectives": [[], [2]]},
    "03_lab.ipynb": {"budget_s": 20, "builds_on": ["01", "02"], "lab": "Work in the lab."},
}


def cell(kind, source, *tags):
    made = new_code_cell(source) if kind == "code" else new_markdown_cell(source)
    if tags:
        made.metadata["tags"] = list(tags)
    return made


def chapter_notebook(title, section, live, deck="lecture"):
    """A notebook in the chapter's shape: title, objectives, a lesson tagged for ``deck``
    with one live cell, Going deeper, Recap, Exercises, References."""
    return [
        cell("md", f"# {title}"),
        cell("md", "## What you will learn\n\n- the first thing, over\n  two lines;\n"
                   "- the second thing."),
        cell("md", f"## {section}\n\nSome prose.", deck),
        cell("code", "x = 1\nprint(x)", deck, live),
        cell("md", "### A part of it\n\nMore prose.", deck),
        cell("code", "print(2)", deck),
        cell("md", "## Going deeper\n\nDepth a class can skip."),
        cell("md", "## Recap\n\n- x is 1."),
        cell("md", "## Exercises\n\n1. Compute x.\n2. Explain x."),
        cell("md", "## References\n\n1. A paper."),
    ]


def write_chapter(root, notebooks=None):
    notebooks = notebooks or {
        "01_first.ipynb": chapter_notebook("First Things", "The idea", "live-alpha"),
        "02_second.ipynb": chapter_notebook("Second Things", "The second idea", "live-beta"),
        "03_lab.ipynb": chapter_notebook("A Lab", "Lab work", "live-gamma", deck="none"),
    }
    (root / book.CHAPTER_DIR).mkdir(parents=True, exist_ok=True)
    for name, cells in notebooks.items():
        nbformat.write(new_notebook(cells=cells, metadata={book.FACTS_KEY: FACTS[name]}),
                       root / book.CHAPTER_DIR / name)
    return root


COURSE = plan.Course(
    lectures=(plan.Lecture("lecture", "The first lecture", (
        plan.Part(40, "The first idea.", ("01",)),
        plan.Part(30, "The second idea.", ("02",)),
        plan.Part(5, "Questions."))),),
    live={"live-alpha": ("Alpha shows", "Say alpha."), "live-beta": ("Beta shows", "Say beta."),
          "live-gamma": ("Gamma shows", "Say gamma.")},
    misconceptions=(plan.Misconception("Heads cost more.", "They do not.",
                                       (("02", "The second idea"), ("01", "A part of it"),
                                        ("01", "The idea"))),),
    quiz=(plan.Question("What is x?", "It is 1, as printed.", ("01",)),
          plan.Question("What is 2?", "Two, in both.", ("01", "02"))),
)


@pytest.fixture
def chapter(tmp_path):
    return write_chapter(tmp_path)


def facts_of(root, course=COURSE):
    return plan.chapter_facts(root, course=course)


def tags(i, *tags):
    return lambda cells: cells[i].metadata.__setitem__("tags", list(tags))


def untag(cells):
    for c in cells:
        c.metadata["tags"] = [t for t in book.tags(c) if t != "lecture"]


def text(i, source):
    return lambda cells: cells[i].__setitem__("source", source)


ONE, TWO, LAB = "01_first.ipynb", "02_second.ipynb", "03_lab.ipynb"
SHORT = dataclasses.replace(COURSE.lectures[0], parts=COURSE.lectures[0].parts[:2])
HOMEWORK = dataclasses.replace(COURSE.lectures[0], homework=("07", "01:3", "1:x", "01:1", "03"))
OBJ = "notebooks/01_first.ipynb: its facts' objectives name"
LISTS = "lectures in course/course.toml: the homework of The first lecture lists"
# Each: the notebooks edited, the change of their cells, their facts updated, the course's
# fields replaced, what the PlanError says.
FAILURES = {
    "lecture-too-short": ((), list, {}, {"lectures": (SHORT,)},
                          ["The first lecture add up to 70 minutes, not 75"]),
    "deck-untagged": ((ONE, TWO), untag, {}, {}, [
        "the lecture deck 'lecture' has no cell tagged 'lecture': tag the cells of the first "
        "lecture"]),
    "part-without-screen": ((TWO,), untag, {}, {}, [
        "notebooks/02_second.ipynb: no cell is tagged 'lecture'"]),
    "deck-notebook-in-no-part": ((LAB,), tags(2, "lecture"), {}, {}, [
        "notebooks/03_lab.ipynb: it has cells tagged 'lecture', but no part of The first "
        "lecture in course/course.toml names its notebook"]),
    "unknown-live-tag": ((TWO,), tags(5, "lecture", "live-unknown"), {}, {}, [
        "notebooks/02_second.ipynb: the cell tagged 'live-unknown'",
        "not in the live cells of course/course.toml"]),
    "live-tag-on-no-cell": ((), list, {}, {"live": {**COURSE.live, "live-delta": ("D", "S.")}},
                            ["no cell of the chapter is tagged 'live-delta'"]),
    "objectives-too-many": ((ONE,), list, {"objectives": [[1], [], [1]]}, {}, [
        "notebooks/01_first.ipynb: its facts' objectives hold 3 lists of exercises, one per "
        "bullet of its \"What you will learn\", which has 2"]),
    "objective-no-exercise": ((TWO,), list, {"objectives": [[9], []]}, {}, [
        "notebooks/02_second.ipynb: its facts' objectives name exercise 9, which it does not "
        "have (its exercises: [1, 2])"]),
    "objectives-reworded": ((ONE,), text(1, "## What you will learn\n\n- only one thing."),
                            {}, {}, ["notebooks/01_first.ipynb: its facts' objectives hold 2 "
                                     "lists", "which has 1: re-map them"]),
    "objective-elsewhere-wrong": ((ONE,), list, {"objectives": [["07:1", "02:9", "2:1"], [True]]},
                                  {}, [
        f"{OBJ} '07:1', but notebook 07 is not in the chapter", f"{OBJ} '02:9', which notebook "
        "02 does not have (its exercises: [1, 2])", f"{OBJ} '2:1', not an exercise K or \"NN:K\"",
        f"{OBJ} True, not"]),
    "heading-renamed": ((TWO,), text(2, "## The idea, renamed\n\nSome prose."), {}, {}, [
        "misconceptions in course/course.toml: notebooks/02_second.ipynb has no section \"The "
        "second idea\"", '"The idea, renamed"']),
    "unknown-d2l-section": ((ONE,), list, {"d2l_sections": [["Multi-head attention", ""]]},
                            {}, ["01_first.ipynb: its facts' d2l_sections name \"Multi-head "
                                 "attention\", which is not in D2L_SECTIONS"]),
    "builds-on-missing": ((ONE,), list, {"builds_on": ["07"]}, {}, [
        "01_first.ipynb: its facts' builds_on names notebook 07, which is not in the chapter"]),
    "homework-wrong": ((), list, {}, {"lectures": (HOMEWORK,)}, [  # the exercises have no points
        f"{LISTS} '07': notebook 07 is not in the chapter", f"{LISTS} '01:3': notebook 01 has "
        "no exercise 3", f"{LISTS} '1:x': not \"NN\"", f"{LISTS} '01:1': it carries no points",
        f"{LISTS} '03': it carries no points"]),
}


@pytest.mark.parametrize("case", FAILURES)
def test_a_wrong_table_fact_or_heading_stops_the_plan_naming_it(chapter, case):
    names, change, facts, course, says = FAILURES[case]
    for name in names:
        nb = book.read(chapter / book.CHAPTER_DIR / name)
        change(nb.cells)
        nb.metadata[book.FACTS_KEY].update(facts)
        nbformat.write(nb, chapter / book.CHAPTER_DIR / name)
    with pytest.raises(plan.PlanError) as error:
        facts_of(chapter, dataclasses.replace(COURSE, **course))
    assert [s for s in says if s not in str(error.value)] == [], str(error.value)


# --- the lectures' path ---------------------------------------------------------------------

def test_the_path_adds_up_to_the_lecture_with_the_decks_screens(chapter):
    facts = facts_of(chapter)
    (lec,) = facts.plan.lectures
    assert sum(part.minutes for part in lec.parts) == plan.LECTURE_MINUTES == 75
    ranges = lecture.screen_ranges(chapter, "lecture")
    assert [p.screens for p in lec.parts] == [ranges["notebooks/01_first.ipynb"],
                                              ranges["notebooks/02_second.ipynb"], None]
    assert lec.parts[0].screens[0] == 2 and lec.screens == lec.parts[1].screens[1]
    page = plan.render(facts, PUB)
    rows = re.findall(r"(?m)^\| (\d+)–(\d+) \| (.*) \| (.*) \| (.*) \|$", page)
    assert [(int(a), int(b)) for a, b, *_ in rows] == [(0, 40), (40, 70), (70, 75)]
    first, second, questions = rows
    assert first[2] == "[First Things](notebooks/01_first.ipynb): The first idea."
    one_first, one_last = ranges["notebooks/01_first.ipynb"]
    assert first[3] == f"{one_first}–{one_last}" and questions[3] == "—"
    assert first[4] == "`live-alpha`" and second[4] == "`live-beta`"
    assert '<a href="slides/lecture.html">' in page
    assert "In the plan: part 2 of the first lecture (30 min, screens" in page


def test_the_page_names_live_cells_objectives_misconceptions_labs_and_folds_the_quiz(chapter):
    facts = facts_of(chapter)
    assert [(f.number, c.tag, c.section, c.purpose) for f, c in facts.plan.live] == [
        ("01", "live-alpha", "The idea", "Alpha shows"),
        ("02", "live-beta", "The second idea", "Beta shows"),
        ("03", "live-gamma", "Lab work", "Gamma shows")]
    assert facts[0].objectives == ["the first thing, over two lines;", "the second thing."]
    assert facts.plan.objectives["notebooks/01_first.ipynb"] == [
        ("the first thing, over two lines;", [1, 2]), ("the second thing.", [])]
    page = plan.render(facts, PUB)
    assert re.findall(r"(?m)^## (.*)$", page) == [*plan.course_headings(facts.plan),
                                                  "Grading the homework", "First Things",
                                                  "Second Things", "A Lab"]
    assert plan.course_headings(facts.plan)[:2] == ["The first lecture: 75 minutes", "Labs"]
    assert ('| `live-beta` | [02](notebooks/02_second.ipynb), “The second idea” | Beta shows '
            '| Say beta. |') in page
    assert '- `live-alpha` in “The idea”: Alpha shows. Say alpha.' in page
    assert "[6]" not in page and "execution" not in page
    assert "1. the first thing, over two lines; *Assessed by:* exercises 1 and 2." in page
    assert "2. the second thing. *Assessed by:* no exercise." in page  # shown, honestly
    assert "2. the second thing. *Assessed by:* exercise 2." in page  # notebook 2's
    assert ('| Heads cost more. | They do not. | [notebook 2](notebooks/02_second.ipynb), '
            '“The second idea”; [notebook 1](notebooks/01_first.ipynb), “A part of it” and '
            '“The idea” |') in page
    assert ("- [A Lab](notebooks/03_lab.ipynb), after notebooks 1 and 2: Work in the lab."
            in page)
    assert "In the plan: a lab, after notebooks 1 and 2." in page
    url = plan.D2L + plan.D2L_SECTIONS["Multi-Head Attention"]
    assert (f"| [First Things](notebooks/01_first.ipynb) | — | [Multi-Head Attention]({url}) "
            "(all of it) | rank |") in page
    assert "| [A Lab](notebooks/03_lab.ipynb) | 01, 02 | — | — |" in page
    assert "| Notebook | Read, min | Run, s (2-core CPU) |" in page
    assert "on a 2-core CPU\n  like Colab's" in page
    quiz = page.split("## A concept quiz", 1)[1].split("\n## ", 1)[0]
    folded = re.findall(r"<details><summary>Answer</summary>\n\n(.*?)\n\n</details>", quiz,
                        re.DOTALL)
    assert folded == ["It is 1, as printed. (notebook 1)", "Two, in both. (notebooks 1 and 2)"]
    unfolded = re.sub(r"<details>.*?</details>", "", quiz, flags=re.DOTALL)
    assert "**1.** What is x?" in unfolded and "**2.** What is 2?" in unfolded
    assert "It is 1" not in unfolded and "Two, in both" not in unfolded


@pytest.mark.parametrize("entries, says", [  # "NN:K": exercise K of notebook NN
    ([2, "01:2", "01:1"], "exercise 2, and exercises 1 and 2 of notebook 1"),
    (["03:1", "01:2", 1], "exercise 1, exercise 2 of notebook 1, and exercise 1 of notebook 3"),
    (["01:1"], "exercise 1 of notebook 1"), ([], "no exercise")])
def test_an_objective_names_its_exercises_here_or_elsewhere(chapter, entries, says):
    nb = book.read(path := chapter / book.CHAPTER_DIR / TWO)
    nb.metadata[book.FACTS_KEY]["objectives"] = [entries, []]
    nb.cells[1].source = "## What you will learn\n\n- one;\n- two (not assessed).\n\nNo bullet."
    nbformat.write(nb, path)
    page = plan.render(facts_of(chapter), PUB).split("\n## Second Things\n")[1]
    assert f"\n1. one; *Assessed by:* {says}.\n2. two (not assessed).\n" in page


def test_a_live_cell_in_a_part_is_named_with_its_section(tmp_path):
    cells = chapter_notebook("First Things", "The idea", "live-alpha")
    cells[5].metadata["tags"] = ["lecture", "live-beta"]  # under "### A part of it"
    cells[3].metadata["tags"] = ["lecture"]
    write_chapter(tmp_path, {"01_first.ipynb": cells})
    course = dataclasses.replace(
        COURSE, lectures=(plan.Lecture("lecture", "L", (plan.Part(75, "All.", ("01",)),)),),
        live={"live-beta": ("B", "Say.")}, misconceptions=(), quiz=())
    (only,) = facts_of(tmp_path, course)[0].live
    assert only.section == "The idea › A part of it"


def test_the_figure_has_alt_text_and_is_written_beside_the_page(chapter, tmp_path):
    facts = facts_of(chapter)
    src = tmp_path / "src"
    src.mkdir()
    page = plan.write_page(src / "plan.md", facts, PUB).read_text(encoding="utf-8")
    (alt,) = re.findall(r"!\[(.*?)\]\(" + re.escape(plan.MAP_FIGURE) + r"\)", page)
    assert alt.startswith("Which notebook builds on which")
    assert "01 First Things (first lecture) starts the chapter." in alt
    assert "03 A Lab (lab) builds on 01 and 02." in alt
    assert (src / plan.MAP_FIGURE).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert facts.plan.edges == [("01", "02"), ("01", "03"), ("02", "03")]


def test_without_a_course_the_page_is_the_inventory(chapter):
    facts = facts_of(chapter, course=None)
    assert facts.plan is None and [c.tag for c in facts[0].live] == ["live-alpha"]
    page = plan.render(facts, PUB)
    assert [h for h in re.findall(r"(?m)^## (.*)$", page)] == [
        "Grading the homework", "First Things", "Second Things", "A Lab"]
    assert '- `live-alpha` in “The idea”\n' in page
    assert plan.load_course(chapter) is None


# --- the course file, and the chapter's own course and facts -------------------------------

def test_the_course_file_is_read_with_its_text_unwrapped(tmp_path):
    topics = [part.topic for lec in plan.load_course().lectures for part in lec.parts]
    assert all(topic == " ".join(topic.split()) for topic in topics) and len(topics) == 9
    (tmp_path / "course").mkdir()
    (tmp_path / plan.COURSE_FILE).write_text("[[lectures]]\ndeck = 'lecture'\n")
    with pytest.raises(plan.PlanError, match="course/course.toml: an entry lacks its 'parts'"):
        plan.load_course(tmp_path)


def test_the_chapters_live_table_says_one_sentence_a_cell():
    # that its tags are exactly the chapter's: test_the_chapters_plan_holds_together
    for tag, (purpose, say) in plan.load_course().live.items():
        assert tag.startswith(book.LIVE_PREFIX) and purpose and say.endswith("."), tag
        assert len(re.findall(r"[.?!](?:\s|$)", say)) == 1, f"{tag}: one sentence to say"


def test_the_first_lectures_homework_has_students_implement_multi_head_attention():
    facts = plan.chapter_facts()
    first = facts.plan.lectures[0]
    assert [f.number for f in first.whole] == ["01", "02", "03", "04", "05"]
    (tenth,) = [exercises for f, exercises in first.homework if f.number == "10"]
    assert [e.number for e in tenth] == [1, 2]
    assert (f"\n\nHomework, {first.homework_points:g} points: the exercises of notebooks 1, 2, "
            "3, 4 and 5, and exercises 1 and 2 of notebook 10.\n\n## The second lecture"
            ) in plan.render(facts, PUB)
    # about a quarter of the lecture's homework
    points = sum(e.points for e in tenth)
    assert first.homework_points / 5 <= points <= first.homework_points / 3, points


def test_the_chapters_plan_holds_together():
    """The chapter's course and every notebook's facts pass the plan's checks (as `make
    chapter` runs them): lectures of 75 minutes whose parts name their decks' notebooks."""
    facts = plan.chapter_facts()
    assert [lec.deck for lec in facts.plan.lectures] == list(book.LECTURE_DECKS)
    for lec in facts.plan.lectures:
        assert sum(p.minutes for p in lec.parts) == lec.minutes == 75, lec.title
    assert [f.number for f in facts.plan.builds_on["notebooks/08_spelling_to_sound.ipynb"]] == [
        "04", "07"]
    assert 8 <= len(facts.plan.quiz) <= 12
    assert all(where for _, _, where in facts.plan.quiz)


@pytest.mark.parametrize("path", book.chapter_notebooks(), ids=lambda path: path.stem)
def test_every_objective_is_assessed_or_says_it_is_not(path):  # plan.NOT_ASSESSED
    nb = book.read(path)
    table = book.facts(nb).get("objectives", [])
    bare = [text for i, text in enumerate(plan.objectives(nb))
            if not (i < len(table) and table[i]) and plan.NOT_ASSESSED not in text.lower()]
    assert not bare, f"{path.name}: no exercise assesses {bare}"


def test_the_plan_the_readme_and_the_grading_guide_agree():
    """One grading workflow, stated once: the plan and the README link to the guide, and the
    guide's usage line has every variable of the Makefile's grade target and every naming
    rule of course/roster.py."""
    guide = (book.ROOT / plan.GRADING_GUIDE).read_text(encoding="utf-8")
    readme = (book.ROOT / "README.md").read_text(encoding="utf-8")
    page = plan.render(plan.chapter_facts(), colab.load_publication(book.ROOT / "pyproject.toml"))
    assert f"/{plan.GRADING_GUIDE})" in page and f"]({plan.GRADING_GUIDE})" in readme
    makefile = (book.ROOT / "Makefile").read_text(encoding="utf-8")
    rule = makefile[makefile.index("\ngrade:"):].split("\n\n")[0]
    used = set(re.findall(r"\$\(if \$\((\w+)\)", rule)) | {"SUBMISSIONS", "OUT", "JOBS"}
    usage = next(line for line in guide.splitlines() if line.strip().startswith("make grade"))
    assert used == set(re.findall(r"\b([A-Z]+)=", usage)), (used, usage)
    assert all(name in guide for name in ("Canvas", "Moodle", "ID__"))
    assert "ID__" not in page and "ID__" not in readme  # the naming rule is the guide's alone
