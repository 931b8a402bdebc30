"""Grade a class's exercises: ``make grade SUBMISSIONS=DIR`` or ``python tools/grade.py DIR``.

Every ``.ipynb`` file in DIR is one submission: a copy of a chapter notebook with the
student's answers in its starter cells. Each is matched to the chapter notebook it answers
by its exercise-import cell (``from d2lutil.exercises.nbNN import ...``), not by its file
name, and run top to bottom in a fresh kernel in a fresh folder that holds only its own
file (tools/grade_runner.py), under time, memory and process limits, inside a bubblewrap
sandbox when ``bwrap`` is installed (no network, the system read-only, nothing of the other
submissions or the grades visible). A last cell added to the run writes the values of the
answer variables, named as in the chapter's own starter cells, as JSON; function answers
are called there on the checker's cases and only their results come back (a class
answer is run there by its checker's ``run``: only outputs and hooked tensors come
back). The chapter's
checkers then run here, in the grader's process, where the student's code cannot reach
them (``Exercise.check_part``).

Writes ``build/grades/grades.csv`` (or ``--out FILE``; never inside DIR): one row per
submission, with the points and the check's message of every exercise part, the total,
the status and the seconds it took; and for each submission a results file in the format
of Gradescope's autograder (``gradescope/NAME.json`` next to the CSV).
"""

import argparse
import ast
import builtins
import concurrent.futures
import csv
import importlib
import json
import os
import pathlib
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import nbformat

import book

RUNNER = pathlib.Path(__file__).resolve().with_name("grade_runner.py")
DEFAULT_OUT = book.ROOT / "build" / "grades" / "grades.csv"
IMPORT_RE = re.compile(r"^[ \t]*(?:from[ \t]+d2lutil\.exercises\.nb(\d+)[ \t]+import\b"
                       r"|import[ \t]+d2lutil\.exercises\.nb(\d+)\b)", re.MULTILINE)
HOME = "/home/student"  # the submission's folder inside the sandbox
KERNEL_UID_BASE = 61000  # as root, the kernel of job slot k runs as user 61000 + k
NOTEBOOK_LIMIT = 20 * 2**20  # bytes of a submission the grader reads at most
RESULT_LIMIT = 2**20  # bytes of the runner's report, beside the answers
FILE_LIMIT = 64 * 2**20  # largest file the submission may write
MAX_ITEMS = 100_000  # numbers in one answer
MEMORY_WORDS = ("MemoryError", "allocate memory", "out of memory")


class UsageError(ValueError):
    """A bad command-line argument; the message names it."""


# --- the chapter: its notebooks, their exercises and the answers' names ----------------------

class ChapterNotebook:
    """Chapter notebook NN as the grader needs it: its exercises, parts and answer names.

    ``names[k]`` are the variables that exercise k's starter cell passes to
    ``exK.check(...)`` in the chapter's own notebook, one per part; ``functions`` maps the
    name of a function answer to (module, exercise, part) for the runner.
    """

    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.number = book.number(path)
        self.module = f"d2lutil.exercises.nb{self.number}"
        module = importlib.import_module(self.module)
        self.exercises = [getattr(module, name) for name in module.__all__]
        names = starter_names(book.read(path))
        self.parts = []  # (exercise, part index, answer name, label)
        self.functions = {}
        for exercise in self.exercises:
            given = names.get(exercise.name, [])
            if exercise.parts and len(given) != len(exercise.parts):
                raise book.NotebookError(
                    f"{self.path.name}: the starter cell of {exercise.name} must pass one "
                    f"variable per part to {exercise.name}.check, found {given}")
            for index, ((_, checker), name) in enumerate(
                    zip(exercise.parts, given, strict=False)):
                self.parts.append((exercise, index, name, f"ex{exercise.number}.{index + 1}"))
                if hasattr(checker, "cases"):
                    self.functions[name] = (self.module, exercise.name, index)

    @property
    def names(self):
        return [name for _, _, name, _ in self.parts]

    @property
    def max_points(self):
        return sum(exercise.points[index] for exercise, index, _, _ in self.parts)


def starter_names(nb):
    """{"ex1": [names passed to ex1.check], ...} of a notebook's code cells."""
    found = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "check" and isinstance(node.func.value, ast.Name)
                    and re.fullmatch(r"ex\d+", node.func.value.id)
                    and all(isinstance(a, ast.Name) for a in node.args)):
                found[node.func.value.id] = [a.id for a in node.args]
    return found


def load_chapter(root=book.ROOT):
    """{"01": ChapterNotebook, ...} for every chapter notebook with exercises."""
    chapter = {}
    for path in book.chapter_notebooks(root):
        try:
            importlib.import_module(f"d2lutil.exercises.nb{book.number(path)}")
        except ModuleNotFoundError:
            continue
        chapter[book.number(path)] = ChapterNotebook(path)
    return chapter


# --- reading a submission --------------------------------------------------------------------

def read_submission(path, chapter):
    """(notebook, ChapterNotebook) for a submission, or (None, why it cannot be graded)."""
    if path.is_symlink():
        return None, "not graded: a symbolic link, not a notebook file"
    size = path.stat().st_size
    if size == 0:
        return None, "not graded: an empty file (0 bytes)"
    if size > NOTEBOOK_LIMIT:
        return None, f"not graded: {size:,} bytes, more than the {NOTEBOOK_LIMIT:,} read"
    try:
        nb = nbformat.reads(path.read_bytes().decode("utf-8"), as_version=4)
        sources = [c.source for c in nb.cells if c.get("cell_type") == "code"]
        if not all(isinstance(s, str) for s in sources):
            raise ValueError("a code cell without source text")
    except Exception as error:  # any malformed file: a row, never a traceback
        text = str(error).strip().splitlines()[0][:120] if str(error).strip() else ""
        return None, f"not graded: not a readable notebook ({type(error).__name__}: {text})"
    numbers = sorted({a or b for s in sources for a, b in IMPORT_RE.findall(s)})
    if not numbers:
        return None, ("not graded: no exercise import (from d2lutil.exercises.nbNN import "
                      "...) in any code cell")
    if len(numbers) > 1:
        return None, ("not graded: it imports the exercises of several notebooks ("
                      + ", ".join(numbers) + ")")
    if numbers[0] not in chapter:
        return None, f"not graded: the chapter has no notebook {numbers[0]} with exercises"
    return nb, chapter[numbers[0]]


# --- answers from JSON --------------------------------------------------------------------------

class AnswerError(ValueError):
    """An answer the grader cannot read back from the runner's JSON."""


def _named_object(name, what="a value of type"):
    """A stand-in for an answer the JSON could not carry: its type name survives."""
    safe = name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,40}", str(name)) else "object"
    return type(safe, (), {"__repr__": lambda self: f"<{what} {safe}>"})()


def _exception_class(name):
    found = getattr(builtins, str(name), None)
    if isinstance(found, type) and issubclass(found, BaseException):
        return found
    safe = name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,40}", str(name)) else "Error"
    return type(safe, (Exception,), {})


def decode(value):
    """A Python value from the runner's tagged JSON (see ANSWERS_CELL in grade_runner)."""
    import numpy as np
    import torch

    from d2lutil.exercises import CallResults, Raised

    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    kind = value.get("$")
    if kind == "ellipsis":
        return ...
    if kind == "tuple":
        return tuple(decode(v) for v in value["items"])
    if kind == "dict":
        return {_hashable(decode(k)): decode(v) for k, v in value["items"]}
    if kind == "ndarray":
        dtype = np.dtype(str(value["dtype"]))
        if dtype.kind not in "biufc":
            raise AnswerError(f"an array of {dtype}")
        return np.array(value["data"], dtype=dtype).reshape(value["shape"])
    if kind == "tensor":
        dtype = getattr(torch, str(value["dtype"]), None)
        if not isinstance(dtype, torch.dtype):
            raise AnswerError(f"a tensor of {value['dtype']}")
        return torch.tensor(value["data"], dtype=dtype).reshape(value["shape"])
    if kind == "exception_class":
        return _exception_class(value["name"])
    if kind == "exception":
        return _exception_class(value["name"])()
    if kind == "function":
        return _named_object("function")
    if kind == "unsupported":
        return _named_object(value.get("type"))
    if kind == "too_large":
        raise AnswerError(f"it holds {value.get('size')} values, more than the {MAX_ITEMS:,} "
                          "the grader reads")
    if kind == "results":
        return CallResults(Raised(r.get("type"), r.get("text")) if isinstance(r, dict)
                           and r.get("$") == "raised" else decode(r) for r in value["items"])
    raise AnswerError(f"an unknown kind of value ({str(kind)[:40]})")


def _hashable(key):
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


# --- running one submission --------------------------------------------------------------------

class Options:
    """The limits and places of one grading run (from the command line)."""

    def __init__(self, out, cell_timeout=120, timeout=600, memory_mb=3072, processes=128,
                 jobs=1, isolation="auto"):
        self.out = pathlib.Path(out)
        self.cell_timeout, self.timeout = cell_timeout, timeout
        self.memory_mb, self.processes, self.jobs = memory_mb, processes, jobs
        self.bwrap = shutil.which("bwrap") if isolation in ("auto", "bwrap") else None
        if isolation == "bwrap" and not self.bwrap:
            raise UsageError("--isolation bwrap: bubblewrap (bwrap) is not installed")
        self.is_root = hasattr(os, "geteuid") and os.geteuid() == 0


def _task_count(uid):
    """How many processes and threads the user ``uid`` runs now (Linux /proc)."""
    count = 0
    for status in pathlib.Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        if fields.get("Uid", "").split()[:1] == [str(uid)]:
            count += int(fields.get("Threads", "1").strip() or 1)
    return count


def limits_command(options):
    """The runner's launch prefix that sets the resource limits (POSIX), or []."""
    if os.name != "posix":
        return []
    processes = options.processes
    if not options.is_root:  # the limit counts every process of this user
        processes += _task_count(os.getuid())
    return [sys.executable, str(RUNNER), "--limits", str(options.memory_mb * 2**20),
            str(processes), str(FILE_LIMIT), "--"]


def sandbox_command(options, scratch, name, env):
    """bwrap's arguments: a fresh root with the system read-only and only this submission."""
    import d2lutil

    package = pathlib.Path(d2lutil.__file__).resolve().parent
    binds = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc"):
        path = pathlib.Path(top)
        if path.is_symlink():
            binds += ["--symlink", os.readlink(path), top]
        elif path.exists():
            binds += ["--ro-bind", top, top]
    prefixes = sorted(p for p in {os.path.realpath(p) for p in
                                  (sys.prefix, sys.base_prefix, sys.exec_prefix)}
                      | {sys.prefix} if not p.startswith("/usr/"))
    parents = sorted({str(a) for p in prefixes for a in pathlib.Path(p).parents} - {"/"},
                     key=lambda a: a.count("/"))
    # /tmp first: the prefixes (a venv in a clone under /tmp, say) are bound over it, not
    # hidden under it (bwrap mounts in the order of its arguments).
    binds += ["--size", str(64 * 2**20), "--perms", "1777", "--tmpfs", "/tmp"]
    for parent in parents:  # bwrap would make them 0700: the kernel's user could not pass
        binds += ["--perms", "0755", "--dir", parent]
    for prefix in prefixes:
        binds += ["--ro-bind", prefix, prefix]
    unshare = ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
               "--unshare-cgroup-try"]
    caps = ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
            "--cap-add", "CAP_KILL"] if options.is_root else ["--unshare-user"]
    setenv = [a for key, value in env.items() for a in ("--setenv", key, value)]
    return [options.bwrap, *unshare, *caps, "--die-with-parent", "--new-session",
            *binds, "--perms", "0755", "--dir", "/grader", "--perms", "0755", "--dir",
            "/grader/lib", "--ro-bind", str(package), "/grader/lib/d2lutil",
            "--ro-bind", str(RUNNER), "/grader/runner.py",
            "--ro-bind", str(scratch / "job.json"), "/grader/job.json",
            "--dev", "/dev", "--proc", "/proc",
            "--size", str(256 * 2**20), "--perms", "0777", "--tmpfs", HOME,
            "--ro-bind", str(scratch / "in" / name), f"{HOME}/{name}",
            "--chdir", HOME, "--clearenv", *setenv, "--",
            sys.executable, "/grader/runner.py", "/grader/job.json"]


def kernel_env(home, pythonpath, threads):
    """The few variables the runner and the kernel see (nothing else of the grader's)."""
    return {"HOME": home, "PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": pythonpath,
            "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": f"{home}/.config/matplotlib", "IPYTHONDIR": f"{home}/.ipython",
            "JUPYTER_RUNTIME_DIR": f"{home}/.jupyter-runtime",
            "JUPYTER_PATH": str(pathlib.Path(sys.prefix) / "share" / "jupyter"),
            "JUPYTER_PLATFORM_DIRS": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
            "LANG": "C.UTF-8"}


def run_submission(path, nb, notebook, options, slot):
    """Run one submission in its sandbox; return the runner's report (a dict)."""
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="grade-"))
    try:
        (scratch / "in").mkdir()
        name = path.name
        shutil.copyfile(path, scratch / "in" / name)
        threads = max(1, (os.cpu_count() or 1) // options.jobs)
        if options.bwrap:
            home = HOME
            env = kernel_env(home, "/grader/lib", threads)
            job_notebook = f"{home}/{name}"
        else:
            home = str(scratch / "home")
            os.mkdir(home)
            shutil.copyfile(path, pathlib.Path(home) / name)
            import d2lutil

            env = kernel_env(home, str(pathlib.Path(d2lutil.__file__).resolve().parents[1]),
                             threads)
            job_notebook = str(pathlib.Path(home) / name)
        job = {"notebook": job_notebook, "home": home, "names": notebook.names,
               "functions": notebook.functions, "cell_timeout": options.cell_timeout,
               "answers_path": f"{home}/.answers.json", "max_items": MAX_ITEMS,
               "max_answer_bytes": 8 * 2**20,
               "kernel_uid": KERNEL_UID_BASE + slot if options.is_root and options.bwrap
               else None}
        (scratch / "job.json").write_text(json.dumps(job))
        if options.bwrap:
            command = limits_command(options) + sandbox_command(options, scratch, name, env)
        else:
            command = limits_command(options) + [sys.executable, str(RUNNER),
                                                 str(scratch / "job.json")]
        with open(scratch / "report.json", "wb") as report:
            process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=report, stderr=subprocess.DEVNULL,
                env=env if not options.bwrap else {"PATH": env["PATH"]}, cwd=home
                if not options.bwrap else scratch, start_new_session=os.name == "posix")
            try:
                process.wait(timeout=options.timeout)
            except subprocess.TimeoutExpired:
                _kill(process)
                return {"status": "time limit"}
        with open(scratch / "report.json", "rb") as report:
            lines = report.read(RESULT_LIMIT + 16 * 2**20).splitlines()
        try:
            result = json.loads(lines[-1]) if lines else None
        except ValueError:
            result = None
        if not isinstance(result, dict) or not isinstance(result.get("status"), str):
            return {"status": "crashed"}
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _kill(process):
    """Stop a runner and what it started: its session (in bwrap, the whole sandbox)."""
    try:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except OSError:
        pass
    process.wait()


# --- one row per submission ------------------------------------------------------------------

def grade(path, chapter, options, slot=0):
    """The row of one submission: a dict with the CSV's columns (see ``columns``)."""
    start = time.monotonic()
    row = {"file": path.name, "notebook": "", "status": "", "total": 0, "max_total": "",
           "note": "", "parts": {}}
    try:
        nb, notebook = read_submission(path, chapter)
        if nb is None:
            row["status"], row["note"] = "not graded", notebook.removeprefix("not graded: ")
            return row
        row["notebook"], row["max_total"] = notebook.path.name, notebook.max_points
        result = run_submission(path, nb, notebook, options, slot)
        _fill(row, notebook, result, options)
    except Exception as error:  # a bug of the grader: the row says so, the others go on
        row["status"] = "grader error"
        row["note"] = f"{type(error).__name__}: {error}"[:300]
    finally:
        row["seconds"] = round(time.monotonic() - start, 1)
    return row


def _fill(row, notebook, result, options):
    """Points, messages, status and note of ``row`` from the runner's ``result``."""
    status = result["status"]
    errors = [e for e in result.get("errors", []) if isinstance(e, dict)]
    notes = [f"cell {e.get('cell')} raised {e.get('ename')}: {e.get('evalue')}"
             for e in errors]
    notes += [f"cell {c} reached the {options.cell_timeout} s limit of a cell and was "
              "interrupted" for c in result.get("timeouts", [])]
    memory = any(w in f"{e.get('ename')} {e.get('evalue')}" for e in errors
                 for w in MEMORY_WORDS)
    if status == "time limit":
        notes.insert(0, f"stopped at the {options.timeout} s limit of a submission")
    elif status == "kernel died":
        notes.insert(0, f"the kernel died in cell {result.get('died_in')}")
    elif status == "crashed":
        notes.insert(0, "the run ended without a report (its runner was killed)")
    elif status == "runner error":
        notes.insert(0, f"the notebook could not be run ({result.get('error', '')})"[:300])
    elif status == "kernel failed":
        notes.insert(0, f"the kernel stopped answering in cell {result.get('died_in')} "
                        f"({result.get('error', '')})"[:300])
    elif status == "answers not collected":
        notes.insert(0, "the cell that collects the answers failed")
    if memory:
        status = "memory limit" if status == "graded" else status
        notes.insert(0, f"a cell ran out of memory (limit {options.memory_mb} MiB)")
    elif status == "graded" and result.get("timeouts"):
        status = "cell time limit"
    answers, why = _answers(result)
    for exercise, index, name, label in notebook.parts:
        value = answers.get(name, {"$": "missing"}) if answers is not None else None
        kind = value.get("$") if isinstance(value, dict) else None
        if answers is None:
            points, message = 0, f"not graded ({why})"
        elif kind == "missing":
            points, message = 0, f"not answered: the notebook has no variable {name}"
        elif kind == "unreadable":
            points, message = 0, f"could not read the answer ({value.get('error')})"
        else:
            try:
                answer = decode(value)
            except Exception as error:
                points, message = 0, f"could not read the answer ({error})"[:300]
            else:
                part = exercise.check_part(index, answer)
                points, message = part.points, part.message
        row["parts"][label] = (points, message, exercise.points[index],
                               f"Exercise {exercise.number}, {exercise.parts[index][0]}")
    row["status"] = status
    row["total"] = sum(p for p, _, _, _ in row["parts"].values())
    row["note"] = "; ".join(notes)[:1000]


def _answers(result):
    """The runner's answers as a dict, or (None, why not)."""
    text = result.get("answers")
    if not isinstance(text, str):
        if result.get("answers_size"):
            return None, "the answers are larger than the grader reads"
        return None, {"time limit": "stopped at the time limit",
                      "kernel died": "the kernel died", "kernel failed": "the kernel failed",
                      "memory limit": "out of memory"}.get(result["status"],
                                                           "no answers were collected")
    try:
        answers = json.loads(text)
    except (ValueError, RecursionError):
        return None, "the answers could not be read"
    if not isinstance(answers, dict):
        return None, "the answers could not be read"
    return answers, ""


# --- the whole class ---------------------------------------------------------------------------

def submissions_in(folder):
    """Every ``.ipynb`` file of ``folder`` (not of its subfolders), by name."""
    return sorted(p for p in pathlib.Path(folder).iterdir()
                  if p.suffix == ".ipynb" and (p.is_file() or p.is_symlink()))


def _print(line):
    print(line, flush=True)


def grade_class(folder, options, chapter=None, log=_print):
    """Grade every submission in ``folder``; return the rows (one per file, by name)."""
    chapter = load_chapter() if chapter is None else chapter
    paths = submissions_in(folder)
    slots = queue.Queue()
    for slot in range(options.jobs):
        slots.put(slot)

    def work(path):  # one submission, in one of the `jobs` slots
        slot = slots.get()
        try:
            row = grade(path, chapter, options, slot)
        finally:
            slots.put(slot)
        log(f"{row['file']}: {row['status']}, {row['total']}/{row['max_total'] or 0} "
            f"points, {row['seconds']} s")
        return row

    with concurrent.futures.ThreadPoolExecutor(max_workers=options.jobs) as pool:
        rows = list(pool.map(work, paths))
    return rows


def columns(rows):
    """The CSV's columns: the fixed ones, then points and message of every part seen."""
    labels = sorted({label for row in rows for label in row["parts"]},
                    key=lambda s: tuple(int(n) for n in s[2:].split(".")))
    fixed = ["file", "notebook", "status", "total", "max_total", "seconds"]
    return fixed + [c for label in labels for c in (label, f"{label} message")] + ["note"]


def write_csv(rows, out):
    """Write the rows to ``out`` (through a temporary file: never half a file)."""
    names = columns(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with open(partial, "w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=names)
        writer.writeheader()
        for row in rows:
            flat = {k: row.get(k, "") for k in names}
            for label, (points, message, _, _) in row["parts"].items():
                flat[label], flat[f"{label} message"] = points, message
            writer.writerow(flat)
    os.replace(partial, out)


def gradescope_results(row):
    """A submission's results in the format Gradescope's autograder reads."""
    tests = [{"name": name, "number": label, "score": points, "max_score": worth,
              "status": "passed" if points == worth and worth else "failed",
              "output": message}
             for label, (points, message, worth, name) in row["parts"].items()]
    output = row["status"] + (f": {row['note']}" if row["note"] else "")
    return {"score": row["total"], "execution_time": row["seconds"], "output": output,
            "tests": tests}


def write_gradescope(rows, folder):
    folder.mkdir(parents=True, exist_ok=True)
    for row in rows:
        path = folder / (pathlib.Path(row["file"]).stem + ".json")
        path.write_text(json.dumps(gradescope_results(row), indent=1) + "\n",
                        encoding="utf-8")


# --- the command line -----------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="grade.py", description="Grade a class's exercise notebooks (see the README, "
        "'Grading a class').")
    parser.add_argument("submissions", metavar="SUBMISSIONS",
                        help="folder holding one .ipynb file per submission")
    parser.add_argument("--out", default=str(DEFAULT_OUT), metavar="FILE",
                        help="the grades CSV (default build/grades/grades.csv; never inside "
                        "SUBMISSIONS); Gradescope results go to gradescope/ beside it")
    parser.add_argument("--jobs", type=int, default=1, help="submissions graded at once")
    parser.add_argument("--cell-timeout", type=float, default=120,
                        help="seconds a cell may run before it is interrupted (default 120)")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds a submission may take before it is stopped (default 600)")
    parser.add_argument("--memory-mb", type=int, default=3072,
                        help="memory (data segment) of each process, MiB (default 3072)")
    parser.add_argument("--processes", type=int, default=128,
                        help="processes and threads a submission may run (default 128)")
    parser.add_argument("--isolation", choices=("auto", "bwrap", "none"), default="auto",
                        help="bwrap: require the sandbox; none: run without it (not safe)")
    args = parser.parse_args(argv)
    folder = pathlib.Path(args.submissions)
    if not folder.is_dir():
        raise UsageError(f"SUBMISSIONS must be a folder of .ipynb files: {folder} is "
                         f"{'a file' if folder.exists() else 'missing'}")
    out = pathlib.Path(args.out)
    if out.resolve().is_relative_to(folder.resolve()):
        raise UsageError(f"--out (OUT) must be outside SUBMISSIONS, got {out}")
    if out.is_dir() or out.suffix.lower() != ".csv":
        raise UsageError(f"--out (OUT) must name a .csv file, got {out}")
    for name in ("jobs", "cell_timeout", "timeout", "memory_mb", "processes"):
        if not getattr(args, name) > 0:
            raise UsageError(f"--{name.replace('_', '-')} must be positive, got "
                             f"{getattr(args, name)}")
    if args.memory_mb < 1024:
        raise UsageError(f"--memory-mb must be at least 1024 (importing torch needs about "
                         f"800 MiB), got {args.memory_mb}")
    return folder, Options(out, args.cell_timeout, args.timeout, args.memory_mb,
                           args.processes, args.jobs, args.isolation)


def main(argv=None):
    try:
        folder, options = parse_args(sys.argv[1:] if argv is None else argv)
    except UsageError as error:
        print(f"grade.py: error: {error}", file=sys.stderr)
        return 2
    if options.bwrap:
        print(f"grading in a bubblewrap sandbox ({options.bwrap}): no network, the system "
              "read-only, one submission per sandbox")
    else:
        print("WARNING: grading is NOT isolated: bubblewrap (bwrap) is not installed, so the "
              "students' code runs with your rights (only time and memory limits apply). "
              "Install bubblewrap, or grade in a container or VM (README, 'Grading a "
              "class').", file=sys.stderr)
    start = time.monotonic()
    rows = grade_class(folder, options)
    write_csv(rows, options.out)
    write_gradescope(rows, options.out.parent / "gradescope")
    print(f"{len(rows)} submissions graded in {time.monotonic() - start:.0f} s: "
          f"{options.out} and {options.out.parent / 'gradescope'}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
