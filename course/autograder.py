"""The Gradescope autograder: ``make autograder`` or ``python course/autograder.py``.

    python course/autograder.py [--out build/autograder.zip] [--id-field sid,email]
                                [--budget 540]

writes the zip an instructor uploads to a Gradescope programming assignment
(course/README.md, "Gradescope"): ``setup.sh`` builds the image, ``run_autograder`` calls
``run`` for each submission, which grades every ``.ipynb`` of ``submission/`` as
course/grade.py does, on the variants of the submitter's id, after closing ``source/``,
``results/`` and ``submission/`` to every user but root (``lock``). ``run`` reads
``AUTOGRADER_ROOT`` (default /autograder), ``AUTOGRADER_ISOLATION`` (auto, bwrap or none),
``AUTOGRADER_ID_FIELDS`` (beats autograder.json) and ``AUTOGRADER_SLOT`` (the job slot).
"""

import argparse
import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import traceback
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]  # the repository, or /autograder/source
sys.path.append(str(ROOT / "tools"))  # as a script: the book's tools/book.py, by name
DEFAULT_OUT = ROOT / "build" / "autograder.zip"
DEFAULT_ID_FIELDS = ("sid", "email")
CONFIG = "autograder.json"
TOOL_FILES = ("tools/book.py", "course/autograder.py", "course/codec.py", "course/grade.py",
              "course/grade_runner.py", "course/roster.py", "course/student_edition.py")
TOP_FILES = ("requirements.txt", "requirements-d2l.txt", "pyproject.toml")
VENV = "/opt/d2lutil-venv"
# Gradescope stops a run at its timeout (10 minutes by default), leaving no results: the
# notebooks share a budget that ends a minute before it.
DEFAULT_BUDGET_S = 540

SETUP_SH = f"""\
#!/usr/bin/env bash
# Gradescope runs this once, as root, to build the image: the chapter's pins in {VENV},
# without requirements.txt's `-e .` (the repository's d2lutil, which holds the answers),
# d2l without its dependencies, and torch from PyTorch's CPU-only index.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv python3-pip bubblewrap
PY=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  # The pins need Python 3.11 or later (Ubuntu 22.04's python3 is 3.10).
  apt-get install -y --no-install-recommends python3.11 python3.11-venv
  PY=python3.11
fi
"$PY" -m venv {VENV}
grep -v '^[[:space:]]*-e[[:space:]]' /autograder/source/requirements.txt > /tmp/requirements.txt
{VENV}/bin/python -m pip install --quiet --upgrade pip
{VENV}/bin/python -m pip install --quiet \\
  --extra-index-url https://download.pytorch.org/whl/cpu -r /tmp/requirements.txt
{VENV}/bin/python -m pip install --quiet --no-deps -r /autograder/source/requirements-d2l.txt
"""

RUN_AUTOGRADER = f"""\
#!/usr/bin/env bash
# Gradescope runs this for every submission (course/autograder.py run); AUTOGRADER_ROOT
# and PYTHON change where and with what.
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
if [ -z "${{PYTHON:-}}" ]; then
  if [ -x {VENV}/bin/python ]; then PYTHON={VENV}/bin/python; else PYTHON=python3; fi
fi
"$PYTHON" "$ROOT/source/course/autograder.py" run
status=$?
if [ ! -s "$ROOT/results/results.json" ]; then  # the grader could not even start
  mkdir -p "$ROOT/results"
  message="The autograder could not run (exit status $status): nothing was graded."
  printf '{{"score": 0, "output": "%s Tell your instructor.", "tests": []}}\\n' \\
    "$message" > "$ROOT/results/results.json"
fi
exit 0
"""


class AutograderError(ValueError):
    """A bad argument to the build."""


def _results(score, output, tests=(), seconds=None):
    """Gradescope's results.json."""
    timing = {} if seconds is None else {"execution_time": round(seconds, 1)}
    return {"score": score, **timing, "output": output, "visibility": "visible",
            "stdout_visibility": "hidden", "tests": list(tests)}


# --- the zip -----------------------------------------------------------------------------------

def _add_file(archive, path, name, mode=0o644):
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    data = path.read_bytes() if isinstance(path, pathlib.Path) else path.encode("utf-8")
    archive.writestr(info, data)


def _add_tree(archive, folder, name):
    for path in sorted(folder.rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        _add_file(archive, path, f"{name}/{path.relative_to(folder).as_posix()}")


def build(out, id_fields=DEFAULT_ID_FIELDS, key=None, budget=DEFAULT_BUDGET_S):
    """Write the autograder zip to ``out``; return its path."""
    import book
    import grade
    import student_edition

    id_fields = [f.strip() for f in id_fields if f.strip()]
    if not id_fields:
        raise AutograderError("--id-field must name at least one field of users[0]")
    out = pathlib.Path(out)
    if out.suffix != ".zip":
        raise AutograderError(f"--out must name a .zip file, got {out}")
    out.parent.mkdir(parents=True, exist_ok=True)
    if not budget >= 60:
        raise AutograderError(f"--budget must be at least 60 seconds, got {budget}")
    config = {"id_fields": id_fields, "budget_s": budget, **grade.LIMITS}
    partial = out.with_name(out.name + ".partial")
    with tempfile.TemporaryDirectory(prefix="autograder-") as scratch:
        sealed = student_edition.build_package(pathlib.Path(scratch), key=key)
        with zipfile.ZipFile(partial, "w") as archive:
            _add_file(archive, SETUP_SH, "setup.sh", 0o755)
            _add_file(archive, RUN_AUTOGRADER, "run_autograder", 0o755)
            _add_file(archive, json.dumps(config, indent=1) + "\n", CONFIG)
            _add_tree(archive, ROOT / "d2lutil", "d2lutil")
            _add_tree(archive, sealed, "sealed/d2lutil")
            for name in TOOL_FILES:
                _add_file(archive, ROOT / name, name)
            for path in book.chapter_notebooks(ROOT):
                _add_file(archive, path, f"notebooks/{path.name}")
            for name in TOP_FILES:
                _add_file(archive, ROOT / name, name)
    os.replace(partial, out)
    return out


# --- one submission, as Gradescope runs it -----------------------------------------------------

def read_config(source):
    """autograder.json of the zip (defaults where it is missing), with the environment's
    AUTOGRADER_ID_FIELDS over its id fields."""
    import grade

    config = {"id_fields": list(DEFAULT_ID_FIELDS), "budget_s": DEFAULT_BUDGET_S,
              **grade.LIMITS}
    try:
        config.update(json.loads((source / CONFIG).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        pass
    fields = os.environ.get("AUTOGRADER_ID_FIELDS", "")
    if fields.strip():
        config["id_fields"] = [f.strip() for f in fields.split(",") if f.strip()]
    return config


def student_id(root, fields):
    """(id, where it came from, None) of the submitter, or (None, None, why not)."""
    from d2lutil.exercises import variants

    path = root / "submission_metadata.json"
    try:
        metadata = json.loads(path.read_text(encoding="utf-8"))
        user = metadata["users"][0]
        if not isinstance(user, dict):
            raise TypeError("users[0] is not an object")
    except (OSError, ValueError, KeyError, IndexError, TypeError) as error:
        return None, None, ("No student id: submission_metadata.json gives no submitter "
                            f"({type(error).__name__}), so nothing was graded. Tell your "
                            "instructor.")
    for field in fields:
        value = user.get(field)
        if value is None or isinstance(value, (dict, list)) or not str(value).strip():
            continue
        where = f"users[0].{field} of submission_metadata.json"
        if len(metadata["users"]) > 1:
            where += f"; a group of {len(metadata['users'])}: the first member's id"
        try:
            return variants.check_id(str(value), where), where, None
        except ValueError as error:
            return None, None, (f"No student id: {error}. Nothing was graded: ask your "
                                f"instructor to correct your {field} on the course roster.")
    return None, None, (f"No student id: submission_metadata.json has no "
                        f"{' or '.join(fields)} for you, so nothing was graded (your id "
                        "picks your version of the exercises). Ask your instructor to add "
                        "it to the course roster.")


def lock(root):
    """Close the answers, the results and the submission to every user but root."""
    for name in ("source", "results", "submission"):
        folder = root / name
        if folder.is_dir() and not folder.is_symlink():
            os.chmod(folder, 0o700)
    metadata = root / "submission_metadata.json"
    if metadata.is_file() and not metadata.is_symlink():
        os.chmod(metadata, 0o600)


def kernel_package(source):
    """A world-readable copy of the sealed package, outside the locked source: the folder
    the kernel's PYTHONPATH names."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="autograder-package-"))
    shutil.copytree(source / "sealed" / "d2lutil", folder / "d2lutil",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for path in [folder, *folder.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return folder


def bwrap_runs():
    """Whether bubblewrap is installed and can make the namespaces course/grade.py asks."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return False, "bubblewrap is not installed"
    caps = ["--cap-drop", "ALL"] if os.geteuid() == 0 else ["--unshare-user"]
    command = [bwrap, "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
               *caps, "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev",
               "--proc", "/proc", "--", "/bin/true"]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=30)
    except (OSError, subprocess.SubprocessError) as error:
        return False, f"bubblewrap cannot run here ({type(error).__name__})"
    if done.returncode:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return False, "bubblewrap cannot run here (" + (why[-1][:200] if why else
                                                         f"status {done.returncode}") + ")"
    return True, ""


def isolation(choice):
    """("bwrap" or "none", the sentence results.json gives)."""
    root = os.geteuid() == 0
    if choice not in ("auto", "bwrap", "none"):
        choice = "auto"
    works, why = (False, "AUTOGRADER_ISOLATION=none") if choice == "none" else bwrap_runs()
    if works:
        return "bwrap", ("Isolation: your notebook ran in a bubblewrap sandbox (no network, "
                         "the system read-only, none of the autograder's files), under "
                         "time, memory and process limits; the checks ran in the "
                         "grader's own process.")
    if choice == "bwrap":
        raise RuntimeError(f"AUTOGRADER_ISOLATION=bwrap, but {why}")
    if root:
        return "none", ("Isolation: no bubblewrap sandbox (" + why + "). Your notebook ran "
                        "in this submission's own container, as a user of its own that "
                        "can read none of the autograder's files and write none of its "
                        "results, under time, memory and process limits; the checks ran "
                        "in the grader's own process.")
    return "none", ("Isolation: NONE. No bubblewrap sandbox (" + why + ") and the "
                    "autograder does not run as root, so the notebook ran with the "
                    "grader's own rights (only time, memory and process limits applied).")


def results_for(rows, id_note, isolation_note, seconds):
    """Gradescope's results.json for the rows of one submission's files."""
    import book
    import grade

    graded = [r for r in rows if r["status"] not in ("not graded", "no id")]
    several = len(rows) > 1
    tests, lines, score = [], [], 0
    for row in rows:
        counted = row.get("counted", "yes") == "yes"
        what = (f"{row['file']}: {row['status']}, {row['total']}/{row['max_total'] or 0} "
                "points")
        if row["note"]:
            what += f" ({row['note']})"
        lines.append(what)
        if not counted or row["status"] in ("not graded", "no id"):
            continue
        score += row["total"]
        number = book.number(row["notebook"]) or ""
        for test in grade.gradescope_results(row)["tests"]:
            if several:
                test["name"] = f"{row['file']}: {test['name']}"
                test["number"] = f"{number}.{test['number']}"
            tests.append(test)
    if not graded and rows:
        lines.append("No notebook of the chapter could be graded: hand in the chapter "
                     "notebook you answered (.ipynb), with its exercise cells.")
    return _results(score, "\n".join([id_note, *lines, isolation_note]), tests, seconds)


def grade_submission(root, started):
    """The results of the submission in ``root`` (see the module's doc)."""
    source = root / "source"
    sys.path[:0] = [str(source / "course"), str(source / "tools"), str(source)]  # the zip's
    config = read_config(source)
    choice = os.environ.get("AUTOGRADER_ISOLATION", "auto")
    lock(root)  # before anything of the student's runs
    the_id, where, why = student_id(root, config["id_fields"])
    import grade
    import roster

    folder = root / "submission"
    paths = grade.submissions_in(folder) if folder.is_dir() else []
    if the_id is None:
        return _results(0, why)
    if not paths:
        return _results(0, f"No notebook handed in: {folder.name}/ holds no .ipynb file "
                        "(subfolders are not read). Upload the chapter notebook you answered, "
                        "as a .ipynb file.")
    kind, isolation_note = isolation(choice)

    package = kernel_package(source)
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="autograder-grades-"))
    try:
        chapter = grade.load_chapter(source)
        options = grade.Options(scratch / "grades.csv", isolation=kind, package=package,
                                jobs=1, **{k: config[k] for k in grade.LIMITS})
        slot = int(os.environ.get("AUTOGRADER_SLOT", "0") or 0)
        rows = []
        for path in paths:
            left = config["budget_s"] - (time.monotonic() - started) - 15
            if left < 30:  # Gradescope would stop the run, and nothing would be graded
                rows.append(out_of_time(path))
                continue
            options.timeout = min(config["timeout"], int(left))
            rows.append(grade.grade(path, chapter, options, slot, student_id=the_id))
        roster.mark_latest(rows, paths)
    finally:
        shutil.rmtree(package, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
    id_note = f"Graded as student id {the_id} ({where}): your own version of the exercises."
    return results_for(rows, id_note, isolation_note, time.monotonic() - started)


def out_of_time(path):
    """The row of a file the autograder had no time left for."""
    return {"file": path.name, "student_id": "", "notebook": "", "status": "not graded",
            "total": 0, "max_total": "", "parts": {}, "seconds": 0,
            "note": "the autograder's time ran out before this file (hand in fewer "
                    "notebooks at once, or ask your instructor to raise the timeout)"}


def write_results(root, results):
    folder = root / "results"
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / ".results.json.partial"
    partial.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    os.replace(partial, folder / "results.json")


def run():
    """Grade ``AUTOGRADER_ROOT`` (default /autograder) into its results/results.json."""
    started = time.monotonic()
    root = pathlib.Path(os.environ.get("AUTOGRADER_ROOT") or "/autograder").resolve()
    try:
        results = grade_submission(root, started)
    except BaseException as error:  # noqa: B036 -- results.json is written whatever happens
        traceback.print_exc()
        results = _results(0, "The autograder failed, so nothing was graded "
                           f"({type(error).__name__}: {str(error)[:300]}). Tell your "
                           "instructor.")
    write_results(root, results)
    print(json.dumps({k: v for k, v in results.items() if k != "tests"}, indent=1))
    print(f"{len(results.get('tests', []))} tests, score {results['score']}")
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:
        return run()
    parser = argparse.ArgumentParser(
        prog="autograder.py", description="Write the Gradescope autograder zip (see "
        "course/README.md); `autograder.py run` is what its run_autograder calls.")
    parser.add_argument("--out", default=str(DEFAULT_OUT),
                        help="the zip (default build/autograder.zip)")
    parser.add_argument("--id-field", default=",".join(DEFAULT_ID_FIELDS), metavar="FIELDS",
                        help="the fields of submission_metadata.json's users[0] that hold "
                        "the student id, first non-empty wins (default sid,email)")
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S, metavar="SECONDS",
                        help="seconds all of a submission's notebooks may take together: "
                        "under the assignment's Gradescope timeout (default 540, for its "
                        "default 10 minutes)")
    args = parser.parse_args(argv)
    try:
        out = build(args.out, args.id_field.split(","), budget=args.budget)
    except AutograderError as error:
        print(f"autograder.py: error: {error}", file=sys.stderr)
        return 2
    print(f"{out}: upload it as the autograder of a Gradescope programming assignment "
          "(course/README.md, 'Gradescope')")
    return 0


if __name__ == "__main__":
    sys.exit(main())
