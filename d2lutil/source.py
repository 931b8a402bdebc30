"""The library's own code, shown in a notebook where the lesson discusses it.

``show_code(obj, start, stop)`` displays the lines of ``obj``'s source from the first
that contains ``start`` through the next that contains ``stop``, as a Python code block:
a notebook shows a few lines of the code that runs, read from the library when the cell
runs, never a copy. Its plain-text form is the code itself, so a re-run notebook whose
stored excerpt no longer matches the library differs where it is compared.
"""

import inspect
import textwrap

__all__ = ["SourceCode", "excerpt", "show_code"]


class SourceCode:
    """Lines of library code: a Python code block in a notebook (Markdown), the code
    itself as plain text."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text

    def _repr_markdown_(self):
        return f"```python\n{self.text}\n```"


def _line_with(lines, marker, after, obj):
    for i in range(after, len(lines)):
        if marker in lines[i]:
            return i
    raise ValueError(f"no line of the source of {obj.__qualname__} from line {after + 1} on "
                     f"contains {marker!r}")


def excerpt(obj, start=None, stop=None):
    """The source of ``obj`` (a function, method or class), dedented: from the first line
    that contains ``start`` (the first line if None) through the first line from there
    that contains ``stop`` (the last line if None). ``ValueError`` if a marker is not
    found."""
    lines = inspect.getsource(obj).splitlines()
    first = 0 if start is None else _line_with(lines, start, 0, obj)
    last = len(lines) - 1 if stop is None else _line_with(lines, stop, first, obj)
    return textwrap.dedent("\n".join(lines[first:last + 1]))


def show_code(obj, start=None, stop=None):
    """``excerpt(obj, start, stop)`` as a ``SourceCode``: the last line of a notebook
    cell that returns it shows the lines as Python code."""
    return SourceCode(excerpt(obj, start, stop))
