r"""How hints, solutions and check messages are shown.

Hints and solutions are Markdown-light text: maths between single dollars in LaTeX
(``$\sum_i \xi_i c_i(x)$``), code between backticks (```ex1.hint()```), everything else
literal (``*``, ``_`` and ``[`` need no escaping; a literal dollar is not possible). In
a Jupyter kernel (JupyterLab, Colab) a :class:`Message` is displayed as Markdown, the
maths typeset; elsewhere (a terminal) its raw text is printed, dollars and backticks as
written, as Kaggle's learntools does. ``check`` messages are plain text. Everything
printed is wrapped to ``WIDTH`` = 79 characters, the notebooks' line length.
"""

import re
import sys
import textwrap

WIDTH = 79  # every line a notebook prints fits the notebooks' 79 columns

_SPAN = re.compile(r"(`[^`]*`|\$[^$]*\$)")
_MARKDOWN_SPECIAL = re.compile(r"([\\*_\[\]<>#|~])")


def wrap(text):
    """``text`` wrapped to WIDTH columns, each line of it a paragraph ("- " a list item)."""
    return "\n".join(textwrap.fill(p, WIDTH, subsequent_indent="  " if p.startswith("- ")
                                   else "") if p.strip() else p for p in text.split("\n"))


def say(text):
    """Print ``text`` wrapped to WIDTH columns, paragraph by paragraph."""
    print(wrap(text))


def spans(text, what):
    """``text`` cut into ("text" | "math" | "code", content) pieces.

    An unmatched ``$`` or backtick is a ValueError that names ``what`` ("hint 2 of
    exercise 7"), so an exercise whose text Markdown would garble fails when created.
    """
    pieces = []
    for piece in _SPAN.split(text):
        if piece.startswith("`") and piece.endswith("`") and len(piece) > 1:
            pieces.append(("code", piece[1:-1]))
        elif piece.startswith("$") and piece.endswith("$") and len(piece) > 2:
            pieces.append(("math", piece[1:-1]))
        elif "$" in piece or "`" in piece:
            mark = "$" if "$" in piece else "`"
            raise ValueError(f"{what} has an unmatched {mark}: maths goes between two $, "
                             f"code between two backticks: {text!r}")
        elif piece:
            pieces.append(("text", piece))
    return pieces


def _markdown(text):
    """Markdown of hint or solution ``text``: its maths and code as they are, the rest
    escaped, each line a paragraph ("- " lines a list)."""
    out = []
    for kind, content in spans(text, "the text"):
        if kind == "math":
            out.append(f"${content}$")
        elif kind == "code":
            out.append(f"`{content}`")
        else:
            out.append(_MARKDOWN_SPECIAL.sub(r"\\\1", content))
    lines = "".join(out).split("\n")
    return "".join(line + ("\n" if i + 1 < len(lines) and line.startswith("- ")
                           and lines[i + 1].startswith("- ") else "\n\n")
                   for i, line in enumerate(lines)).rstrip("\n")


class Message:
    """A hint or a solution as shown: Markdown in Jupyter, its raw text elsewhere.

    ``Message("Exercise 1, hint 1 of 2:", text)`` holds ``text`` (maths between $, code
    between backticks) after the bold ``lead``. ``markdown`` is what Jupyter renders (its
    ``_repr_markdown_``); ``plain`` is the lead and the text as written, wrapped to
    WIDTH: its ``str`` and ``repr``, Jupyter's text/plain.
    """

    __slots__ = ("markdown", "plain")

    def __init__(self, lead, text):
        self.markdown = f"**{_markdown(lead)}** {_markdown(text)}"
        self.plain = wrap(f"{lead} {text}")

    def _repr_markdown_(self):
        return self.markdown

    def __repr__(self):
        return self.plain

    __str__ = __repr__


def jupyter_display():
    """IPython's ``display`` when a Jupyter kernel runs this code, else None.

    IPython is never imported here: a kernel has imported it already.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    from IPython.display import display

    return display


def show(message):
    """Display ``message`` as Markdown in Jupyter; print its raw text elsewhere."""
    display = jupyter_display()
    if display is None:
        print(message.plain)
    else:
        display(message)
