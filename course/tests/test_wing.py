"""The course is a wing: the book never imports from course/ (nor the wheel's copies of its
modules, ``d2lutil.exercises.sealed`` and ``.codec``), and tools/ and course/ import without
a circle. Imports are read with ``ast`` from every statement, relative ones resolved."""

import ast
import pathlib

import book
import student_edition

BOOK = ("d2lutil", "tools", "benchmarks", "site")  # the book's code
COURSE = book.ROOT / "course"
SHIPPED = {f"d2lutil.exercises.{pathlib.Path(n).stem}" for n in student_edition.SHIPPED}


def imports(path):
    """Every module name the file at ``path`` imports, with ``from A import b`` as A and
    A.b (b may be a module)."""
    package = ".".join(path.relative_to(book.ROOT).parent.parts)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(filter(None, [*parent, base]))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def modules(folder):
    return {p.stem: p for p in sorted(folder.glob("*.py"))}


def test_the_book_never_imports_the_course():
    course = set(modules(COURSE)) | {"course"}
    found = []
    for folder in BOOK:
        for path in sorted((book.ROOT / folder).rglob("*.py")):
            found += [f"{path.relative_to(book.ROOT)} imports {name}" for name in
                      sorted(imports(path)) if name.split(".")[0] in course or name in SHIPPED]
    assert not found, "\n".join(found)


def circle_in(graph):
    """A circle of ``graph`` ({name: names it imports}) as names, the first one again last,
    or None: depth first, a module met again on the trail closes a circle."""
    trail, done = [], set()

    def visit(name):
        if name in trail:
            return trail[trail.index(name):] + [name]
        if name not in done:
            trail.append(name)
            for found in map(visit, sorted(graph[name])):
                if found:
                    return found
            done.add(trail.pop())
        return None

    return next(filter(None, map(visit, sorted(graph))), None)


def test_tools_and_course_import_without_a_circle():
    tools, course = modules(book.ROOT / "tools"), modules(COURSE)
    assert not set(tools) & set(course), "a module name in both tools/ and course/"
    paths = {**tools, **course}
    graph = {name: {i.split(".")[0] for i in imports(path)} & set(paths) - {name}
             for name, path in paths.items()}
    assert graph["grade"] >= {"roster", "student_edition", "codec"}  # the graph is read
    assert circle_in({"a": {"b"}, "b": {"c"}, "c": {"b"}}) == ["b", "c", "b"]
    found = circle_in(graph)
    assert not found, "an import circle: " + " -> ".join(found)
