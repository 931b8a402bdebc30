"""A synthetic class of submissions for course/grade.py, made from the chapter's notebooks.

For chapter notebook NN: ``empty`` is its exercise-import cell and its starter cells as
the chapter has them; ``right`` is the code of its worked solutions with each ``assert
exK.check(...)`` turned into an assignment of the same answers to the names the exercise
declares; ``wrong`` is the starter cells with every ``...`` a number no exercise takes.
"""

import ast
import importlib
import re

import nbformat

import book

WRONG = "12345.0"  # no answer of the chapter is this number


def notebook(sources):
    """A student's notebook of code cells ``sources`` (after a title)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# A student's notebook")]
    nb.cells += [nbformat.v4.new_code_cell(s) for s in sources]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def starter_cells(number):
    """The chapter's exercise-import cell and starter cells of notebook ``number``."""
    path = next(p for p in book.chapter_notebooks() if book.number(p) == number)
    return [c.source for c in book.read(path).cells if c.cell_type == "code" and (
        "d2lutil.exercises" in c.source or re.search(r"\bex\d+\.check\(", c.source))]


def empty(number):
    return notebook(starter_cells(number))


def wrong(number):
    cells = [re.sub(r"(=|return) \.\.\.$", rf"\1 {WRONG}", s, flags=re.MULTILINE)
             for s in starter_cells(number)]
    return notebook(cells)


def right(number):
    """The solutions' code, its checked answers bound to the names the exercises declare."""
    module = importlib.import_module(f"d2lutil.exercises.nb{number}")
    path = next(p for p in book.solution_notebooks() if book.number(p) == number)
    sources = []
    for cell in book.read(path).cells:
        if cell.cell_type != "code":
            continue
        lines = cell.source.split("\n")
        for node in reversed(ast.parse(cell.source).body):
            call = node.test if isinstance(node, ast.Assert) else None
            if not (isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "check"):
                continue
            exercise = call.func.value.id
            names = getattr(module, exercise).answers
            values = [ast.get_source_segment(cell.source, a) for a in call.args]
            bind = (f"({', '.join(names)},) = ({', '.join(values)},)\n"
                    f"{exercise}.check({', '.join(names)})")
            lines[node.lineno - 1:node.end_lineno] = bind.split("\n")
        sources.append("\n".join(lines))
    return notebook(sources)


def write(nb, path):
    nbformat.write(nb, str(path))
    return path


def with_cells(nb, sources, at=None):
    """A copy of ``nb`` with code cells of ``sources`` inserted at ``at`` (default: end)."""
    copy = nbformat.reads(nbformat.writes(nb), as_version=4)
    new = [nbformat.v4.new_code_cell(s) for s in sources]
    at = len(copy.cells) if at is None else at
    copy.cells[at:at] = new
    return copy


def replace_in_cells(nb, old, new):
    """A copy of ``nb`` with ``old`` replaced by ``new`` in every code cell."""
    copy = nbformat.reads(nbformat.writes(nb), as_version=4)
    for cell in copy.cells:
        if cell.cell_type == "code":
            cell.source = cell.source.replace(old, new)
    return copy
