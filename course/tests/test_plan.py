"""The teaching plan's course (course/plan.py): the lectures' path, the live cells by tag, the
objectives mapped to exercises, the misconceptions by heading, the quiz and the figure.

Each test builds a small synthetic chapter in tmp_path (two lecture notebooks and a lab, not
executed, each with its facts in its metadata) and a small course for it, and checks both
what the page says and that a wrong table or fact, or a renamed heading, stops the build
with a PlanError naming it. The last tests check the chapter's own course
(``course/course.toml``) and facts.
"""

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


def raises(root, *fragments, course=COURSE):
    """The plan of ``root`` fails with a PlanError whose message holds every fragment."""
    with pytest.raises(plan.PlanError) as error:
        facts_of(root, course)
    for fragment in fragments:
        assert fragment in str(error.value), str(error.value)
    return str(error.value)


def edit(root, name, change, **facts):
    """Apply ``change`` to the cells of the stored notebook ``name``, and ``facts`` to its
    facts."""
    path = root / book.CHAPTER_DIR / name
    nb = book.read(path)
    change(nb.cells)
    nb.metadata[book.FACTS_KEY].update(facts)
    nbformat.write(nb, path)


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


def test_a_path_that_misses_the_lectures_length_fails(chapter):
    short = dataclasses.replace(COURSE.lectures[0], parts=COURSE.lectures[0].parts[:2])
    raises(chapter, "The first lecture add up to 70 minutes, not 75",
           course=dataclasses.replace(COURSE, lectures=(short,)))


def test_a_deck_without_tagged_cells_fails_naming_it(chapter):
    for name in ("01_first.ipynb", "02_second.ipynb"):
        edit(chapter, name, lambda cells: [c.metadata.pop("tags", None) for c in cells
                                           if "lecture" in book.tags(c)])
    raises(chapter, "the lecture deck 'lecture' has no cell tagged 'lecture': tag the cells of "
                    "the first lecture")


def test_a_part_whose_notebook_has_no_screen_fails(chapter):
    edit(chapter, "02_second.ipynb", lambda cells: [
        c.metadata.__setitem__("tags", [t for t in book.tags(c) if t != "lecture"])
        for c in cells])
    raises(chapter, "notebooks/02_second.ipynb: no cell is tagged 'lecture'")


def test_a_notebook_in_the_deck_but_in_no_part_fails(chapter):
    """A deck is the cells tagged for it, wherever they are: each of its notebooks has a part."""
    edit(chapter, "03_lab.ipynb", lambda cells: cells[2].metadata.__setitem__("tags", ["lecture"]))
    raises(chapter, "notebooks/03_lab.ipynb: it has cells tagged 'lecture', but no part of The "
                    "first lecture in course/course.toml names its notebook")


# --- live cells -----------------------------------------------------------------------------

def test_live_cells_are_named_by_tag_and_section(chapter):
    facts = facts_of(chapter)
    assert [(f.number, c.tag, c.section, c.purpose) for f, c in facts.plan.live] == [
        ("01", "live-alpha", "The idea", "Alpha shows"),
        ("02", "live-beta", "The second idea", "Beta shows"),
        ("03", "live-gamma", "Lab work", "Gamma shows")]
    page = plan.render(facts, PUB)
    assert ('| `live-beta` | [02](notebooks/02_second.ipynb), “The second idea” | Beta shows '
            '| Say beta. |') in page
    assert '- `live-alpha` in “The idea”: Alpha shows. Say alpha.' in page
    assert "[6]" not in page and "execution" not in page


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


def test_an_unknown_live_tag_fails_naming_it(chapter):
    edit(chapter, "02_second.ipynb",
         lambda cells: cells[5].metadata.__setitem__("tags", ["lecture", "live-unknown"]))
    raises(chapter, "notebooks/02_second.ipynb: the cell tagged 'live-unknown'",
           "not in the live cells of course/course.toml")


def test_a_live_tag_on_no_cell_fails_naming_it(chapter):
    live = {**COURSE.live, "live-delta": ("Delta", "Say delta.")}
    raises(chapter, "no cell of the chapter is tagged 'live-delta'",
           course=dataclasses.replace(COURSE, live=live))


@pytest.mark.parametrize("where, says", [(5, "is on several cells"),
                                         (4, "is on a markdown cell")])
def test_a_live_tag_on_two_cells_or_on_prose_fails(chapter, where, says):
    edit(chapter, "01_first.ipynb",
         lambda cells: cells[where].metadata.__setitem__("tags", ["lecture", "live-alpha"]))
    if where == 4:  # moved, not copied: the prose cell has it alone
        edit(chapter, "01_first.ipynb", lambda cells: cells[3].metadata.__setitem__(
            "tags", ["lecture"]))
    raises(chapter, "notebooks/01_first.ipynb: the tag 'live-alpha' " + says)


# --- objectives and exercises ---------------------------------------------------------------

def test_objectives_are_read_and_mapped_to_exercises(chapter):
    facts = facts_of(chapter)
    assert facts[0].objectives == ["the first thing, over two lines;", "the second thing."]
    assert facts.plan.objectives["notebooks/01_first.ipynb"] == [
        ("the first thing, over two lines;", [1, 2]), ("the second thing.", [])]
    page = plan.render(facts, PUB)
    assert "1. the first thing, over two lines; *Assessed by:* exercises 1 and 2." in page
    assert "2. the second thing. *Assessed by:* no exercise." in page  # shown, honestly
    assert "2. the second thing. *Assessed by:* exercise 2." in page  # notebook 2's


@pytest.mark.parametrize("name, objectives, says", [
    ("01_first.ipynb", [[1], [], [1]], "notebooks/01_first.ipynb: its facts' objectives hold 3 "
                                       "lists of exercises, one per bullet of its \"What you "
                                       "will learn\", which has 2"),
    ("02_second.ipynb", [[9], []], "notebooks/02_second.ipynb: its facts' objectives name "
                                   "exercise 9, which it does not have (its exercises: [1, 2])")])
def test_an_objective_map_that_does_not_fit_fails(chapter, name, objectives, says):
    edit(chapter, name, list, objectives=objectives)
    raises(chapter, says)


def test_a_reworded_objective_list_is_checked_again(chapter):
    edit(chapter, "01_first.ipynb", lambda cells: cells[1].__setitem__(
        "source", "## What you will learn\n\n- only one thing now."))
    raises(chapter, "notebooks/01_first.ipynb: its facts' objectives hold 2 lists",
           "which has 1: re-map them")


# --- misconceptions -------------------------------------------------------------------------

def test_misconceptions_name_notebook_and_section(chapter):
    page = plan.render(facts_of(chapter), PUB)
    assert ('| Heads cost more. | They do not. | [notebook 2](notebooks/02_second.ipynb), '
            '“The second idea”; [notebook 1](notebooks/01_first.ipynb), “A part of it” and '
            '“The idea” |') in page


def test_a_renamed_heading_fails_with_the_notebooks_headings(chapter):
    edit(chapter, "02_second.ipynb", lambda cells: cells[2].__setitem__(
        "source", "## The idea, renamed\n\nSome prose."))
    raises(chapter, "misconceptions in course/course.toml: notebooks/02_second.ipynb has no "
                    "section \"The second idea\"", '"The idea, renamed"')


# --- the quiz -------------------------------------------------------------------------------

def test_the_quiz_folds_every_answer(chapter):
    page = plan.render(facts_of(chapter), PUB)
    quiz = page.split("## A concept quiz", 1)[1].split("\n## ", 1)[0]
    folded = re.findall(r"<details><summary>Answer</summary>\n\n(.*?)\n\n</details>", quiz,
                        re.DOTALL)
    assert folded == ["It is 1, as printed. (notebook 1)", "Two, in both. (notebooks 1 and 2)"]
    unfolded = re.sub(r"<details>.*?</details>", "", quiz, flags=re.DOTALL)
    assert "**1.** What is x?" in unfolded and "**2.** What is 2?" in unfolded
    assert "It is 1" not in unfolded and "Two, in both" not in unfolded


# --- the figure and the prerequisites -------------------------------------------------------

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


def test_labs_and_prerequisites(chapter):
    page = plan.render(facts_of(chapter), PUB)
    assert ("- [A Lab](notebooks/03_lab.ipynb), after notebooks 1 and 2: Work in the lab."
            in page)
    assert "In the plan: a lab, after notebooks 1 and 2." in page
    url = plan.D2L + plan.D2L_SECTIONS["Multi-Head Attention"]
    assert (f"| [First Things](notebooks/01_first.ipynb) | — | [Multi-Head Attention]({url}) "
            "(all of it) | rank |") in page
    assert "| [A Lab](notebooks/03_lab.ipynb) | 01, 02 | — | — |" in page
    assert "| Notebook | Read, min | Run, s (2-core CPU) |" in page
    assert "on a 2-core CPU\n  like Colab's" in page


@pytest.mark.parametrize("facts, says", [
    ({"d2l_sections": [["Multi-head attention", ""]]},
     "01_first.ipynb: its facts' d2l_sections name \"Multi-head attention\", which is not in "
     "D2L_SECTIONS"),
    ({"builds_on": ["07"]}, "01_first.ipynb: its facts' builds_on names notebook 07, which is "
                            "not in the chapter")])
def test_a_fact_naming_what_is_not_there_fails(chapter, facts, says):
    edit(chapter, "01_first.ipynb", list, **facts)
    raises(chapter, says)


def test_without_a_course_the_page_is_the_inventory(chapter):
    facts = facts_of(chapter, course=None)
    assert facts.plan is None and [c.tag for c in facts[0].live] == ["live-alpha"]
    page = plan.render(facts, PUB)
    assert [h for h in re.findall(r"(?m)^## (.*)$", page)] == [
        "Grading the homework", "First Things", "Second Things", "A Lab"]
    assert '- `live-alpha` in “The idea”\n' in page
    assert plan.load_course(chapter) is None


def test_the_course_headings_are_the_pages(chapter):
    facts = facts_of(chapter)
    headings = re.findall(r"(?m)^## (.*)$", plan.render(facts, PUB))
    assert headings == [*plan.course_headings(facts.plan), "Grading the homework",
                        "First Things", "Second Things", "A Lab"]
    assert plan.course_headings(facts.plan)[:2] == ["The first lecture: 75 minutes", "Labs"]


# --- the course file, and the chapter's own course and facts -------------------------------

def test_the_course_file_is_read_with_its_text_unwrapped(tmp_path):
    topics = [part.topic for lec in plan.load_course().lectures for part in lec.parts]
    assert all(topic == " ".join(topic.split()) for topic in topics) and len(topics) == 9
    (tmp_path / "course").mkdir()
    (tmp_path / plan.COURSE_FILE).write_text("[[lectures]]\ndeck = 'lecture'\n")
    with pytest.raises(plan.PlanError, match="course/course.toml: an entry lacks its 'parts'"):
        plan.load_course(tmp_path)


def test_the_chapters_live_table_has_exactly_the_tags_of_issue_31():
    live = plan.load_course().live
    assert set(live) == {
        "live-flat-error", "live-one-vs-two-heads", "live-reshape", "live-wrong-reshape",
        "live-repeat-bug", "live-cross-shapes", "live-causal-map", "live-heatmap",
        "live-ablation", "live-kv-cache", "live-training", "live-head-lab"}
    for tag, (purpose, say) in live.items():
        assert tag.startswith(book.LIVE_PREFIX) and purpose and say.endswith("."), tag
        assert len(re.findall(r"[.?!](?:\s|$)", say)) == 1, f"{tag}: one sentence to say"


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
