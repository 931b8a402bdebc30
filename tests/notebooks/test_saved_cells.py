"""The class a student builds is the class the chapter runs (D2L's ``#@save``).

A code cell tagged ``save`` holds methods attached with ``@d2l.add_to_class(Name)``. Each is
``d2lutil.Name``'s method of that name, line for line, comments included; only docstrings
(the library documents its methods, the notebook's prose does) and the decorator differ.
"""

import ast
import inspect
import textwrap

import pytest

import book
import d2lutil

SAVE_TAG = "save"


def methods(source):
    """{(class name, method name): its lines without decorator and docstring}, for every
    function of ``source`` decorated with ``d2l.add_to_class(Name)`` or defined in a class."""
    lines, found = source.splitlines(), {}

    def text(node):
        body = lines[node.lineno - 1:node.end_lineno]  # from the def line, not decorators
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                and isinstance(first.value.value, str):
            doc = range(first.lineno - node.lineno, first.end_lineno - node.lineno + 1)
            body = [line for i, line in enumerate(body) if i not in doc]
        return textwrap.dedent("\n".join(line.rstrip() for line in body))

    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and \
                        getattr(decorator.func, "attr", None) == "add_to_class":
                    found[(decorator.args[0].id, node.name)] = text(node)
    return found


def saved_cells():
    for path in book.chapter_notebooks():
        for i, cell in enumerate(book.read(path).cells):
            if SAVE_TAG in book.tags(cell):
                yield f"{path.name} cell {i}", cell.source


SAVED = list(saved_cells())


@pytest.mark.parametrize("where, source", SAVED, ids=[where for where, _ in SAVED])
def test_a_saved_cell_is_the_library_text(where, source):
    saved = methods(source)
    assert saved, f"{where}: a cell tagged save must define @d2l.add_to_class methods"
    for (cls, name), text in saved.items():
        method = getattr(getattr(d2lutil, cls), name)
        library = methods_of(method)
        assert text == library, (
            f"{where}: {cls}.{name} differs from d2lutil's; copy one into the other\n"
            f"--- notebook\n{text}\n--- d2lutil\n{library}")


def methods_of(method):
    source = textwrap.dedent(inspect.getsource(method))
    tree = ast.parse(source).body[0]
    wrapped = f"@d2l.add_to_class({method.__qualname__.split('.')[0]})\n{source}"
    return methods(wrapped)[(method.__qualname__.split(".")[0], tree.name)]


def test_notebook_3_saves_the_forward_and_its_fold():
    saved = {key for _, source in SAVED for key in methods(source)}
    assert {("MultiHeadAttention", name) for name in
            ("forward", "transpose_qkv", "transpose_output")} <= saved


def test_a_changed_line_is_seen():
    """The comparison can fail: one character of the saved forward changed."""
    where, source = next((w, s) for w, s in SAVED if "def forward" in s)
    changed = source.replace("self.W_o(", "self.W_q(", 1)
    with pytest.raises(AssertionError, match="differs from d2lutil"):
        test_a_saved_cell_is_the_library_text(where, changed)
