"""Grade a class's exercises: ``make grade SUBMISSIONS=DIR`` or ``python course/grade.py DIR``.

Each ``.ipynb`` file of DIR (and of Moodle's folders in it) is one submission: matched to
the chapter notebook whose exercises it imports, graded on the variant of the student id its
name gives (``ID__anything.ipynb``, or Canvas's or Moodle's names through the roster:
roster.find_id; ``--book``: the book's values). It runs in a fresh kernel
(course/grade_runner.py), sandboxed and limited, that imports the sealed package
(course/student_edition.py); a last cell sends back, as JSON (course/codec.py), the
variables each exercise declares as its answers (``Exercise(..., answers=...)``), a
function answer as its results on the grader's cases, public and hidden. The chapter's
checkers judge them here, where the student's code cannot reach them. It writes the
grades CSV, ``roster.csv`` and Gradescope results, never over what it reads
(``check_outputs``). course/README.md says what each option does and what is trusted.
"""

import argparse
import atexit
import concurrent.futures
import importlib
import json
import os
import pathlib
import queue
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

import nbformat

sys.path.append(str(pathlib.Path(__file__).resolve().parents[1] / "tools"))  # as a script
import book  # noqa: E402  (the book's tools/book.py: the course reads the book)
import codec  # noqa: E402
import student_edition  # noqa: E402
from d2lutil.exercises import variants  # noqa: E402
from roster import (  # noqa: E402
    MOODLE_FOLDER,
    NAMES_UNDERSTOOD,
    UsageError,
    find_id,
    mark_latest,
    partial_of,
    read_marks,
    read_roster,
    read_weights,
    write_roster,
    write_rows,
)

RUNNER = pathlib.Path(__file__).resolve().with_name("grade_runner.py")
DEFAULT_OUT = book.ROOT / "build" / "grades" / "grades.csv"
HOME = "/home/student"  # the submission's folder inside the sandbox
KERNEL_UID_BASE = 61000  # as root, the kernel of job slot k runs as user 61000 + k
NOTEBOOK_LIMIT = 20 * 2**20  # bytes of a submission the grader reads at most
RESULT_LIMIT = 2**20  # bytes of the runner's report, beside the answers
FILE_LIMIT = 64 * 2**20  # largest file the submission may write
MAX_ITEMS = 100_000  # numbers in one answer
# A submission's limits, by default: seconds a cell and the whole may run, MiB of memory,
# processes and threads (the command line's and the autograder's defaults).
ANSWER_LIMIT = 20_000  # characters of a written answer shown to the TAs
LIMITS = {"cell_timeout": 120, "timeout": 600, "memory_mb": 3072, "processes": 128}
MEMORY_WORDS = ("MemoryError", "allocate memory", "out of memory")
# Judging runs in the grader's worker threads. It draws modules and inputs from torch's
# global random state (seeded, forked) and, for a class answer, swaps library functions to
# refuse them: both are process-wide, so one submission is judged at a time.
JUDGE_LOCK = threading.Lock()
STATUS_NOTES = {  # the first note of a row whose run ended so
    "time limit": "stopped at the {limit} s limit of a submission",
    "kernel died": "the kernel died in cell {cell}",
    "crashed": "the run ended without a report (its runner was killed)",
    "runner error": "the notebook could not be run ({error})",
    "kernel failed": "the kernel stopped answering in cell {cell} ({error})",
    "answers not collected": "the cell that collects the answers failed"}


# --- the chapter: its notebooks, their exercises and the answers' names ----------------------

class ChapterNotebook:
    """Chapter notebook NN as the grader needs it: its exercises, their parts and the answer
    names they declare; ``functions``: {function answer's name: (module, exercise, part)}."""

    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.number = book.number(path)
        self.module = f"d2lutil.exercises.nb{self.number}"
        module = importlib.import_module(self.module)
        self.exercises = [getattr(module, name) for name in module.__all__]
        self.parts = []  # (exercise, part index, answer name, label)
        self.functions = {}
        for exercise in self.exercises:
            if len(exercise.answers) != len(exercise.parts):
                raise ValueError(f"{self.module}.{exercise.name} must declare one answer "
                                 "name per part: Exercise(..., answers=(...))")
            for index, ((_, checker), name) in enumerate(
                    zip(exercise.parts, exercise.answers, strict=True)):
                self.parts.append((exercise, index, name, f"ex{exercise.number}.{index + 1}"))
                if hasattr(checker, "cases"):
                    self.functions[name] = (self.module, exercise.name, index)

    @property
    def names(self):
        return [name for _, _, name, _ in self.parts]

    def graded_parts(self, student_id):
        """(exercise, part index, answer name, label, checker) of the variant graded for
        ``student_id`` (None: the book's values), function parts with their hidden cases."""
        graded = []
        for exercise, index, name, label in self.parts:
            variant = 0 if student_id is None else exercise.variant(student_id)
            exercise = exercise.for_variant(variant)
            checker = exercise.parts[index][1]
            checker = checker.graded() if hasattr(checker, "graded") else checker
            graded.append((exercise, index, name, label, checker))
        return graded

    def job_functions(self, student_id):
        """{answer name: [module, exercise, part, cases]} for the runner: the cases (public
        and hidden) as JSON, or None where they cannot travel (the kernel's module makes
        them)."""
        jobs = {}
        for exercise, index, name, _, checker in self.graded_parts(student_id):
            if name not in self.functions:
                continue
            try:
                cases = codec.encode(checker.cases())
            except TypeError:
                cases = None
            jobs[name] = [self.module, exercise.name, index, cases]
        return jobs

    @property
    def max_points(self):
        return sum(exercise.points[index] for exercise, index, _, _ in self.parts)


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
    numbers = book.exercise_numbers(sources)
    if not numbers:
        return None, ("not graded: no exercise import (from d2lutil.exercises.nbNN import "
                      "...) in any code cell")
    if len(numbers) > 1:
        return None, ("not graded: it imports the exercises of several notebooks ("
                      + ", ".join(numbers) + ")")
    if numbers[0] not in chapter:
        return None, f"not graded: the chapter has no notebook {numbers[0]} with exercises"
    return nb, chapter[numbers[0]]


# --- running one submission --------------------------------------------------------------------

class Options:
    """The limits and places of one grading run (from the command line)."""

    def __init__(self, out, jobs=1, isolation="auto", roster=None, book=False, package=None,
                 **limits):
        self.out, self.jobs = pathlib.Path(out), jobs
        self.book, self.roster = book, roster  # book: the book's values, without ids
        self.marks, self.chapter = [], None  # the hand marks (roster.read_marks), the chapter
        self.weights = {}  # {notebook: weight} in the roster's totals (roster.read_weights)
        self._package = pathlib.Path(package) if package else None
        self.cell_timeout, self.timeout, self.memory_mb, self.processes = (
            {**LIMITS, **limits}[name] for name in LIMITS)
        if set(limits) - set(LIMITS):
            raise TypeError(f"unknown limits {sorted(set(limits) - set(LIMITS))}")
        self.bwrap = shutil.which("bwrap") if isolation in ("auto", "bwrap") else None
        if isolation == "bwrap" and not self.bwrap:
            raise UsageError("--isolation bwrap: bubblewrap (bwrap) is not installed")
        self.is_root = hasattr(os, "geteuid") and os.geteuid() == 0
        # As root, each kernel runs as a user of its own (KERNEL_UID_BASE + slot); without
        # bubblewrap only if that user can start this Python (not one under /root).
        self.kernel_user = self.is_root and (bool(self.bwrap) or reachable(sys.executable))

    @property
    def package(self):
        """The folder holding the sealed ``d2lutil`` every kernel imports (built once, and
        removed when the grader's process ends)."""
        if self._package is None:
            folder = pathlib.Path(tempfile.mkdtemp(prefix="grade-package-"))
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            student_edition.build_package(folder, book=True)
            os.chmod(folder, 0o755)
            self._package = folder
        return self._package


def reachable(path):
    """Whether any user may run the program ``path``: it and every folder above it are
    open to others (o+x)."""
    path = pathlib.Path(path).resolve()
    try:
        return all(os.stat(p).st_mode & stat.S_IXOTH for p in [path, *path.parents])
    except OSError:
        return False


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
    package = options.package / "d2lutil"
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


def run_submission(path, notebook, options, slot, student_id=None):
    """Run one submission in its sandbox, its kernel given ``student_id`` (the grader's,
    which wins over the notebook's) and the sealed package; return the runner's report."""
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
            if options.kernel_user:  # the kernel runs as a user of its own (kernel_uid)
                os.chmod(scratch, 0o711)
                for owned in (home, pathlib.Path(home) / name):
                    os.chown(owned, KERNEL_UID_BASE + slot, KERNEL_UID_BASE + slot)
            env = kernel_env(home, str(options.package), threads)
            job_notebook = str(pathlib.Path(home) / name)
        if student_id:
            env[variants.ENV] = student_id
        job = {"notebook": job_notebook, "home": home, "names": notebook.names,
               "functions": notebook.job_functions(student_id),
               "cell_timeout": options.cell_timeout,
               "answers_path": f"{home}/.answers.json", "max_items": MAX_ITEMS,
               "max_answer_bytes": 8 * 2**20,
               "kernel_uid": KERNEL_UID_BASE + slot if options.kernel_user else None}
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

def grade(path, chapter, options, slot=0, student_id=None, why_no_id=None):
    """The row of one submission (``columns``), graded on ``student_id``'s variant; without
    one (and not ``options.book``) on nothing, the row saying why (``why_no_id``)."""
    start = time.monotonic()
    row = {"file": path.name, "student_id": student_id or "", "notebook": "", "status": "",
           "total": 0, "max_total": "", "note": "", "parts": {}}
    try:
        nb, notebook = read_submission(path, chapter)
        if nb is None:
            row["status"], row["note"] = "not graded", notebook.removeprefix("not graded: ")
            return row
        row["notebook"], row["max_total"] = notebook.path.name, notebook.max_points
        row["written"] = {e.number: written_answer(nb, e.number)
                          for e in notebook.exercises if e.rubric}
        if student_id is None and not options.book:
            row["status"] = "no id"
            row["note"] = why_no_id or "no student id: graded on nothing"
            return row
        result = run_submission(path, notebook, options, slot, student_id)
        with JUDGE_LOCK:
            _fill(row, notebook, result, options, student_id)
    except Exception as error:  # a bug of the grader: the row says so, the others go on
        row["status"] = "grader error"
        row["note"] = f"{type(error).__name__}: {error}"[:300]
    finally:
        row["seconds"] = round(time.monotonic() - start, 1)
    return row


def _fill(row, notebook, result, options, student_id=None):
    """Points, messages, status and note of ``row`` from the runner's ``result``."""
    status = result["status"]
    errors = [e for e in result.get("errors", []) if isinstance(e, dict)]
    notes = [f"cell {e.get('cell')} raised {e.get('ename')}: {e.get('evalue')}"
             for e in errors]
    notes += [f"cell {c} reached the {options.cell_timeout} s limit of a cell and was "
              "interrupted" for c in result.get("timeouts", [])]
    memory = any(w in f"{e.get('ename')} {e.get('evalue')}" for e in errors
                 for w in MEMORY_WORDS)
    if status in STATUS_NOTES:
        notes.insert(0, STATUS_NOTES[status].format(
            limit=options.timeout, cell=result.get("died_in"), error=result.get("error", ""))[:300])
    if memory:
        status = "memory limit" if status == "graded" else status
        notes.insert(0, f"a cell ran out of memory (limit {options.memory_mb} MiB)")
    elif status == "graded" and result.get("timeouts"):
        status = "cell time limit"
    answers, why = _answers(result)
    if answers is not None:
        entered = answers.pop("$student_id", None)
        if student_id and isinstance(entered, str) and entered and entered != student_id:
            notes.append(f"the notebook entered the id {entered[:64]!r}; graded as "
                         f"{student_id}, the grader's")
    for exercise, index, name, label, checker in notebook.graded_parts(student_id):
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
                answer = codec.decode(value, builders=())
            except Exception as error:
                points, message = 0, f"could not read the answer ({error})"[:300]
            else:
                part = exercise.check_part(index, answer, checker)
                points, message = part.points, part.message
        if getattr(exercise.parts[index][1], "hidden", None):  # a message may name one
            row.setdefault("hidden", []).append(label)
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
        answers = None
    return (answers, "") if isinstance(answers, dict) else (None, "the answers could not be read")


# --- the whole class ---------------------------------------------------------------------------

def submissions_in(folder):
    """Every ``.ipynb`` file of ``folder`` (not of its subfolders), by name."""
    return sorted(p for p in pathlib.Path(folder).iterdir()
                  if p.suffix == ".ipynb" and (p.is_file() or p.is_symlink()))


def submission_files(folder):
    """``submissions_in(folder)`` and those of its Moodle folders (``Full
    Name_participantid_assignsubmission_file_``; no symbolic link to a folder followed)."""
    folders = [p for p in pathlib.Path(folder).iterdir()
               if MOODLE_FOLDER.fullmatch(p.name) and p.is_dir() and not p.is_symlink()]
    return submissions_in(folder) + sorted(p for f in folders for p in submissions_in(f))


def file_name(path, folder):
    """A submission's name in the grades: its path inside SUBMISSIONS."""
    return pathlib.Path(path).relative_to(folder).as_posix()


def grade_class(folder, options, chapter=None, log=lambda line: print(line, flush=True)):
    """Grade every submission in ``folder``; return the rows (one per file, by name)."""
    chapter = load_chapter() if chapter is None else chapter
    paths = submission_files(folder)
    known = read_roster(options.roster) if options.roster else None
    ids = {p: (None, "--book: no ids") if options.book else find_id(p, known, folder)
           for p in paths}
    _ = options.package  # built once, before the workers start
    slots = queue.Queue()
    for slot in range(options.jobs):
        slots.put(slot)

    def work(path):  # one submission, in one of the `jobs` slots
        slot = slots.get()
        try:
            student_id, how = ids[path]
            row = grade(path, chapter, options, slot, student_id, how)
            row["file"], row["id_from"] = file_name(path, folder), how if student_id else ""
        finally:
            slots.put(slot)
        log(f"{row['file']}: {row['status']}, {row['total']}/{row['max_total'] or 0} "
            f"points, {row['seconds']} s")
        return row

    with concurrent.futures.ThreadPoolExecutor(max_workers=options.jobs) as pool:
        rows = list(pool.map(work, paths))
    mark_latest(rows, paths, lambda path: file_name(path, folder))
    return rows


def columns(rows):
    """The CSV's columns: the fixed ones, then points and message of every part seen."""
    labels = sorted({label for row in rows for label in row["parts"]},
                    key=lambda s: tuple(int(n) for n in s[2:].split(".")))
    fixed = ["file", "student_id", "id_from", "notebook", "status", "counted", "total", "max_total",
             "seconds"]
    return fixed + [c for label in labels for c in (label, f"{label} message")] + ["note"]


def write_csv(rows, out):
    """Write the rows to ``out`` (through a temporary file: never half a file)."""
    names = columns(rows)
    records = []
    for row in rows:
        records.append({k: row.get(k, "") for k in names})
        for label, (points, message, _, _) in row["parts"].items():
            records[-1][label], records[-1][f"{label} message"] = points, message
    write_rows(out, names, records)


def gradescope_results(row):
    """A submission's results in the format Gradescope's autograder reads."""
    tests = [{"name": name, "number": label, "score": points, "max_score": worth,
              "status": "passed" if message == "correct" else "failed",  # 0 points too
              "output": message,
              "visibility": "after_due_date" if label in row.get("hidden", ()) else "visible"}
             for label, (points, message, worth, name) in row["parts"].items()]
    output = row["status"] + (f": {row['note']}" if row["note"] else "")
    return {"score": row["total"], "execution_time": row["seconds"], "output": output,
            "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}


def result_name(file):
    """The Gradescope result's name of a submission (``file``: its path in SUBMISSIONS)."""
    return pathlib.Path(file.replace("/", "__")).stem + ".json"


def write_gradescope(rows, folder):  # one NAME.json per submission
    folder.mkdir(parents=True, exist_ok=True)
    for row in rows:
        path = folder / result_name(row["file"])
        path.write_text(json.dumps(gradescope_results(row), indent=1) + "\n",
                        encoding="utf-8")


def written_answer(nb, number):
    """The text of the cells tagged ``answer-ex<number>`` of a notebook, or None."""
    texts = [c.source for c in nb.cells if isinstance(c.get("source"), str)
             and isinstance(c.get("metadata", {}).get("tags"), list)
             and f"answer-ex{number}" in c["metadata"]["tags"]]
    text = "\n\n".join(t.strip() for t in texts).strip()
    return text or None


def write_written(rows, chapter, folder, roster=None):
    """One Markdown page per written part (an exercise with a rubric) of each notebook
    handed in: ``folder/NN_exK.md``, every counted submission's answer beside the rubric."""
    for number, notebook in sorted(chapter.items()):
        handed = sorted((r for r in rows if r["notebook"] == notebook.path.name
                         and r["counted"] == "yes"), key=lambda r: r["student_id"])
        for exercise in (e for e in notebook.exercises if e.rubric and handed):
            lines = [f"# Notebook {number}, exercise {exercise.number}: the written part", "",
                     exercise.open_part or "The whole exercise is marked by hand.", "",
                     f"Rubric ({book_count(exercise.rubric_points)} by hand):", *[
                         f"- {book_count(p)}: {c}" for p, c in exercise.rubric], "",
                     f"Marks go in MARKS as id,notebook,exercise,points[,note]: "
                     f"`ID,{number},{exercise.number},POINTS`.", ""]
            for row in handed:
                name = (roster or {}).get(row["student_id"], "")
                text = row.get("written", {}).get(exercise.number)
                lines += [f"## {row['student_id']}" + (f" ({name})" if name else "")
                          + f": {row['file']}", ""]
                if text is None:
                    lines += ["no written answer", ""]
                    continue
                text = "".join(ch for ch in text[:ANSWER_LIMIT]
                               if ch in "\n\t" or ch.isprintable())
                fence = "~" * max(3, 1 + max(map(len, re.findall("~+", text)), default=0))
                lines += [fence + "text", text, fence, ""]
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{number}_ex{exercise.number}.md").write_text("\n".join(lines),
                                                                     encoding="utf-8")


def book_count(points):
    return f"{points:g} point" + ("" if points == 1 else "s")


# --- the command line -----------------------------------------------------------------------

def output_paths(out):
    """Where a run with ``--out OUT`` writes: OUT, roster.csv, gradescope/ and written/
    beside it."""
    return out, out.with_name("roster.csv"), out.parent / "gradescope", out.parent / "written"


def check_outputs(folder, out, roster=None, marks=None):
    """Raise UsageError, naming both paths, if a file the run writes is one it reads (the
    roster, the marks, a submission), lies in SUBMISSIONS (resolved) or is OUT named as the
    roster."""
    out, students, gradescope, written = output_paths(out)
    paths = submission_files(folder)
    writes = [(out, "OUT"), (partial_of(out), "the temporary file of OUT"),
              (students, "the roster it writes beside OUT"),
              (partial_of(students), "the temporary file of the roster it writes"),
              (gradescope, "the folder of Gradescope results it writes beside OUT"),
              *[(gradescope / result_name(file_name(p, folder)), "a Gradescope result it "
                 "writes") for p in paths], (written, "the folder of written answers it "
                                             "writes beside OUT")]
    reads = {p.resolve(): f"a submission ({p})" for p in paths}
    if roster:
        reads[pathlib.Path(roster).resolve()] = f"ROSTER, the roster it reads ({roster})"
    if marks:
        reads[pathlib.Path(marks).resolve()] = f"MARKS, the hand marks it reads ({marks})"
    for path, what in writes:
        where, advice = path.resolve(), ("choose another OUT" if path == out
                                         else "choose an OUT in another folder")
        if where in reads:
            raise UsageError(f"{what} ({path}) would overwrite {reads[where]}: {advice}")
        if where.is_relative_to(folder.resolve()):
            raise UsageError(f"{what} ({path}) would be written into SUBMISSIONS "
                             f"({folder}): {advice}")
    if out.name == students.name:
        raise UsageError(f"OUT ({out}) cannot be named {students.name}: the roster of one "
                         "row per student is written beside OUT under that name")


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="grade.py", description="Grade a class's exercise notebooks (see "
        "course/README.md).")
    parser.add_argument("submissions", metavar="SUBMISSIONS",
                        help="folder holding one .ipynb file per submission")
    parser.add_argument("--out", default=str(DEFAULT_OUT), metavar="FILE",
                        help="the grades CSV (default build/grades/grades.csv); roster.csv and "
                        "Gradescope results (gradescope/) go beside it, never over "
                        "SUBMISSIONS or ROSTER")
    parser.add_argument("--jobs", type=int, default=1, help="submissions graded at once")
    for name, kind, what in (
            ("cell_timeout", float, "seconds a cell may run before it is interrupted"),
            ("timeout", float, "seconds a submission may take before it is stopped"),
            ("memory_mb", int, "memory (data segment) of each process, MiB"),
            ("processes", int, "processes and threads a submission may run")):
        parser.add_argument("--" + name.replace("_", "-"), type=kind, default=LIMITS[name],
                            help=what + " (default %(default)s)")
    parser.add_argument("--isolation", choices=("auto", "bwrap", "none"), default="auto",
                        help="bwrap: require the sandbox; none: run without it (not safe)")
    parser.add_argument("--roster", metavar="CSV", default=None,
                        help="the class roster: a CSV with an id column; a file whose "
                        "ID__name.ipynb id is not on it is graded on nothing")
    parser.add_argument("--marks", metavar="CSV", default=None,
                        help="hand marks of the written parts: a CSV with the columns id, "
                        "notebook, exercise, points (and optionally note)")
    parser.add_argument("--weights", metavar="NN=W,...", default="",
                        help="weights of the notebooks in the roster's totals, 10=2,09=0.5 "
                        "(default 1 each)")
    parser.add_argument("--book", action="store_true",
                        help="grade every file on the book's values (a class taught from "
                        "the public book, not the student edition); no ids")
    args = parser.parse_args(argv)
    for name in ("roster", "marks"):
        if args.book and getattr(args, name):
            raise UsageError(f"--book grades without ids, so it takes no --{name}")
        if getattr(args, name) and not pathlib.Path(getattr(args, name)).is_file():
            raise UsageError(f"--{name} must name a CSV file, got {getattr(args, name)}")
    folder = pathlib.Path(args.submissions)
    if not folder.is_dir():
        raise UsageError(f"SUBMISSIONS must be a folder of .ipynb files: {folder} is "
                         f"{'a file' if folder.exists() else 'missing'}")
    out = pathlib.Path(args.out)
    check_outputs(folder, out, args.roster, args.marks)
    if out.is_dir() or out.suffix.lower() != ".csv":
        raise UsageError(f"--out (OUT) must name a .csv file, got {out}")
    for name in ("jobs", "cell_timeout", "timeout", "memory_mb", "processes"):
        if not getattr(args, name) > 0:
            raise UsageError(f"--{name.replace('_', '-')} must be positive, got "
                             f"{getattr(args, name)}")
    if args.memory_mb < 1024:
        raise UsageError(f"--memory-mb must be at least 1024 (importing torch needs about "
                         f"800 MiB), got {args.memory_mb}")
    options = Options(out, args.jobs, args.isolation, roster=args.roster, book=args.book,
                      **{name: getattr(args, name) for name in LIMITS})
    roster = read_roster(args.roster) if args.roster else None  # bad: an error before grading
    if args.marks:
        options.chapter = load_chapter()
        known = set(roster or ()) | {find_id(p, roster, folder)[0]
                                     for p in submission_files(folder)}
        options.marks = read_marks(args.marks, options.chapter, known - {None})
    if args.weights:
        options.chapter = options.chapter or load_chapter()
        options.weights = read_weights(args.weights, options.chapter)
    return folder, options


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
              "students' code has the network and sees the system, " + (
                  f"each kernel as a user of its own (uid {KERNEL_UID_BASE} and up)"
                  if options.kernel_user else "with your rights") + ", under time and "
              "memory limits. Install bubblewrap, or grade in a container or VM "
              "(course/README.md).", file=sys.stderr)
    run(folder, options)
    return 0


def run(folder, options):
    """Grade the class and write the grades, roster.csv, Gradescope results and written/."""
    start = time.monotonic()
    chapter = options.chapter or load_chapter()
    rows = grade_class(folder, options, chapter)
    out, students, gradescope, written = output_paths(options.out)
    roster = read_roster(options.roster) if options.roster else None
    write_csv(rows, out)
    write_gradescope(rows, gradescope)
    write_roster(rows, students, roster, options.marks, {
        n: sum(e.rubric_points for e in nb.exercises) for n, nb in chapter.items()}
        if options.marks else None, options.weights)
    write_written(rows, chapter, written, roster)
    print(f"{len(rows)} submissions graded in {time.monotonic() - start:.0f} s: "
          f"{out}, {students} (one row per student), {gradescope}/ and {written}/ (the "
          "written answers beside their rubric)")
    no_id = sum(row["status"] == "no id" for row in rows)
    if no_id:
        print(f"{no_id} file{'s' if no_id > 1 else ''} had no student id and "
              f"{'were' if no_id > 1 else 'was'} graded on nothing (grades.csv says why): "
              f"the names understood are {NAMES_UNDERSTOOD} (course/README.md); or grade "
              "on the book's values with --book.", file=sys.stderr)
    return rows


if __name__ == "__main__":
    sys.exit(main())
