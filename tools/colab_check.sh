#!/usr/bin/env bash
# Run the chapter the way Colab would: Python 3.13 with Colab's torch, numpy and matplotlib.
#
#   tools/colab_check.sh [NOTEBOOK...]     # default: notebooks/*.ipynb notebooks/solutions/*.ipynb
#
# 1. Builds (once) a venv at $COLAB_VENV (default /tmp/colab-py313) from pyenv's Python 3.13
#    with Colab's versions (as of Aug 2026): torch 2.11, numpy 2.1, matplotlib 3.10,
#    IPython 7.34, ipykernel 6.17, ipywidgets 7.7.1, plus torchvision/pandas/requests (which
#    d2l imports and Colab has) and nbclient to execute. torch is a large download.
# 2. Runs the stamped setup cell of the first notebook, as in Colab (google.colab imported),
#    with its `git+https://github.com/OWNER/REPO@BRANCH` pointed at this checkout instead
#    (`git+file://<checkout>@BRANCH`: the committed state of the branch, as Colab would get).
# 3. Checks that torch, numpy and matplotlib are unchanged by that install.
# 4. Executes copies of the notebooks in that venv's kernel and prints, per notebook, the
#    failing cell and its error, and the cells whose text output differs from the stored one
#    (outputs should not depend on the torch version). Exit code 1 when anything failed.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${COLAB_VENV:-/tmp/colab-py313}"
PY313="${PY313:-$(ls -d /root/.pyenv/versions/3.13*/bin/python3 2>/dev/null | sort -V | tail -1)}"
COLAB_PACKAGES=(
    "torch==2.11.0" "numpy==2.1.3" "matplotlib==3.10.9" "torchvision==0.26.*"
    "ipython==7.34.*" "ipykernel==6.17.*" "ipywidgets==7.7.1" "pandas" "requests" "pillow"
    "scipy" "tqdm" "nbclient" "nbformat"
)

if [ ! -x "$VENV/bin/python" ]; then
    if [ -z "$PY313" ] || [ ! -x "$PY313" ]; then
        echo "error: no Python 3.13 found (looked in /root/.pyenv/versions); set PY313=..." >&2
        exit 2
    fi
    echo "building $VENV from $PY313 (torch is a large download)"
    start=$(date +%s)
    "$PY313" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --no-cache-dir --disable-pip-version-check -q \
        "${COLAB_PACKAGES[@]}"
    echo "built $VENV in $(( $(date +%s) - start )) s"
fi
# Colab starts every runtime without d2l or d2lutil: so does this check (a d2lutil left by
# an earlier run has the same version number, and pip would keep it instead of the branch's).
"$VENV/bin/python" -m pip uninstall -y -q d2l d2lutil >/dev/null 2>&1 || true

if [ "$#" -eq 0 ]; then
    set -- "$ROOT"/notebooks/*.ipynb "$ROOT"/notebooks/solutions/*.ipynb
fi

export PYDEVD_DISABLE_FILE_VALIDATION=1 JUPYTER_PLATFORM_DIRS=1
export JUPYTER_PATH="$VENV/share/jupyter"
exec "$VENV/bin/python" - "$ROOT" "$@" <<'PYTHON'
import copy
import importlib.metadata as md
import pathlib
import re
import shutil
import sys
import tempfile
import types

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

root = pathlib.Path(sys.argv[1])
paths = [pathlib.Path(p) for p in sys.argv[2:] if pathlib.Path(p).exists()]
sys.path.insert(0, str(root / "tools"))
import colab  # noqa: E402

WATCHED = ["torch", "numpy", "matplotlib", "ipykernel", "ipython"]
SANITIZE = [(re.compile(r"0x[0-9a-fA-F]+"), "0xADDRESS"), (re.compile(r"/tmp/[^\s:'\"]+"), "TMP")]


def versions():
    return {name: md.version(name) for name in WATCHED}


print(f"Python {sys.version.split()[0]}:", versions())
if not paths:
    sys.exit("no notebooks to check")

# --- the setup cell, as in Colab, installing from this checkout -------------------------
pub = colab.load_publication(root / "pyproject.toml")
setup = None
for path in paths:
    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if colab.SETUP_TAG in c.metadata.get("tags", [])]
    if cells:
        setup = cells[0].source
        break
if setup is None:
    sys.exit("no notebook has a setup cell: run `python tools/colab.py stamp` first")
if setup != colab.setup_source(pub):
    sys.exit("the setup cell disagrees with pyproject.toml: run `python tools/colab.py stamp`")
local = f"git+file://{root}@{pub.branch}"
source = setup.replace(pub.pip_target, local)
assert local in source, "the setup cell does not name the repository"
before = versions()
print(f"running the setup cell with {pub.pip_target} -> {local}")
sys.modules["google.colab"] = types.ModuleType("google.colab")
exec(compile(source, "<setup cell>", "exec"), {})
del sys.modules["google.colab"]
after = versions()
changed = {k: (before[k], after[k]) for k in WATCHED if before[k] != after[k]}
print("installed: d2l", md.version("d2l"), "d2lutil", md.version("d2lutil"))
if changed:
    print("FAIL: the setup cell changed", changed)
else:
    print("ok: torch, numpy, matplotlib, ipykernel, IPython unchanged")


# --- execute copies of the notebooks ------------------------------------------------------
def texts(cell):
    out = []
    for o in cell.get("outputs", []):
        if o.output_type == "stream":
            # A stream may arrive in several chunks (flush timing): merge them, as nbval does.
            if out and out[-1].startswith(o.name + ":"):
                out[-1] += o.text
            else:
                out.append(o.name + ":" + o.text)
        elif "data" in o and "text/plain" in o.data and "image/png" not in o.data:
            out.append(o.data["text/plain"])
        elif o.output_type == "error":
            out.append(f"error:{o.ename}")
    text = "\n".join(out)
    for pattern, repl in SANITIZE:
        text = pattern.sub(repl, text)
    return text


failures = 1 if changed else 0
work = pathlib.Path(tempfile.mkdtemp(prefix="colab-check-"))
for path in paths:
    copy_dir = work / path.parent.name
    if not copy_dir.exists():
        shutil.copytree(path.parent, copy_dir, ignore=shutil.ignore_patterns("*.ipynb"))
    stored = nbformat.read(path, as_version=4)
    nb = copy.deepcopy(stored)
    client = NotebookClient(nb, timeout=900, kernel_name="python3",
                            resources={"metadata": {"path": str(copy_dir)}})
    name = path.relative_to(root) if path.is_relative_to(root) else path
    try:
        client.execute()
    except CellExecutionError as e:
        failures += 1
        plain = re.sub(r"\x1b\[[0-9;]*m", "", str(e))  # no terminal colours
        lines = [line for line in plain.splitlines() if line.strip()]
        print(f"FAIL {name}: {lines[-1] if lines else e}")
        print("   " + "\n   ".join(lines[:12]))
        continue
    except Exception as e:  # noqa: BLE001 - report and go on with the next notebook
        failures += 1
        print(f"FAIL {name}: {type(e).__name__}: {e}")
        continue
    diffs = []
    for i, (old, new) in enumerate(zip(stored.cells, nb.cells, strict=True)):
        if old.cell_type != "code" or "nbval-ignore-output" in old.metadata.get("tags", []):
            continue
        if texts(old) != texts(new):
            diffs.append((i, texts(old), texts(new)))
    if diffs:
        failures += 1
        print(f"DIFF {name}: {len(diffs)} cell(s) print something else under Colab's versions")
        for i, old, new in diffs[:5]:
            print(f"   cell {i}:\n     stored: {old[:300]!r}\n     colab:  {new[:300]!r}")
    else:
        print(f"ok   {name}")
shutil.rmtree(work, ignore_errors=True)
sys.exit(1 if failures else 0)
PYTHON
