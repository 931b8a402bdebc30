"""Execute the chapter's notebooks and render them into HTML.

    python tools/chapter.py execute NOTEBOOK...          # refresh stored outputs in place
    python tools/chapter.py render --out build NOTEBOOK...  # executed copies + HTML + index

``execute`` is the only way outputs get into a tracked notebook: each one is
cleared and run top to bottom in a fresh kernel (the venv's ``python3``), with
the notebook's own folder as working directory. ``render`` never touches the
tracked notebooks: it writes executed copies into the output folder.
"""

import argparse
import html
import pathlib
import sys
import time

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter

TIMEOUT = 600  # seconds per cell


def execute(path):
    """Return the notebook at ``path`` executed top to bottom in a fresh kernel."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            cell.metadata.pop("execution", None)
    client = NotebookClient(
        nb,
        timeout=TIMEOUT,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(pathlib.Path(path).parent)}},
    )
    client.execute()
    return nb


def title_of(nb, fallback):
    """The text of the notebook's first Markdown heading."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return fallback


def cmd_execute(paths):
    for path in paths:
        start = time.perf_counter()
        nb = execute(path)
        nbformat.write(nb, path)
        print(f"executed {path} in {time.perf_counter() - start:.1f} s")


def cmd_render(paths, out):
    out.mkdir(parents=True, exist_ok=True)
    exporter = HTMLExporter()
    entries = []
    for path in map(pathlib.Path, paths):
        start = time.perf_counter()
        nb = execute(path)
        nbformat.write(nb, out / path.name)
        body, _ = exporter.from_notebook_node(nb)
        page = out / f"{path.stem}.html"
        page.write_text(body, encoding="utf-8")
        entries.append((page.name, title_of(nb, path.stem)))
        print(f"rendered {page} in {time.perf_counter() - start:.1f} s")
    items = "\n".join(
        f'  <li><a href="{html.escape(name)}">{html.escape(title)}</a></li>'
        for name, title in entries
    )
    index = out / "index.html"
    index.write_text(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\">"
        "<title>Multi-head and cross-attention</title></head>\n<body>\n"
        "<h1>Multi-head and cross-attention</h1>\n<ol>\n"
        f"{items}\n</ol>\n</body>\n</html>\n",
        encoding="utf-8",
    )
    print(f"\nOpen {index.resolve()} in a browser.")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("execute").add_argument("notebooks", nargs="*")
    render = sub.add_parser("render")
    render.add_argument("--out", type=pathlib.Path, default=pathlib.Path("build"))
    render.add_argument("notebooks", nargs="*")
    args = parser.parse_args(argv)
    if not args.notebooks:
        print("no notebooks given", file=sys.stderr)
        return 0
    if args.command == "execute":
        cmd_execute(args.notebooks)
    else:
        cmd_render(args.notebooks, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
