"""Each notebook's exercises, its starter cells and its solutions agree (issue 13).

For chapter notebook NN: ``d2lutil.exercises.nbNN`` has one ``exN`` per numbered exercise
of the Exercises section; each has a starter cell there that calls ``exN.check`` once, with
exactly the answer names ``exN`` declares (``Exercise(..., answers=...)``, which the grader
collects), and stores "not answered yet"; no cell of the chapter calls ``hint()`` or
``solution()``; the solutions notebook asserts ``exN.check(...)`` and stores "correct"; an
exercise with an open-ended part says "open-ended" in its Markdown.
"""

import ast
import importlib
import re

import pytest

import book

CHAPTER = book.chapter_notebooks()
EXERCISE_ITEM = re.compile(r"(?m)^(\d+)\.\s")


def name_of(path):
    return path.relative_to(book.ROOT).as_posix()


def exercises_of(path):
    module = importlib.import_module(f"d2lutil.exercises.nb{book.number(path)}")
    found = {}
    for name in module.__all__:
        exercise = getattr(module, name)
        assert name == exercise.name, f"{module.__name__}.{name} is {exercise.name}"
        found[exercise.number] = exercise
    return found


def exercise_section(nb):
    """The cells from '## Exercises' up to '## References'."""
    start = next(i for i, c in enumerate(nb.cells)
                 if c.cell_type == "markdown" and "## Exercises" in c.source)
    stop = next(i for i, c in enumerate(nb.cells)
                if c.cell_type == "markdown" and c.source.lstrip().startswith("## References"))
    return nb.cells[start:stop]


def items(cells):
    """{number: Markdown text} of the numbered exercises."""
    found = {}
    for cell in cells:
        if cell.cell_type != "markdown":
            continue
        text = cell.source.split("## Exercises")[-1]
        parts = EXERCISE_ITEM.split(text)
        for number, body in zip(parts[1::2], parts[2::2], strict=True):
            found[int(number)] = body
    return found


def starter_cells(cells, exercise):
    return [c for c in cells if c.cell_type == "code"
            and re.search(rf"\b{exercise.name}\.check\(", c.source)]


def check_arguments(source, name):
    """The arguments, as source, of every ``name.check(...)`` call in ``source``."""
    return [[ast.unparse(a) for a in [*node.args, *node.keywords]]
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "check" and getattr(node.func.value, "id", None) == name]


def stored_text(cell):
    return "".join(book.output_texts(cell))


@pytest.mark.parametrize("path", CHAPTER, ids=name_of)
def test_every_numbered_exercise_has_a_checked_starter_cell(path):
    exercises = exercises_of(path)
    cells = exercise_section(book.read(path))
    assert sorted(items(cells)) == sorted(exercises), (
        f"{name_of(path)}: exercises {sorted(items(cells))} in the Markdown, "
        f"{sorted(exercises)} in d2lutil.exercises.nb{book.number(path)}")
    for number, exercise in exercises.items():
        starters = starter_cells(cells, exercise)
        assert len(starters) == 1, f"{name_of(path)}: one starter cell per exercise ({number})"
        assert "..." in starters[0].source, f"{name_of(path)}: exercise {number} placeholder"
        assert f"Exercise {number}" in starters[0].source.splitlines()[0], (
            f"{name_of(path)}: the starter cell of exercise {number} opens with a comment "
            "naming it and what to compute")
        assert "not answered yet" in stored_text(starters[0]), (
            f"{name_of(path)}: exercise {number} must store 'not answered yet' "
            f"(run make execute NB={name_of(path)})")


@pytest.mark.parametrize("path", CHAPTER, ids=name_of)
def test_each_starter_cell_passes_the_declared_answer_names(path):
    cells = exercise_section(book.read(path))
    for number, exercise in exercises_of(path).items():
        assert len(exercise.answers) == len(exercise.parts), (
            f"d2lutil.exercises.nb{book.number(path)}: {exercise.name} must declare one "
            f"answer name per part, Exercise(..., answers=(...)), got {exercise.answers}")
        for cell in starter_cells(cells, exercise):
            calls = check_arguments(cell.source, exercise.name)
            assert calls == [list(exercise.answers)], (
                f"{name_of(path)}: the starter cell of exercise {number} must call "
                f"{exercise.name}.check({', '.join(exercise.answers)}) once, the names "
                f"{exercise.name} declares (answers=), got {calls}")


@pytest.mark.parametrize("path", CHAPTER, ids=name_of)
def test_chapter_never_shows_hints_or_solutions(path):
    for i, cell in enumerate(book.read(path).cells):
        if cell.cell_type == "code":
            assert not re.search(r"\bex\d+\.(hint|solution)\(", cell.source), (
                f"{name_of(path)}: cell {i} calls hint() or solution(); leave that to the "
                "student")


@pytest.mark.parametrize("path", CHAPTER, ids=name_of)
def test_open_ended_parts_are_marked(path):
    exercises = exercises_of(path)
    texts = items(exercise_section(book.read(path)))
    for number, exercise in exercises.items():
        is_open = exercise.open_ended or exercise.open_part is not None
        assert ("open-ended" in texts[number]) == is_open, (
            f"{name_of(path)}: exercise {number} must say 'open-ended' in its Markdown "
            f"exactly when it has an open-ended part ({is_open})")


@pytest.mark.parametrize("path", CHAPTER, ids=name_of)
def test_solutions_assert_every_check_and_store_correct(path):
    solutions = book.ROOT / book.SOLUTIONS_DIR / f"{book.number(path)}_solutions.ipynb"
    cells = book.read(solutions).cells
    for number, exercise in exercises_of(path).items():
        asserted = [c for c in cells if c.cell_type == "code"
                    and re.search(rf"assert {exercise.name}\.check\(", c.source)]
        assert len(asserted) == 1, f"{name_of(solutions)}: assert {exercise.name}.check once"
        assert f"Exercise {number}: correct." in stored_text(asserted[0]), (
            f"{name_of(solutions)}: exercise {number} must store 'correct'")


@pytest.mark.parametrize("path", CHAPTER, ids=name_of)
def test_every_exercise_has_hints_and_a_solution(path, capsys):
    for exercise in exercises_of(path).values():
        exercise.hint(1)
        exercise.solution()
        out = capsys.readouterr().out
        assert f"Exercise {exercise.number}, hint 1" in out
        assert f"Exercise {exercise.number}, solution:" in out
