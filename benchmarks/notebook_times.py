"""Seconds each chapter notebook takes in a fresh kernel: kernel start, imports, own work.

    python benchmarks/notebook_times.py [NOTEBOOK...]   # default: the chapter notebooks
    python benchmarks/notebook_times.py --runs 3         # each notebook 3 times, the median

Each kernel computes as a 2-core AVX2 laptop's would (``EMULATION``: ATen's AVX2 kernels,
MKL's AVX2 code paths, one thread) unless ``--native``; the table at the end converts its
totals to such a CPU with ``report.COLAB_RATIO`` (or ``--ratio``) and holds them to each
notebook's ``budget_s`` (its metadata: ``book.budgets``) and ``report.CHAPTER_BUDGET_S``.

Each notebook is read into memory and executed with nbclient in a fresh ``python3``
kernel (the venv's), with a throw-away copy of its folder as the working directory, so
the tracked notebooks and their folder are never written to. Three phases, timed on
the wall clock of this process:

* kernel start: from asking for a kernel until it answers ``kernel_info``
  (process start, ipykernel's own imports, the connection);
* imports: one extra cell run first, made of every top-level ``import`` and
  ``from ... import`` statement of the notebook's code cells, in order (found with
  ``ast``; the notebook itself is not changed). Its time is the notebook's import cost,
  whichever cells the imports sit in;
* own work: every cell of the notebook, top to bottom (its imports now cost only a
  dictionary look-up).

The slowest cells are listed too, by index among all cells (Markdown included, from 0).
"""

import argparse
import ast
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tools"))
import book  # noqa: E402  (tools/book.py: which notebooks, clearing outputs)

for _key, _value in (("JUPYTER_PLATFORM_DIRS", "1"), ("PYDEVD_DISABLE_FILE_VALIDATION", "1")):
    os.environ.setdefault(_key, _value)

#: The kernel's environment on an AVX-512 machine that stands in for a 2-core AVX2 CPU:
#: the instruction set is capped (the clock is not: ``report.COLAB_RATIO`` converts), and
#: one thread, as ``make test`` runs the notebooks.
EMULATION = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
             "OMP_NUM_THREADS": "1"}


def import_statements(nb):
    """Source of every top-level import statement of the notebook's code cells, in order.

    IPython syntax (``%matplotlib inline``, ``!pip``) is first turned into Python the way
    the kernel does it; a cell that still does not parse is skipped. Imports inside
    functions or under ``if`` stay where they are.
    """
    from IPython.core.inputtransformer2 import TransformerManager

    transformer = TransformerManager()
    lines = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source = transformer.transform_cell(cell.source)
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            relative = isinstance(node, ast.ImportFrom) and node.level > 0
            if isinstance(node, ast.Import | ast.ImportFrom) and not relative:
                lines.append(ast.get_source_segment(source, node))
    return list(dict.fromkeys(lines))


def run_imports(client, code):
    """Execute ``code`` in the client's kernel (not as a cell of the notebook); wait for it."""
    msg_id = client.kc.execute(code, store_history=False)
    reply = client.wait_for_reply(msg_id)
    content = reply["content"] if reply else {"status": "timeout"}
    if content["status"] != "ok":
        raise RuntimeError(f"the imports failed: {content.get('ename')}: {content.get('evalue')}")


def time_notebook(path, workdir=None, env=None):
    """Run the notebook at ``path`` in a fresh kernel, with ``env`` added to this process's
    environment (e.g. ``EMULATION``); return its timings in seconds."""
    path = pathlib.Path(path)
    nb = book.clear_outputs(book.read(path))
    imports = import_statements(nb)
    with tempfile.TemporaryDirectory(prefix="nbtime-") as tmp:
        run_dir = pathlib.Path(tmp) / path.parent.name
        shutil.copytree(path.parent, run_dir,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "*.ipynb"))
        client = book.notebook_client(nb, path, cwd=workdir or run_dir)
        start = time.perf_counter()
        # The kernel's own stderr (ipykernel's notice about TCP transport) is dropped;
        # errors in cells still arrive as messages and raise CellExecutionError.
        with client.setup_kernel(stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})}):
            client.wait_for_reply(client.kc.kernel_info())
            kernel_ready = time.perf_counter()
            if imports:
                run_imports(client, "\n".join(imports))
            imports_done = time.perf_counter()
            cell_times = []
            for index, cell in enumerate(nb.cells):
                before = time.perf_counter()
                client.execute_cell(cell, index)
                cell_times.append((time.perf_counter() - before, index))
            work_done = time.perf_counter()
    slowest = sorted(cell_times, reverse=True)[:3]
    return {
        "notebook": path.name,
        "kernel_start_s": kernel_ready - start,
        "imports_s": imports_done - kernel_ready,
        "work_s": work_done - imports_done,
        "total_s": work_done - start,
        "import_lines": imports,
        "slowest_cells": [{"cell": i, "seconds": s} for s, i in slowest if s >= 0.05],
    }


def median_run(runs):
    """The run whose total is the median (the lower middle one for an even count)."""
    return sorted(runs, key=lambda run: run["total_s"])[(len(runs) - 1) // 2]


def main(argv=None):
    import report  # benchmarks/report.py: budgets, the conversion, the table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*")
    parser.add_argument("--runs", type=int, default=1,
                        help="times to run each notebook; the run of median total counts")
    parser.add_argument("--native", action="store_true",
                        help="this CPU's own kernels and threads, not the AVX2 emulation")
    parser.add_argument("--ratio", type=float, default=report.COLAB_RATIO,
                        help="seconds on a 2-core AVX2 CPU per second here "
                             f"(default {report.COLAB_RATIO:g})")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.ratio <= 0:
        parser.error(f"--runs must be at least 1 and --ratio positive, got {args.runs} "
                     f"and {args.ratio}")
    env = None if args.native else EMULATION
    results = []
    for path in args.notebooks or book.chapter_notebooks():
        runs = [time_notebook(path, env=env) for _ in range(args.runs)]
        for run in runs:
            print(json.dumps(run), flush=True)
        results.append(median_run(runs))
    if not args.native:
        print()
        print(report.notebook_table(results, args.ratio))
    return 0


if __name__ == "__main__":
    sys.exit(main())
