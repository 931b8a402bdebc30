"""Do the notebooks' asserts hold beyond their seeds? Run them with every seed shifted by K.

    python tests/notebooks/robust.py [NOTEBOOK...] [--k 1 2 3 4 5] [--keep-going]
    # = make robust

Each notebook (default: every chapter and solutions notebook, tools/book.py) runs top to
bottom once per K in a fresh kernel, as `make execute` runs it (tools/chapter.py: the
venv's ``python3``, its own folder as working directory, the same cell timeout), after a
first, hidden cell that installs tests/notebooks/seedshift.py with that K: every seed the
notebook or d2lutil sets (``torch.manual_seed``, ``torch.Generator().manual_seed``,
``numpy.random.default_rng``/``seed``/``RandomState``, ``random.seed``) becomes seed + K.
No output is compared; every assert runs. Cells tagged ``raises-exception`` may raise.

One line per notebook and K: ``ok``, or the first failing cell (its index among all
the notebook's cells, from 0, as tools/chapter.py and tests/notebooks/hygiene.py name cells;
nbval counts code cells only), the line of the cell that raised and the exception. With
``--keep-going`` the run goes on after a failing cell and lists every later failing cell
under it (some may only follow from the first). A total line ends the report; the exit
status is 1 if any run failed.
"""

import argparse
import asyncio
import concurrent.futures
import os
import pathlib
import re
import sys
import time

from nbclient.exceptions import CellControlSignal, CellExecutionError, DeadKernelError
from nbformat.v4 import new_code_cell

TOOLS = str(pathlib.Path(__file__).resolve().parents[2] / "tools")
if TOOLS not in sys.path:  # run as a script (make robust): tools/book.py by name, as in tests
    sys.path.insert(0, TOOLS)
import book  # noqa: E402

DEFAULT_KS = (1, 2, 3, 4, 5)
SHIM = pathlib.Path(__file__).resolve().with_name("seedshift.py")
ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
CELL_LINE_RE = re.compile(r"^Cell In\[\d+\], line (\d+)", re.MULTILINE)
MAX_REASON = 200  # characters of a failure's description


def shim_source(k, shim=SHIM):
    """The hidden first cell: load tests/notebooks/seedshift.py (by its path: that folder is
    not on the kernel's path) and install it with ``k``, leaving no name in the notebook's
    namespace."""
    return (
        "def _install_seed_shift():\n"
        "    import importlib.util\n"
        "    import sys\n"
        f"    spec = importlib.util.spec_from_file_location('seedshift', {str(shim)!r})\n"
        "    module = importlib.util.module_from_spec(spec)\n"
        "    sys.modules['seedshift'] = module\n"
        "    spec.loader.exec_module(module)\n"
        f"    module.install({int(k)})\n"
        "\n"
        "\n"
        "_install_seed_shift()\n"
        "del _install_seed_shift\n"
    )


def describe_failure(cell):
    """``line N: <source line> -> Name: message`` for a code cell whose outputs hold an
    error (``N`` from the traceback's frame of the cell), shortened to one line."""
    error = next((out for out in cell.get("outputs", []) if out.output_type == "error"), None)
    if error is None:
        return "failed without an error output"
    exception = f"{error.ename}: {error.evalue}" if error.evalue else error.ename
    traceback = ANSI_RE.sub("", "\n".join(error.get("traceback", [])))
    where = ""
    m = CELL_LINE_RE.search(traceback)
    lines = cell.source.splitlines()
    if m and 1 <= int(m.group(1)) <= len(lines):
        number = int(m.group(1))
        where = f"line {number}: {lines[number - 1].strip()} -> "
    text = " ".join((where + exception).split())
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 3] + "..."


def run_shifted(path, k, keep_going=False):
    """Run the notebook at ``path`` with every seed shifted by ``k``; return the list of
    (cell index, description) of its failing cells, empty if every cell ran."""
    # Its own event loop, closed at the end: a run may be in a worker thread (--jobs).
    return asyncio.run(_run_shifted(path, k, keep_going))


async def _run_shifted(path, k, keep_going):
    nb = book.clear_outputs(book.read(path))
    nb.cells.insert(0, new_code_cell(shim_source(k)))
    client = book.notebook_client(nb, path)
    failures = []
    async with client.async_setup_kernel():
        for index, cell in enumerate(nb.cells):
            try:
                await client.async_execute_cell(
                    cell, index, execution_count=client.code_cells_executed + 1)
            except CellExecutionError:
                if index == 0:
                    raise RuntimeError(
                        f"the seed shift did not install: {describe_failure(cell)}") from None
                failures.append((index - 1, describe_failure(cell)))
                if not keep_going:
                    break
            except (CellControlSignal, DeadKernelError) as error:  # a timeout, a dead kernel
                failures.append((index - 1, f"{type(error).__name__}: {error}"))
                break
    return failures


def report_line(path, k, failures, seconds):
    try:
        name = book.relpath_of(path)
    except book.NotebookError:  # a notebook outside the repository (the tests' demo)
        name = str(path)
    if not failures:
        return f"K={k} {name}: ok ({seconds:.0f} s)"
    (first, reason), rest = failures[0], failures[1:]
    lines = [f"K={k} {name}: FAILED cell {first}: {reason} ({seconds:.0f} s)"]
    lines += [f"    also cell {index}: {why}" for index, why in rest]
    return "\n".join(lines)


def _timed_run(path, k, keep_going):
    start = time.perf_counter()
    failures = run_shifted(path, k, keep_going)
    return failures, time.perf_counter() - start


def check(paths, ks=DEFAULT_KS, keep_going=False, out=None, jobs=1):
    """Run every notebook of ``paths`` for every K of ``ks``, ``jobs`` runs at a time (each
    in its own kernel), printing a line per run in order and a total (to
    ``out``, default stdout); return the number of failed runs."""
    out = out or sys.stdout
    started, failed = time.perf_counter(), 0
    plan = [(path, k) for path in paths for k in ks]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = pool.map(_timed_run, [p for p, _ in plan], [k for _, k in plan],
                           [keep_going] * len(plan))
        for (path, k), (failures, seconds) in zip(plan, results, strict=True):
            failed += bool(failures)
            print(report_line(path, k, failures, seconds), file=out, flush=True)
    runs = len(paths) * len(ks)
    print(f"robust: {runs - failed} of {runs} runs ok ({len(paths)} notebooks, "
          f"K = {' '.join(map(str, ks))}) in {time.perf_counter() - started:.0f} s",
          file=out, flush=True)
    # The closing line in the form CI reads for any test runner: "N passed, N failed".
    print(f"robust: {runs - failed} passed, {failed} failed", file=out, flush=True)
    return failed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=pathlib.Path,
                        help="default: every chapter and solutions notebook (tools/book.py)")
    parser.add_argument("--k", nargs="+", type=int, default=list(DEFAULT_KS), metavar="K",
                        help="the shifts to run (default: 1 2 3 4 5)")
    parser.add_argument("--keep-going", action="store_true",
                        help="after a failing cell, run the rest and list every failing cell")
    parser.add_argument("--jobs", type=int, default=1,
                        help="runs at a time, each in its own kernel (default: 1)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    missing = [str(p) for p in args.notebooks if not p.is_file()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")
    paths = args.notebooks or book.all_notebooks()
    return 1 if check(paths, args.k, args.keep_going, jobs=args.jobs) else 0


if __name__ == "__main__":
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    sys.exit(main())
