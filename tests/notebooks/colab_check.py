"""Run the chapter the way Colab would: Python 3.13 with Colab's torch, numpy and matplotlib.

    python tests/notebooks/colab_check.py [NOTEBOOK...]   # default: every notebook (book.py)

1. Builds (once) a venv at $COLAB_VENV (default: colab-py313 in the system's temporary
   folder) from Python 3.13 ($PY313, else ``python3.13`` on PATH, else pyenv's newest 3.13)
   with Colab's versions (as of Aug 2026): torch 2.11, numpy 2.1, matplotlib 3.10, IPython
   7.34, ipykernel 6.17, ipywidgets 7.7.1, plus torchvision/pandas/requests (which d2l
   imports and Colab has) and nbclient to execute. torch is a large download.
2. Runs the stamped setup cell, as in Colab (google.colab imported), with its
   ``git+https://github.com/OWNER/REPO@BRANCH`` pointed at this checkout instead
   (``git+file://<checkout>@BRANCH``: the committed state of the branch, as Colab would get).
3. Checks that torch, numpy, matplotlib, ipykernel and IPython are unchanged by that install.
4. Executes copies of the notebooks in that venv's kernel and prints, per notebook, the
   failing cell and its error, and the cells whose text output differs from the stored one
   (outputs should not depend on the torch version), after the masks of
   tests/notebooks/nbval_sanitize.cfg, as nbval applies them. Exit status 1 when anything
   failed.
"""

import argparse
import configparser
import contextlib
import copy
import importlib.metadata as md
import io
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import types

TOOLS = str(pathlib.Path(__file__).resolve().parents[2] / "tools")
if TOOLS not in sys.path:  # run as a script: tools/book.py and colab.py by name, as in tests
    sys.path.insert(0, TOOLS)
import book  # noqa: E402

ROOT = book.ROOT
SANITIZE_CFG = ROOT / "tests" / "notebooks" / "nbval_sanitize.cfg"
COLAB_PACKAGES = [
    "torch==2.11.0", "numpy==2.1.3", "matplotlib==3.10.9", "torchvision==0.26.*",
    "ipython==7.34.*", "ipykernel==6.17.*", "ipywidgets==7.7.1", "pandas", "requests", "pillow",
    "scipy", "tqdm", "nbclient", "nbformat",
]
WATCHED = ["torch", "numpy", "matplotlib", "ipykernel", "ipython"]
TIMEOUT = 900  # seconds per cell: a first import of torch in a cold venv is slow


def find_python313():
    if os.environ.get("PY313"):
        return os.environ["PY313"]
    found = shutil.which("python3.13")
    # A pyenv shim is on PATH even where 3.13 is installed but not selected, and then
    # fails ("command not found"): take it only if it runs.
    if found and subprocess.run([found, "--version"], capture_output=True).returncode == 0:
        return found
    pyenv = pathlib.Path(os.environ.get("PYENV_ROOT", pathlib.Path.home() / ".pyenv"))
    versions = sorted(pyenv.glob("versions/3.13*/bin/python3"),
                      key=lambda p: [int(x) for x in re.findall(r"\d+", p.parent.parent.name)])
    return str(versions[-1]) if versions else None


def build_venv(venv):
    """Create the Colab-like venv when missing; return its python."""
    python = venv / "bin" / "python"
    if python.exists():
        return python
    base = find_python313()
    if not base:
        sys.exit("error: no Python 3.13 found (PY313, python3.13 on PATH, pyenv); set PY313=...")
    print(f"building {venv} from {base} (torch is a large download)", flush=True)
    start = time.perf_counter()
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--no-cache-dir",
                    "--disable-pip-version-check", "-q", *COLAB_PACKAGES], check=True)
    print(f"built {venv} in {time.perf_counter() - start:.0f} s")
    return python


# --- inside the Colab-like venv ----------------------------------------------------------

def versions():
    return {name: md.version(name) for name in WATCHED}


def sanitizers(path=SANITIZE_CFG):
    """The (pattern, replacement) pairs of nbval's sanitize file."""
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(path, encoding="utf-8")
    return [(re.compile(cfg[s]["regex"]), cfg[s]["replace"]) for s in cfg.sections()]


def texts(cell, masks):
    """What nbval compares of a cell, figures aside (their text differs across versions)."""
    outputs = [o for o in cell.get("outputs", []) if "image/png" not in o.get("data", {})]
    text = "\n".join(book.output_texts({"outputs": outputs}))
    for pattern, replacement in masks:
        text = pattern.sub(replacement, text)
    return text


def recorded_setup_cell(source, in_colab, monkeypatch):
    """Execute a setup cell's code, in Colab (``in_colab``: google.colab faked) or not, with
    a recorder in place of subprocess.run (through pytest's ``monkeypatch``, which undoes
    both): return (what it printed, the commands it ran as (args, keyword arguments)).
    tests/tools/test_colab.py and tests/notebooks/test_setup_cells.py read the cells' pip
    commands so."""
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda args, **kw: calls.append((args, kw)))
    if in_colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    with contextlib.redirect_stdout(io.StringIO()) as out, \
            contextlib.redirect_stderr(io.StringIO()) as err:
        exec(compile(source, "<setup cell>", "exec"), {})
    return out.getvalue() + err.getvalue(), calls


def run_setup_cell(paths, pub, colab):
    """Install d2l and d2lutil with the stamped setup cell; False if that changed anything."""
    setup = next((c.source for p in paths for c in book.read(p).cells
                  if book.SETUP_TAG in book.tags(c)), None)
    if setup is None:
        sys.exit("no notebook has a setup cell: run `python tools/colab.py stamp` first")
    if setup != colab.setup_source(pub):
        sys.exit("the setup cell disagrees with pyproject.toml: run `python tools/colab.py stamp`")
    local = f"git+file://{ROOT}@{pub.branch}"
    before = versions()
    print(f"running the setup cell with {pub.pip_target} -> {local}", flush=True)
    sys.modules["google.colab"] = types.ModuleType("google.colab")
    try:
        exec(compile(setup.replace(pub.pip_target, local), "<setup cell>", "exec"), {})
    finally:
        del sys.modules["google.colab"]
    changed = {k: (before[k], v) for k, v in versions().items() if before[k] != v}
    print("installed: d2l", md.version("d2l"), "d2lutil", md.version("d2lutil"))
    if changed:
        print("FAIL: the setup cell changed", changed)
    else:
        print("ok: " + ", ".join(WATCHED) + " unchanged")
    return not changed


def check_notebook(path, work, masks):
    """Execute a copy of the notebook; return a list of lines to print (empty when fine)."""
    from nbclient.exceptions import CellExecutionError

    copy_dir = work / path.parent.name
    if not copy_dir.exists():
        shutil.copytree(path.parent, copy_dir, ignore=shutil.ignore_patterns("*.ipynb"))
    stored = book.read(path)
    nb = book.clear_outputs(copy.deepcopy(stored))
    client = book.notebook_client(nb, path, timeout=TIMEOUT, cwd=copy_dir)
    try:
        client.execute()
    except CellExecutionError as e:
        lines = [x for x in re.sub(r"\x1b\[[0-9;]*m", "", str(e)).splitlines() if x.strip()]
        return [f"FAIL {path.name}: {lines[-1] if lines else e}"] + [f"   {x}" for x in lines[:12]]
    except Exception as e:  # noqa: BLE001 - report it and go on with the next notebook
        return [f"FAIL {path.name}: {type(e).__name__}: {e}"]
    diffs = []
    for i, (old, new) in enumerate(zip(stored.cells, nb.cells, strict=True)):
        if old.cell_type == "code" and not book.is_ignored(old):
            before, after = texts(old, masks), texts(new, masks)
            if before != after:
                diffs.append((i, before, after))
    if not diffs:
        return []
    out = [f"DIFF {path.name}: {len(diffs)} cell(s) print something else under Colab's versions"]
    for i, old, new in diffs[:5]:
        out.append(f"   cell {i}:\n     stored: {old[:300]!r}\n     colab:  {new[:300]!r}")
    return out


def inside(paths):
    import colab

    print(f"Python {sys.version.split()[0]}:", versions())
    pub = colab.load_publication(ROOT / "pyproject.toml")
    failures = 0 if run_setup_cell(paths, pub, colab) else 1
    masks = sanitizers()
    with tempfile.TemporaryDirectory(prefix="colab-check-") as work:
        for path in paths:
            problems = check_notebook(path, pathlib.Path(work), masks)
            failures += bool(problems)
            print("\n".join(problems) if problems else f"ok   {path.name}", flush=True)
    return 1 if failures else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=pathlib.Path)
    parser.add_argument("--venv", type=pathlib.Path, default=os.environ.get(
        "COLAB_VENV", pathlib.Path(tempfile.gettempdir()) / "colab-py313"))
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in args.notebooks] or book.all_notebooks()
    if args.inside:
        return inside(paths)
    python = build_venv(args.venv)
    # Colab starts every runtime without d2l or d2lutil: so does this check (a d2lutil left by
    # an earlier run has the same version number, and pip would keep it instead of the branch's).
    subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "-q", "d2l", "d2lutil"],
                   capture_output=True, check=False)
    env = {**os.environ, "PYDEVD_DISABLE_FILE_VALIDATION": "1", "JUPYTER_PLATFORM_DIRS": "1",
           "JUPYTER_PATH": str(args.venv / "share" / "jupyter")}
    command = [str(python), __file__, "--inside", *map(str, paths)]
    return subprocess.run(command, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
